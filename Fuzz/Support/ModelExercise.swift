import Foundation

/// Compiles a fuzzed model with random parameters and runs it, checking what must hold for
/// any model: outputs of the declared shapes, the same bits for the same input twice (no state
/// leaks between runs through the reused workspace), and a batch of two agreeing with two
/// batches of one.
enum ModelExercise {
    /// Models small enough to compile and run thousands of times a second.
    static func isSmall(_ model: Model) -> Bool {
        model.parameterCount <= 1 << 18 && model.activationBytesPerImage <= 1 << 22 && model.macs <= 1 << 22
            && model.inputShapes.allSatisfy { $0.count <= 1 << 14 }
    }

    static func run(_ model: Model, seed: UInt64, validate: Bool = false) {
        guard isSmall(model) else { return }
        do {
            try model.compile(validateParameters: validate, from: RandomParameterSource(seed: seed))
        } catch let error as AnvilError {
            fuzzLog("compile refused: \(error)")
            return
        } catch {
            fuzzFailure("compile threw a non-Anvil error: \(error)")
        }
        var state = seed | 1
        func next() -> Float {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int(state >> 40) - (1 << 23)) / Float(1 << 22)
        }
        let single = model.inputShapes.map { shape in (0 ..< shape.count).map { _ in next() } }
        let second = model.inputShapes.map { shape in (0 ..< shape.count).map { _ in next() } }
        do {
            let one = try model.predict(zip(model.inputShapes, single).map { try Tensor(batch: 1, shape: $0, values: $1) })
            check(one, model: model, batch: 1)
            let again = try model.predict(zip(model.inputShapes, single).map { try Tensor(batch: 1, shape: $0, values: $1) })
            for (a, b) in zip(one, again) where a.values.map(\.bitPattern) != b.values.map(\.bitPattern) {
                fuzzFailure("the same input gave different outputs on a second run")
            }
            let two = try model.predict(model.inputShapes.indices.map {
                try Tensor(batch: 2, shape: model.inputShapes[$0], values: single[$0] + second[$0])
            })
            check(two, model: model, batch: 2)
            fuzzLog("ran: outputs \(model.outputShapes)")
            for (alone, together) in zip(one, two) {
                let first = Array(together.image(0))
                guard alone.values.allSatisfy(\.isFinite), first.allSatisfy(\.isFinite) else { continue }
                let scale = alone.values.map(abs).max() ?? 0
                let worst = zip(alone.values, first).map { abs($0 - $1) }.max() ?? 0
                if worst > 1e-3 * (1 + scale) {
                    fuzzFailure("batch of 2 differs from batch of 1 by \(worst) (outputs up to \(scale))")
                }
            }
        } catch let error as AnvilError {
            fuzzFailure("predict on a compiled model with valid inputs threw: \(error)")
        } catch {
            fuzzFailure("predict threw a non-Anvil error: \(error)")
        }
    }

    private static func check(_ outputs: [Tensor], model: Model, batch: Int) {
        guard outputs.count == model.outputShapes.count else { fuzzFailure("wrong number of outputs") }
        for (tensor, shape) in zip(outputs, model.outputShapes)
        where tensor.shape != shape || tensor.batch != batch || tensor.values.count != batch * shape.count {
            fuzzFailure("output \(tensor.batch) x \(tensor.shape) (\(tensor.values.count) values), expected \(batch) x \(shape)")
        }
    }

    /// A model written as a model file and read back has the same layers and shapes.
    static func roundTrip(_ model: Model) {
        let json: JSONValue
        do {
            json = try model.modelFileJSON()
        } catch let error as AnvilError where error.code == .invalidOption && error.message.contains("NaN or infinity") {
            return  // a NaN or infinite activation constant: JSON cannot hold it, and the writer says so
        } catch {
            fuzzFailure("a model of built-in layers cannot be written: \(error)")
        }
        let text = json.serialized()
        do {
            let parsed = try JSONValue.parse(Data(text.utf8), source: "round trip")
            let reread = try ModelFile(json: parsed, source: "round trip", directory: FuzzScratch.directory).model
            guard reread.layers.map(\.name) == model.layers.map(\.name),
                  reread.layers.map(\.outputShape) == model.layers.map(\.outputShape),
                  reread.inputShapes == model.inputShapes, reread.outputShapes == model.outputShapes,
                  reread.parameterCount == model.parameterCount else {
                fuzzFailure("the model file written for a model describes a different model:\n\(text)")
            }
        } catch {
            fuzzFailure("the model file written for a model does not load: \(error)\n\(text)")
        }
    }
}
