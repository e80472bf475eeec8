/// A floating-point format narrower than float32 that values can be rounded to (ONNX `Cast` to
/// `float16` or `bfloat16`): the rounded values are held as float32, each the float32 number
/// equal to the nearest value the format represents.
public enum FloatFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// IEEE binary16: 5 exponent bits, 10 mantissa bits; beyond 65504 (after rounding) infinite,
    /// below 2⁻¹⁴ subnormal.
    case float16
    /// The upper half of a float32: its 8 exponent bits, 7 mantissa bits.
    case bfloat16

    /// The name used in summaries and model files.
    public var description: String { rawValue }

    /// `value` rounded to the nearest value of this format, ties to even; NaN stays NaN, an
    /// infinity itself, a value beyond the largest finite one infinite.
    @inline(__always)
    public func rounding(_ value: Float) -> Float {
        switch self {
        case .float16:
            #if arch(x86_64) || arch(arm64)
            return Float(Float16(value))
            #else
            return Self.roundingToFloat16Bits(value)
            #endif
        case .bfloat16:
            let bits = value.bitPattern
            if value.isNaN { return Float(bitPattern: (bits | 0x0040_0000) & 0xFFFF_0000) }
            // Adding 0x7FFF plus the kept part's lowest bit rounds to nearest, ties to even; a
            // carry into the exponent is the right result (up to infinity).
            let rounded = bits &+ 0x7FFF &+ ((bits >> 16) & 1)
            return Float(bitPattern: rounded & 0xFFFF_0000)
        }
    }

    /// Float16 rounding by the float32 bits, for architectures without a `Float16` type: the
    /// mantissa cut to 10 bits (fewer below 2⁻¹⁴), ties to even.
    static func roundingToFloat16Bits(_ value: Float) -> Float {
        guard value.isFinite else { return value }
        let magnitude = abs(value)
        if magnitude >= 65520 { return value < 0 ? -.infinity : .infinity }
        // The spacing of float16 values near `magnitude`: 2^(exponent − 10), at least 2⁻²⁴.
        let exponent = max(magnitude == 0 ? -14 : Int(magnitude.exponent), -14)
        let quantum = Float(sign: .plus, exponent: exponent - 10, significand: 1)
        return (value / quantum).rounded(.toNearestOrEven) * quantum
    }
}
