import Foundation

/// libFuzzer target: model-file JSON. Any bytes either load as a model or throw an
/// `AnvilError`. A model that loads is written back out and must read back the same; a small
/// one is compiled with the parameters its file names (in the scratch directory: `blob.bin`,
/// `weights/`, `empty/`) and then with random ones, and run.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    let file: ModelFile
    do {
        let json = try JSONValue.parse(bytes, source: "fuzz.json")
        file = try ModelFile(json: json, source: "fuzz.json", directory: FuzzScratch.directory,
                             loading: size % 2 == 0 ? .memoryMapped : .copied)
    } catch let error as AnvilError {
        fuzzLog("refused: \(error)")
        return 0
    } catch {
        fuzzFailure("ModelFile threw a non-Anvil error: \(error)")
    }
    fuzzLog("loaded: \(file.model.layers.count) layers, \(file.model.parameterCount) parameters")
    ModelExercise.roundTrip(file.model)
    if ModelExercise.isSmall(file.model) {
        do {
            let model = try file.compiledModel(validateParameters: size % 3 == 0)
            let inputs = try model.inputShapes.map { try Tensor(batch: 1, shape: $0, values: [Float](repeating: 0.5, count: $0.count)) }
            let outputs = try model.predict(inputs)
            guard outputs.map(\.shape) == model.outputShapes else { fuzzFailure("output shapes differ from the model's") }
            fuzzLog("ran with the file's parameters")
        } catch let error as AnvilError {
            fuzzLog("file parameters refused: \(error)")
        } catch {
            fuzzFailure("non-Anvil error: \(error)")
        }
    }
    ModelExercise.run(file.model, seed: UInt64(size))
    return 0
}
