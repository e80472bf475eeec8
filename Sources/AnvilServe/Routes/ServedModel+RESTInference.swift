import Anvil
import Foundation

/// `POST /v2/models/{name}/infer`: a request's tensors checked against the model, run through the
/// runner, and the outputs written back in the model's wire layout.
extension ServedModel {
    /// A finished answer: the body, and the JSON part's length when binary data follows it.
    struct InferenceAnswer: Sendable {
        /// The response body.
        var body: Data
        /// The JSON header's length when the body holds binary outputs after it.
        var jsonLength: Int?
    }

    /// Answers a request whose JSON part is `json` and binary part `binary`; throws
    /// ``ProtocolError`` (400) for anything that does not match the model.
    func infer(json: Data, binary: Data) async throws -> InferenceAnswer {
        let request: InferenceRequest
        do {
            let (scanned, arrays) = TensorDataScanner.scan(json)
            let decoder = JSONDecoder()
            decoder.userInfo[TensorDataScanner.userInfoKey] = arrays
            request = try decoder.decode(InferenceRequest.self, from: scanned)
        } catch let error as DecodingError {
            throw ProtocolError.badRequest("malformed inference request: \(error.protocolMessage)")
        }
        let inputs = try tensors(of: request, binary: binary)
        let wanted = try requestedOutputs(request)
        let outputs: [Tensor]
        do {
            outputs = try await runner.prediction(for: inputs)
        } catch let error as AnvilError where error.code == .invalidInput || error.code == .invalidShape {
            throw ProtocolError.badRequest("model '\(name)': \(error.message)")
        }
        return try answer(request, outputs: outputs, wanted: wanted)
    }

    /// The model's inputs from the request, in the model's order, channels-last.
    private func tensors(of request: InferenceRequest, binary: Data) throws -> [Tensor] {
        var byName: [String: (index: Int, tensor: InputTensor)] = [:]
        for (index, input) in request.inputs.enumerated() {
            guard model.inputNames.contains(input.name) else {
                throw ProtocolError.badRequest("model '\(name)' has no input '\(input.name)'; its inputs: \(model.inputNames.joined(separator: ", "))")
            }
            guard byName[input.name] == nil else { throw ProtocolError.badRequest("input '\(input.name)' is given twice") }
            byName[input.name] = (index, input)
        }
        // Binary parts follow the JSON in the order of the request's inputs.
        var binaryOffsets: [Int: Int] = [:]
        var offset = 0
        for (index, input) in request.inputs.enumerated() {
            guard let size = input.parameters?.binaryDataSize else { continue }
            guard size >= 0, size <= binary.count - offset else {
                throw ProtocolError.badRequest("input '\(input.name)': binary_data_size \(size) runs past the \(binary.count) bytes of binary data after the JSON")
            }
            binaryOffsets[index] = offset
            offset += size
        }
        var batch: Int?
        let tensors = try model.inputNames.enumerated().map { position, inputName in
            guard let (index, input) = byName[inputName] else {
                let given = request.inputs.map { "'\($0.name)'" }.joined(separator: ", ")
                throw ProtocolError.badRequest("model '\(name)' needs input '\(inputName)'; the request gives \(given.isEmpty ? "none" : given)")
            }
            let tensor = try self.tensor(input, declared: model.openInputShapes[position], binary: binaryOffsets[index].map {
                binary.dropFirst($0).prefix(input.parameters?.binaryDataSize ?? 0)
            })
            if let batch, batch != tensor.batch {
                throw ProtocolError.badRequest("input '\(inputName)' has a batch of \(tensor.batch), another input \(batch); every input needs the same")
            }
            batch = tensor.batch
            return tensor
        }
        guard offset == binary.count else {
            throw ProtocolError.badRequest("the body has \(binary.count) bytes of binary data after the JSON; the inputs' binary_data_size add up to \(offset)")
        }
        return tensors
    }

