import Anvil
import Foundation

/// The part of inference both protocols share: inputs checked against the model, run through the
/// runner, outputs in the model's wire layout, and every request counted in the model's
/// ``InferenceStatistics``.
extension ServedModel {
    /// Runs one request that arrived at `started`: `decode` reads the protocol's request into
    /// inputs and the indices of the outputs wanted, `encode` writes the protocol's answer. Throws
    /// ``ProtocolError`` (400) for anything that does not match the model; every outcome is
    /// counted in ``statistics``.
    func infer<Answer>(started: ContinuousClock.Instant, decode: () throws -> (inputs: [WireInput], outputs: [Int]),
                       encode: ([WireOutput]) throws -> Answer) async throws -> Answer {
        do {
            let (inputs, wanted) = try decode()
            let tensors = try tensors(inputs)
            let decoded = ContinuousClock.now
            let timed: Runner.TimedOutputs
            do {
                timed = try await runner.timedPrediction(for: tensors)
            } catch let error as AnvilError where error.code == .invalidInput || error.code == .invalidShape {
                throw ProtocolError.badRequest("model '\(name)': \(error.message)")
            }
            let ran = ContinuousClock.now
            let outputs = wanted.map { index in
                let output = timed.outputs[index]
                return WireOutput(name: model.outputNames[index], datatype: TensorDatatype(output.elementType),
                                  shape: [output.batch] + layout.dimensions(of: output.shape), elements: wireElements(of: output))
            }
            let answer = try encode(outputs)
            let end = ContinuousClock.now
            statistics.succeeded(.init(total: end - started, input: decoded - started, queue: timed.queued, infer: timed.computed,
                                       output: end - ran, images: tensors.first?.batch ?? 0))
            return answer
        } catch {
            statistics.failed(after: ContinuousClock.now - started)
            throw error
        }
    }

    /// The indices of the outputs named in `names` (every output, in the model's order, for nil).
    func outputIndices(_ names: [String]?) throws -> [Int] {
        guard let names else { return Array(model.outputNames.indices) }
        var seen = Set<String>()
        return try names.map { outputName in
            guard let index = model.outputNames.firstIndex(of: outputName) else {
                throw ProtocolError.badRequest("model '\(name)' has no output '\(outputName)'; its outputs: \(model.outputNames.joined(separator: ", "))")
            }
            guard seen.insert(outputName).inserted else { throw ProtocolError.badRequest("output '\(outputName)' is requested twice") }
            return index
        }
    }

    /// The model's inputs from the request's, in the model's order, channels-last.
    func tensors(_ inputs: [WireInput]) throws -> [Tensor] {
        var byName: [String: WireInput] = [:]
        for input in inputs {
            guard model.inputNames.contains(input.name) else {
                throw ProtocolError.badRequest("model '\(name)' has no input '\(input.name)'; its inputs: \(model.inputNames.joined(separator: ", "))")
            }
            guard byName[input.name] == nil else { throw ProtocolError.badRequest("input '\(input.name)' is given twice") }
            byName[input.name] = input
        }
        var batch: Int?
        return try model.inputNames.enumerated().map { position, inputName in
            guard let input = byName[inputName] else {
                let given = inputs.map { "'\($0.name)'" }.joined(separator: ", ")
                throw ProtocolError.badRequest("model '\(name)' needs input '\(inputName)'; the request gives \(given.isEmpty ? "none" : given)")
            }
            let tensor = try self.tensor(input, declared: model.openInputShapes[position])
            if let batch, batch != tensor.batch {
                throw ProtocolError.badRequest("input '\(inputName)' has a batch of \(tensor.batch), another input \(batch); every input needs the same")
            }
            batch = tensor.batch
            return tensor
        }
    }

