import Anvil
import Foundation

/// `POST /v2/models/{name}/infer`: the JSON request (and the binary tensor data after it) read
/// into ``WireInput``s, run by ``ServedModel/infer(started:decode:encode:)``, and the answer
/// written as JSON, with binary outputs after it when asked.
extension ServedModel {
    /// A finished answer: the body, and the JSON part's length when binary data follows it.
    struct InferenceAnswer: Sendable {
        /// The response body.
        var body: Data
        /// The JSON header's length when the body holds binary outputs after it.
        var jsonLength: Int?
    }

    /// Answers a request that arrived at `started`, whose JSON part is `json` and binary part
    /// `binary`; throws ``ProtocolError`` (400) for anything that does not match the model.
    func infer(json: Data, binary: Data, started: ContinuousClock.Instant = .now) async throws -> InferenceAnswer {
        var request: InferenceRequest?
        var binaryFlags: [Bool] = []
        return try await infer(started: started, decode: {
            let decoded: InferenceRequest
            do {
                let (scanned, arrays) = TensorDataScanner.scan(json)
                let decoder = JSONDecoder()
                decoder.userInfo[TensorDataScanner.userInfoKey] = arrays
                decoded = try decoder.decode(InferenceRequest.self, from: scanned)
            } catch let error as DecodingError {
                throw ProtocolError.badRequest("malformed inference request: \(error.protocolMessage)")
            }
            request = decoded
            let (inputs, binaryUsed) = try Self.wireInputs(decoded, binary: binary)
            guard binaryUsed == binary.count else {
                // An input that does not fit its shape names the fault better: its error first.
                _ = try tensors(inputs)
                throw ProtocolError.badRequest("the body has \(binary.count) bytes of binary data after the JSON; the inputs' binary_data_size add up to \(binaryUsed)")
            }
            let indices = try outputIndices(decoded.outputs?.map(\.name))
            let allBinary = decoded.parameters?.binaryDataOutput ?? false
            binaryFlags = decoded.outputs?.map { $0.parameters?.binaryData ?? allBinary } ?? indices.map { _ in allBinary }
            return (inputs, indices)
        }, encode: { outputs in
            try Self.answer(modelName: name, id: request?.id, outputs: outputs, binary: binaryFlags)
        })
    }

    /// The request's inputs, each with its JSON data or its slice of the binary part, and how many
    /// bytes of the binary part they take.
    private static func wireInputs(_ request: InferenceRequest, binary: Data) throws -> ([WireInput], Int) {
        // Binary parts follow the JSON in the order of the request's inputs.
        var offset = 0
        let inputs = try request.inputs.map { input -> WireInput in
            let values: WireInput.Values
            switch (input.data, input.parameters?.binaryDataSize) {
            case (let data?, nil):
                values = .json(data)
            case (nil, let size?):
                guard size >= 0, size <= binary.count - offset else {
                    throw ProtocolError.badRequest("input '\(input.name)': binary_data_size \(size) runs past the \(binary.count) bytes of binary data after the JSON")
                }
                values = .bytes(binary.dropFirst(offset).prefix(size), size: "binary_data_size is \(size)")
                offset += size
            case (_?, _?):
                throw ProtocolError.badRequest("input '\(input.name)' has both data and binary_data_size; give one")
            case (nil, nil):
                throw ProtocolError.badRequest("input '\(input.name)' has neither data nor parameters.binary_data_size")
            }
            return WireInput(name: input.name, datatype: input.datatype, shape: input.shape, values: values)
        }
        return (inputs, offset)
    }

    /// The response body for `outputs`, each in its own datatype; those whose `binary` flag is
    /// set go after the JSON as little-endian bytes of that datatype.
    private static func answer(modelName: String, id: String?, outputs: [WireOutput], binary flags: [Bool]) throws -> InferenceAnswer {
        var binary = Data()
        var tensors: [OutputTensor] = []
        for (output, asBinary) in zip(outputs, flags) {
            let datatype = output.datatype.rawValue
            if asBinary {
                BinaryTensorData.append(output.elements, as: output.datatype, to: &binary)
                tensors.append(OutputTensor(name: output.name, shape: output.shape, datatype: datatype,
                                            parameters: ProtocolParameters(binaryDataSize: output.elements.count * output.datatype.byteCount)))
            } else {
                tensors.append(OutputTensor(name: output.name, shape: output.shape, datatype: datatype, data: TensorData(output.elements)))
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // JSON has no NaN or infinity; the protocol's clients (Triton's, KServe's) read these.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        var body = try encoder.encode(InferenceResponse(modelName: modelName, id: id, outputs: tensors))
        guard flags.contains(true) else { return InferenceAnswer(body: body, jsonLength: nil) }
        let jsonLength = body.count
        body.append(binary)
        return InferenceAnswer(body: body, jsonLength: jsonLength)
    }
}