    /// One input, checked against its declared shape and turned into a channels-last tensor.
    private func tensor(_ input: InputTensor, declared: OpenShape, binary: Data?) throws -> Tensor {
        let label = "input '\(input.name)'"
        guard input.datatype == "FP32" else {
            throw ProtocolError.badRequest("\(label) has datatype '\(input.datatype)'; model '\(name)' takes FP32")
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
        let values: [Float]
        switch (input.data, binary) {
        case (let data?, nil):
            if data.nesting.count > 1 {
                guard data.nesting == input.shape else {
                    throw ProtocolError.badRequest("\(label): nested data of shape \(data.nesting) does not match its shape \(input.shape)")
                }
            }
            guard data.values.count == count else {
                throw ProtocolError.badRequest("\(label) has shape \(input.shape) (\(count) values) but its data holds \(data.values.count)")
            }
            values = data.values
        case (nil, let bytes?):
            guard bytes.count == count * 4 else {
                throw ProtocolError.badRequest("\(label) has shape \(input.shape) (\(count) FP32 values, \(count * 4) bytes) but binary_data_size is \(bytes.count)")
            }
            values = BinaryTensorData.floats(bytes, count: count)
        case (_?, _?):
            throw ProtocolError.badRequest("\(label) has both data and binary_data_size; give one")
        case (nil, nil):
            throw ProtocolError.badRequest("\(label) has neither data nor parameters.binary_data_size")
        }
        let batch = input.shape[0]
        let shape: Shape
        do {
            shape = try layout.shape(fromDimensions: Array(input.shape.dropFirst()))
        } catch let error as AnvilError {
            throw ProtocolError.badRequest("\(label): \(error.message)")
        }
        return try Tensor(batch: batch, shape: shape, values: layout.channelsLastValues(fromWire: values, batch: batch, shape: shape))
    }

    /// The outputs to return (indices into the model's outputs) and whether each goes as binary.
    private func requestedOutputs(_ request: InferenceRequest) throws -> [(index: Int, binary: Bool)] {
        let allBinary = request.parameters?.binaryDataOutput ?? false
        guard let outputs = request.outputs else { return model.outputNames.indices.map { ($0, allBinary) } }
        var seen = Set<String>()
        return try outputs.map { output in
            guard let index = model.outputNames.firstIndex(of: output.name) else {
                throw ProtocolError.badRequest("model '\(name)' has no output '\(output.name)'; its outputs: \(model.outputNames.joined(separator: ", "))")
            }
            guard seen.insert(output.name).inserted else { throw ProtocolError.badRequest("output '\(output.name)' is requested twice") }
            return (index, output.parameters?.binaryData ?? allBinary)
        }
    }

    /// The response body for `outputs` (channels-last), in the model's wire layout.
    private func answer(_ request: InferenceRequest, outputs: [Tensor], wanted: [(index: Int, binary: Bool)]) throws -> InferenceAnswer {
        var binary = Data()
        var tensors: [OutputTensor] = []
        for (index, asBinary) in wanted {
            let output = outputs[index]
            let values = layout.wireValues(fromChannelsLast: output.values, batch: output.batch, shape: output.shape)
            let shape = [output.batch] + layout.dimensions(of: output.shape)
            if asBinary {
                BinaryTensorData.append(values, to: &binary)
                tensors.append(OutputTensor(name: model.outputNames[index], shape: shape,
                                            parameters: ProtocolParameters(binaryDataSize: values.count * 4)))
            } else {
                tensors.append(OutputTensor(name: model.outputNames[index], shape: shape, data: TensorData(values)))
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // JSON has no NaN or infinity; the protocol's clients (Triton's, KServe's) read these.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        var body = try encoder.encode(InferenceResponse(modelName: name, id: request.id, outputs: tensors))
        guard !binary.isEmpty || wanted.contains(where: \.binary) else { return InferenceAnswer(body: body, jsonLength: nil) }
        let jsonLength = body.count
        body.append(binary)
        return InferenceAnswer(body: body, jsonLength: jsonLength)
    }
}
