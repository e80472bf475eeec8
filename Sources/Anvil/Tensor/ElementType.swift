/// The type of a tensor's elements.
///
/// Anvil computes in `float32`. Shapes, indices and masks are `int64`, `int32` or `bool`
/// (ONNX's shape arithmetic: `Shape`, `Gather`, `Range`, `Equal`, ...); `int8`, `uint8` and
/// `bfloat16` hold reduced-precision activations and weights.
///
/// A value known when the plan is built (a shape computation) holds its integers exactly as
/// `Int64`. A tensor computed at `predict` holds each element as a float32 number whatever its
/// type: integers are exact up to ``exactIntegerLimit`` in magnitude (indices, token ids, masks),
/// and integer arithmetic wraps its result to the type's width as the type's own would.
public enum ElementType: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// 32-bit IEEE float: what layers compute in.
    case float32
    /// 64-bit signed integer: ONNX's shapes and indices.
    case int64
    /// 32-bit signed integer.
    case int32
    /// A truth value (one byte).
    case bool
    /// 16-bit signed integer.
    case int16
    /// 8-bit signed integer (quantized weights).
    case int8
    /// 64-bit unsigned integer.
    case uint64
    /// 32-bit unsigned integer.
    case uint32
    /// 16-bit unsigned integer.
    case uint16
    /// 8-bit unsigned integer (quantized activations, image bytes).
    case uint8
    /// The upper half of a float32: 8 exponent bits, 7 mantissa bits.
    case bfloat16

    /// Bytes per element.
    public var byteCount: Int {
        switch self {
        case .int64, .uint64: 8
        case .float32, .int32, .uint32: 4
        case .bfloat16, .int16, .uint16: 2
        case .bool, .int8, .uint8: 1
        }
    }

    /// Whether the elements are integers or truth values (not floating point).
    public var isInteger: Bool { self != .float32 && self != .bfloat16 }

    /// The largest magnitude up to which every integer is exact in a tensor computed at
    /// `predict` (held as float32): 2²⁴.
    public static let exactIntegerLimit: Int64 = 1 << 24

    /// `value` as this type holds it: for an integer type truncated toward zero and wrapped to
    /// the type's width (a value that is not finite becomes 0), for `bool` 1 where non-zero,
    /// for a float type itself.
    public func converting(_ value: Double) -> Double {
        switch self {
        case .float32, .bfloat16: return value
        case .bool: return value != 0 ? 1 : 0
        default:
            guard value.isFinite else { return 0 }
            let whole = value.rounded(.towardZero)
            // Beyond ±2⁶³ the low bits are lost anyway; saturate to keep the conversion defined.
            let integer = whole >= 9.2e18 ? Int64.max : whole <= -9.2e18 ? Int64.min : Int64(whole)
            return Double(wrapping(integer))
        }
    }

    /// `value` wrapped to this integer type's width (two's complement), as NumPy's fixed-width
    /// integers wrap; other types return it unchanged (`bool`: 0 or 1).
    public func wrapping(_ value: Int64) -> Int64 {
        switch self {
        case .int32: Int64(Int32(truncatingIfNeeded: value))
        case .int16: Int64(Int16(truncatingIfNeeded: value))
        case .int8: Int64(Int8(truncatingIfNeeded: value))
        case .uint32: Int64(UInt32(truncatingIfNeeded: value))
        case .uint16: Int64(UInt16(truncatingIfNeeded: value))
        case .uint8: Int64(UInt8(truncatingIfNeeded: value))
        case .bool: value != 0 ? 1 : 0
        // uint64 beyond Int64.max cannot be held; it keeps the two's-complement bits.
        case .int64, .uint64, .float32, .bfloat16: value
        }
    }

    /// The smallest and largest value of an integer or truth type (`uint64`'s largest is
    /// `Int64.max`); `nil` for a float type.
    public var integerRange: ClosedRange<Int64>? {
        switch self {
        case .bool: 0 ... 1
        case .int8: Int64(Int8.min) ... Int64(Int8.max)
        case .uint8: 0 ... Int64(UInt8.max)
        case .int16: Int64(Int16.min) ... Int64(Int16.max)
        case .uint16: 0 ... Int64(UInt16.max)
        case .int32: Int64(Int32.min) ... Int64(Int32.max)
        case .uint32: 0 ... Int64(UInt32.max)
        case .int64: Int64.min ... Int64.max
        case .uint64: 0 ... Int64.max
        case .float32, .bfloat16: nil
        }
    }

    /// Whether every value of `other` is a value of this type, so that a cast from `other` to
    /// it changes no element of a computed tensor (float32 holds every type as it is computed).
    public func holdsEvery(_ other: ElementType) -> Bool {
        if self == other || self == .float32 { return true }
        guard let mine = integerRange, let theirs = other.integerRange else { return false }
        return mine.lowerBound <= theirs.lowerBound && theirs.upperBound <= mine.upperBound
    }

    /// The name used in summaries and model files (`"float32"`, `"int64"`, ...).
    public var description: String { rawValue }
}
