import AnvilONNX
import Foundation

/// libFuzzer target: `.onnx` bytes (a serialised ModelProto). Any bytes either convert or throw
/// an `ONNXImportError` (an `AnvilError` once converted, when the model file is built); never a
/// crash, a hang or another error. External data resolves against a scratch folder holding one
/// 4 KiB file, `w.bin`, so locations, offsets and lengths are exercised. A small converted model
/// with fixed input sizes is compiled with its own parameters and run on zeros.
///
/// Built by Scripts/dev/fuzz.sh (target `onnx`): SwiftPM builds AnvilONNX and its dependencies
/// instrumented (`--sanitize=fuzzer --sanitize=address`), then this file is linked against them.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzONNX(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    let conversion: ONNXConversion
    do {
        conversion = try ONNXConversion(serialized: bytes, directory: ONNXFuzzScratch.directory)
    } catch is ONNXImportError {
        return 0
    } catch let error as AnvilError {
        // The model-file JSON the converter wrote is checked again by ModelFile: a layer option
        // Anvil refuses is an AnvilError there, which is a clean refusal too.
        _ = error
        return 0
    } catch {
        fatalError("ONNXConversion threw a non-ONNX, non-Anvil error: \(error)")
    }
    let parameters = conversion.tensors.reduce(0) { $0 + $1.values.count }
    guard parameters < 1 << 20 else { return 0 }
    do {
        let file = try conversion.modelFile()
        let model = file.model
        let fixed = model.openInputShapes.allSatisfy { $0.dimensions.allSatisfy { $0 != nil } }
        guard fixed, model.inputShapes.allSatisfy({ $0.count <= 1 << 14 }), model.layers.count <= 64 else { return 0 }
        let compiled = try Model(compiling: file)
        let inputs = try compiled.inputShapes.map { try Tensor(batch: 1, shape: $0, values: [Float](repeating: 0.25, count: $0.count)) }
        let outputs = try compiled.predict(inputs)
        guard outputs.map(\.shape) == compiled.outputShapes else { fatalError("output shapes differ from the model's") }
    } catch is AnvilError {
    } catch is ONNXImportError {
    } catch {
        fatalError("non-Anvil error building or running the converted model: \(error)")
    }
    return 0
}

/// The scratch folder external data is read from.
enum ONNXFuzzScratch {
    /// A folder with `w.bin` (4 KiB of float 0.5), created once.
    static let directory: URL = {
        let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("anvil-onnx-fuzz-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let values = [Float](repeating: 0.5, count: 1024)
        try? values.withUnsafeBytes { Data($0) }.write(to: url.appendingPathComponent("w.bin"))
        return url
    }()
}
