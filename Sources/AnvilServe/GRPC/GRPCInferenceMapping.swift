import Foundation

/// The gRPC messages of inference read into, and written from, the protocol-neutral
/// ``WireInput`` and ``WireOutput``.
enum GRPCInferenceMapping {
    /// The inputs of `request`, each with its `contents` or its `raw_input_contents` entry;
    /// throws ``ProtocolError`` (INVALID_ARGUMENT) naming the field at fault.
    static func inputs(of request: Inference_ModelInferRequest) throws -> [WireInput] {
        let raw = request.rawInputContents
        guard raw.isEmpty || raw.count == request.inputs.count else {
            throw ProtocolError.badRequest("raw_input_contents has \(raw.count) entries for \(request.inputs.count) inputs; give one per input, in the order of inputs, or none")
        }
        return try request.inputs.enumerated().map { index, input in
            let label = "input '\(input.name)'"
            let shape = input.shape.map { Int(truncatingIfNeeded: $0) }
            let typed = typedFields(of: input.contents)
            let values: WireInput.Values
            if !raw.isEmpty {
                guard typed.isEmpty else {
                    throw ProtocolError.badRequest("\(label) has both contents.\(typed[0]) and raw_input_contents[\(index)]; give one")
                }
                values = .bytes(raw[index], size: "raw_input_contents[\(index)] holds \(raw[index].count) bytes")
            } else {
                // Read once the datatype is known to be the model's, from the field it names.
                let contents = input.contents
                values = .contents { datatype, count in
                    guard let field = datatype.contentsField else {
                        throw ProtocolError.badRequest("\(label) is \(datatype), which has no contents field; give its values in raw_input_contents")
                    }
                    if let wrong = typed.first(where: { $0 != field }) {
                        throw ProtocolError.badRequest("\(label) is \(datatype) but gives its values in contents.\(wrong); \(datatype) values go in contents.\(field)")
                    }
                    guard !typed.isEmpty else {
                        throw ProtocolError.badRequest("\(label) has no values: neither contents.\(field) nor raw_input_contents")
                    }
                    let elements = datatype.elements(of: contents)
                    guard elements.count == count else {
                        throw ProtocolError.badRequest("\(label) has shape \(shape) (\(count) values) but contents.\(field) holds \(elements.count)")
                    }
                    return elements
                }
            }
            return WireInput(name: input.name, datatype: input.datatype, shape: shape, values: values)
        }
    }

    /// The names of the typed fields of `contents` that hold values.
    private static func typedFields(of contents: Inference_InferTensorContents) -> [String] {
        let counts: [(String, Int)] = [
            ("bool_contents", contents.boolContents.count), ("int_contents", contents.intContents.count),
            ("int64_contents", contents.int64Contents.count), ("uint_contents", contents.uintContents.count),
            ("uint64_contents", contents.uint64Contents.count), ("fp32_contents", contents.fp32Contents.count),
            ("fp64_contents", contents.fp64Contents.count), ("bytes_contents", contents.bytesContents.count),
        ]
        return counts.filter { $0.1 > 0 }.map(\.0)
    }

    /// The answer: each output's name, datatype and shape, and its values in the form the request
    /// used (KServe's convention): little-endian bytes of its datatype in `raw_output_contents`
    /// for a request that gave `raw_input_contents` (as tritonclient and perf_analyzer do), else
    /// the datatype's typed `contents` field (`int64_contents` for INT64, `bool_contents` for BOOL, ...).
    static func response(modelName: String, id: String, outputs: [WireOutput], raw: Bool) -> Inference_ModelInferResponse {
        // BF16 has no contents field: only raw contents can carry it.
        let raw = raw || outputs.contains { $0.datatype.contentsField == nil }
        var response = Inference_ModelInferResponse()
        response.modelName = modelName
        response.id = id
        response.outputs = outputs.map { output in
            var tensor = Inference_ModelInferResponse.InferOutputTensor()
            tensor.name = output.name
            tensor.datatype = output.datatype.rawValue
            tensor.shape = output.shape.map(Int64.init)
            if !raw { tensor.contents = output.datatype.contents(output.elements) }
            return tensor
        }
        if raw {
            response.rawOutputContents = outputs.map { output in
                var bytes = Data()
                BinaryTensorData.append(output.elements, as: output.datatype, to: &bytes)
                return bytes
            }
        }
        return response
    }
}
