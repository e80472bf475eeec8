import Anvil

/// A tensor's datatype as the KServe v2 protocol names it (`"INT64"`, `"BOOL"`, `"FP32"`, ...):
/// one for each of Anvil's element types. Metadata, requests and responses carry it as a string;
/// a request's input must name its model input's datatype (Triton's convention: no conversion).
public enum TensorDatatype: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Truth values, one byte each on the wire (0 or 1).
    case bool = "BOOL"
    /// 8-bit signed integers.
    case int8 = "INT8"
    /// 16-bit signed integers.
    case int16 = "INT16"
    /// 32-bit signed integers.
    case int32 = "INT32"
    /// 64-bit signed integers (token ids, indices).
    case int64 = "INT64"
    /// 8-bit unsigned integers.
    case uint8 = "UINT8"
    /// 16-bit unsigned integers.
    case uint16 = "UINT16"
    /// 32-bit unsigned integers.
    case uint32 = "UINT32"
    /// 64-bit unsigned integers.
    case uint64 = "UINT64"
    /// 32-bit IEEE floats: what Anvil's layers compute in.
    case fp32 = "FP32"
    /// bfloat16, the upper half of a float32 (Anvil computes no tensor of it at `predict`, so no
    /// served model has one; named for completeness).
    case bf16 = "BF16"

    /// The protocol's name for `elementType`.
    public init(_ elementType: ElementType) {
        switch elementType {
        case .bool: self = .bool
        case .int8: self = .int8
        case .int16: self = .int16
        case .int32: self = .int32
        case .int64: self = .int64
        case .uint8: self = .uint8
        case .uint16: self = .uint16
        case .uint32: self = .uint32
        case .uint64: self = .uint64
        case .float32: self = .fp32
        case .bfloat16: self = .bf16
        }
    }

    /// The datatype Triton's model configuration names `name` (`"TYPE_INT64"`), if any.
    public init?(configurationName name: String) {
        guard name.hasPrefix("TYPE_"), let datatype = TensorDatatype(rawValue: String(name.dropFirst(5))) else { return nil }
        self = datatype
    }

    /// Anvil's element type of this datatype.
    public var elementType: ElementType {
        switch self {
        case .bool: .bool
        case .int8: .int8
        case .int16: .int16
        case .int32: .int32
        case .int64: .int64
        case .uint8: .uint8
        case .uint16: .uint16
        case .uint32: .uint32
        case .uint64: .uint64
        case .fp32: .float32
        case .bf16: .bfloat16
        }
    }

    /// Bytes per element in binary data and `raw_input_contents` (BOOL: one).
    public var byteCount: Int { elementType.byteCount }

    /// Triton's model configuration name of it: `"TYPE_INT64"`, `"TYPE_BOOL"`, `"TYPE_FP32"`.
    public var configurationName: String { "TYPE_" + rawValue }

    /// The smallest and largest value of an integer datatype (BOOL: 0 and 1; UINT64's largest is
    /// `UInt64.max`, beyond `Int64`); `nil` for a float one.
    var integerBounds: (lowest: Int64, highest: UInt64)? {
        switch self {
        case .uint64: (0, .max)
        case .int64: (.min, UInt64(Int64.max))
        default: elementType.integerRange.map { ($0.lowerBound, UInt64($0.upperBound)) }
        }
    }

    /// The protocol's name (`"INT64"`).
    public var description: String { rawValue }
}
