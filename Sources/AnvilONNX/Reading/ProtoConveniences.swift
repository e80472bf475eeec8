/// Reading the proto's oneofs the way the importer needs them.
extension Onnx_TypeProto {
    /// Whether the type is a tensor type.
    var isTensor: Bool {
        if case .tensorType? = value { return true }
        return false
    }
}

extension Onnx_TensorShapeProto.Dimension {
    /// The dimension's value when it is a number (not a symbolic dim_param or unset).
    var knownValue: Int64? {
        if case .dimValue(let v)? = value { return v }
        return nil
    }
}
