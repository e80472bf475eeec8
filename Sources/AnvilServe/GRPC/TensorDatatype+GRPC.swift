/// A datatype's gRPC forms: the `InferTensorContents` field that holds its values (KServe's
/// table: 8- to 32-bit integers share `int_contents` / `uint_contents`), and Triton's
/// configuration enum.
extension TensorDatatype {
    /// The name of the `contents` field for this datatype's values; `nil` for BF16, which has
    /// none (raw contents only).
    var contentsField: String? {
        switch self {
        case .bool: "bool_contents"
        case .int8, .int16, .int32: "int_contents"
        case .int64: "int64_contents"
        case .uint8, .uint16, .uint32: "uint_contents"
        case .uint64: "uint64_contents"
        case .fp32: "fp32_contents"
        case .bf16: nil
        }
    }

    /// The values of `contents` in this datatype's field (unchecked: the caller checks them
    /// against the datatype's range).
    func elements(of contents: Inference_InferTensorContents) -> WireElements {
        switch self {
        case .bool: .truths(contents.boolContents)
        case .int8, .int16, .int32: .signed(contents.intContents.map(Int64.init))
        case .int64: .signed(contents.int64Contents)
        case .uint8, .uint16, .uint32: .unsigned(contents.uintContents.map(UInt64.init))
        case .uint64: .unsigned(contents.uint64Contents)
        case .fp32, .bf16: .floats(contents.fp32Contents)
        }
    }

    /// Contents holding `elements` (an output of this datatype: floats for FP32, truth values for
    /// BOOL, integers otherwise) in this datatype's field.
    func contents(_ elements: TensorData.Elements) -> Inference_InferTensorContents {
        let integers: [Int64] = switch elements {
        case .integers(let values): values
        case .truths(let values): values.map { $0 ? 1 : 0 }
        // Not met for an output; truncated, with 0 for what no integer holds.
        case .floats, .numbers: elements.floatValues.map { Int64(exactly: $0.rounded(.towardZero)) ?? 0 }
        }
        var contents = Inference_InferTensorContents()
        switch self {
        case .bool: contents.boolContents = integers.map { $0 != 0 }
        case .int8, .int16, .int32: contents.intContents = integers.map { Int32(truncatingIfNeeded: $0) }
        case .int64: contents.int64Contents = integers
        case .uint8, .uint16, .uint32: contents.uintContents = integers.map { UInt32(truncatingIfNeeded: $0) }
        case .uint64: contents.uint64Contents = integers.map { UInt64(bitPattern: $0) }
        case .fp32, .bf16: contents.fp32Contents = elements.floatValues
        }
        return contents
    }

    /// Triton's configuration enum value of this datatype (`TYPE_INT64`).
    var configurationType: Inference_DataType {
        switch self {
        case .bool: .typeBool
        case .int8: .typeInt8
        case .int16: .typeInt16
        case .int32: .typeInt32
        case .int64: .typeInt64
        case .uint8: .typeUint8
        case .uint16: .typeUint16
        case .uint32: .typeUint32
        case .uint64: .typeUint64
        case .fp32: .typeFp32
        case .bf16: .typeBf16
        }
    }
}