    /// One input, checked against its declared datatype and shape and turned into a channels-last
    /// tensor of the declared element type.
    private func tensor(_ input: WireInput, declared: OpenShape) throws -> Tensor {
        let label = "input '\(input.name)'"
        // Triton's convention: a datatype other than the model input's is refused, never converted.
        let datatype = TensorDatatype(declared.elementType)
        guard input.datatype == datatype.rawValue else {
            throw ProtocolError.badRequest("\(label) has datatype '\(input.datatype)'; model '\(name)' takes \(datatype)")
        }
        let expected = layout.dimensions(of: declared)
        let expectedText = "[" + (["N"] + expected.map { $0.map(String.init) ?? "?" }).joined(separator: ", ") + "]"
        guard input.shape.count == expected.count + 1 else {
            throw ProtocolError.badRequest("\(label) has shape \(input.shape); model '\(name)' takes \(expectedText) (\(expected.count + 1) axes, batch first, \(layout.axesName(rank: declared.rank) ?? "row-major"))")
        }
        guard input.shape.allSatisfy({ $0 >= 1 }) else {
            throw ProtocolError.badRequest("\(label) has shape \(input.shape); every dimension must be at least 1")
        }
        for (axis, dimension) in expected.enumerated() {
            if let dimension, input.shape[axis + 1] != dimension {
                throw ProtocolError.badRequest("\(label) has shape \(input.shape); model '\(name)' takes \(expectedText)\(layout.axesName(rank: declared.rank).map { " (\($0))" } ?? "")")
            }
        }
        var count = 1
        for dimension in input.shape {
            let (product, overflow) = count.multipliedReportingOverflow(by: dimension)
            guard !overflow, product <= Int(Int32.max) else {
                throw ProtocolError.badRequest("\(label) has shape \(input.shape): too many values")
            }
            count = product
        }
        let elements: WireElements
        switch input.values {
        case .json(let data):
            if data.nesting.count > 1 {
                guard data.nesting == input.shape else {
                    throw ProtocolError.badRequest("\(label): nested data of shape \(data.nesting) does not match its shape \(input.shape)")
                }
            }
            guard data.count == count else {
                throw ProtocolError.badRequest("\(label) has shape \(input.shape) (\(count) values) but its data holds \(data.count)")
            }
            elements = WireElements(data.elements)
        case .contents(let read):
            elements = try read(datatype, count)
            guard elements.count == count else {
                throw ProtocolError.badRequest("\(label) has shape \(input.shape) (\(count) values) but its contents hold \(elements.count)")
            }
        case .bytes(let bytes, let size):
            guard bytes.count == count * datatype.byteCount else {
                throw ProtocolError.badRequest("\(label) has shape \(input.shape) (\(count) \(datatype) values, \(count * datatype.byteCount) bytes) but \(size)")
            }
            elements = BinaryTensorData.elements(bytes, as: datatype)
        }
        let checked = try elements.checked(as: datatype, label: label)
        let batch = input.shape[0]
        do {
            let shape = try layout.shape(fromDimensions: Array(input.shape.dropFirst())).with(elementType: declared.elementType)
            switch checked {
            case .integers(let integers):
                return try Tensor(batch: batch, shape: shape, integers: layout.channelsLastValues(fromWire: integers, batch: batch, shape: shape))
            case .truths(let truths):
                return try Tensor(batch: batch, shape: shape, truths: layout.channelsLastValues(fromWire: truths, batch: batch, shape: shape))
            case .floats, .numbers:
                return try Tensor(batch: batch, shape: shape, values: layout.channelsLastValues(fromWire: checked.floatValues, batch: batch, shape: shape))
            }
        } catch let error as AnvilError {
            throw ProtocolError.badRequest("\(label): \(error.message)")
        }
    }

    /// An output's values in the wire layout, read as its element type.
    private func wireElements(of output: Tensor) -> TensorData.Elements {
        switch output.elementType {
        case .float32, .bfloat16: .floats(layout.wireValues(fromChannelsLast: output.values, batch: output.batch, shape: output.shape))
        case .bool: .truths(layout.wireValues(fromChannelsLast: output.truths, batch: output.batch, shape: output.shape))
        default: .integers(layout.wireValues(fromChannelsLast: output.integers, batch: output.batch, shape: output.shape))
        }
    }
}
