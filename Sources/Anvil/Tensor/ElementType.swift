/// The type of a tensor's elements.
///
/// Anvil computes in `float32`. Shapes, indices and masks are `int64`, `int32` or `bool`
/// (ONNX's shape arithmetic: `Shape`, `Gather`, `Range`, `Equal`, ...); `int8`, `uint8` and
/// `bfloat16` hold reduced-precision activations and weights.
public enum ElementType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// 32-bit IEEE float: what layers compute in.
    case float32
    /// 64-bit signed integer: ONNX's shapes and indices.
    case int64
    /// 32-bit signed integer.
    case int32
    /// A truth value (one byte).
    case bool
    /// 8-bit signed integer (quantized weights).
    case int8
    /// 8-bit unsigned integer (quantized activations, image bytes).
    case uint8
    /// The upper half of a float32: 8 exponent bits, 7 mantissa bits.
    case bfloat16

    /// Bytes per element.
    public var byteCount: Int {
        switch self {
        case .int64: 8
        case .float32, .int32: 4
        case .bfloat16: 2
        case .bool, .int8, .uint8: 1
        }
    }

    /// Whether the elements are integers or truth values (not floating point).
    public var isInteger: Bool { self != .float32 && self != .bfloat16 }

    /// The name used in summaries and model files (`"float32"`, `"int64"`, ...).
    public var description: String { rawValue }
}
