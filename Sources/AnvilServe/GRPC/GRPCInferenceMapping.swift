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
            } else if input.datatype != "FP32" {
                // The datatype check names the fault better than any contents check.
                values = .numbers(TensorData([]))
            } else if let wrong = typed.first(where: { $0 != "fp32_contents" }) {
                throw ProtocolError.badRequest("\(label) is FP32 but gives its values in contents.\(wrong); FP32 values go in contents.fp32_contents")
            } else if typed.isEmpty {
                throw ProtocolError.badRequest("\(label) has no values: neither contents.fp32_contents nor raw_input_contents")
            } else {
                values = .numbers(TensorData(input.contents.fp32Contents))
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

    /// The answer: each output's name, datatype and shape, its bytes in `raw_output_contents`
    /// (as Triton answers, whatever form the inputs came in).
    static func response(modelName: String, id: String, outputs: [WireOutput]) -> Inference_ModelInferResponse {
        var response = Inference_ModelInferResponse()
        response.modelName = modelName
        response.id = id
        response.outputs = outputs.map { output in
            var tensor = Inference_ModelInferResponse.InferOutputTensor()
            tensor.name = output.name
            tensor.datatype = "FP32"
            tensor.shape = output.shape.map(Int64.init)
            return tensor
        }
        response.rawOutputContents = outputs.map { output in
            var bytes = Data()
            BinaryTensorData.append(output.values, to: &bytes)
            return bytes
        }
        return response
    }
}
