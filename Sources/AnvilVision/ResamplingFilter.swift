import Foundation

/// The filter ``Image/resized(width:height:filter:)`` resamples with.
///
/// Both filters are Pillow's (`Image.resize` with `BILINEAR` or `LANCZOS`) and antialias
/// when shrinking: the filter is stretched by the shrink factor, so every source pixel
/// contributes to the output and fine detail is averaged instead of aliased.
public enum ResamplingFilter: String, Sendable, Hashable, CaseIterable {
    /// The triangle (tent) filter `max(0, 1 − |x|)`, support 1: bilinear interpolation when
    /// enlarging, an area-weighted average when shrinking. The output stays within the
    /// input's range. torchvision's default for `Resize`.
    case bilinear
    /// The Lanczos filter with a = 3, `sinc(x) · sinc(x / 3)` for `|x| < 3`, support 3:
    /// sharper than bilinear, but its negative lobes can overshoot the input's range near
    /// edges (a 0/255 step can give values slightly below 0 and above 255).
    case lanczos3

    /// How far from its centre the filter is non-zero, in source pixels before stretching.
    public var support: Double {
        switch self {
        case .bilinear: return 1
        case .lanczos3: return 3
        }
    }

    /// The filter's value at distance `x` (in source pixels before stretching).
    public func weight(_ x: Double) -> Double {
        switch self {
        case .bilinear:
            let d = abs(x)
            return d < 1 ? 1 - d : 0
        case .lanczos3:
            guard -3 <= x && x < 3 else { return 0 }  // Pillow's half-open interval
            return Self.sinc(x) * Self.sinc(x / 3)
        }
    }

    private static func sinc(_ x: Double) -> Double {
        if x == 0 { return 1 }
        let px = x * Double.pi
        return sin(px) / px
    }
}
