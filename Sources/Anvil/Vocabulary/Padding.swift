/// How a convolution or pooling window treats the border.
public enum Padding: Hashable, Sendable, CustomStringConvertible {
    /// Output size `ceil(input / stride)`; the total pad is split with the smaller half at
    /// the top/left (TensorFlow SAME, ONNX SAME_UPPER).
    case same
    /// No padding; windows lie entirely inside the input.
    case valid
    /// Explicit zero padding on each side (ONNX `pads`, PyTorch `padding`).
    case explicit(top: Int, left: Int, bottom: Int, right: Int)

    /// The same explicit padding on every side.
    public static func explicit(_ all: Int) -> Padding { .explicit(top: all, left: all, bottom: all, right: all) }

    /// `same`, `valid` or `[top, left, bottom, right]`.
    public var description: String {
        switch self {
        case .same: return "same"
        case .valid: return "valid"
        case .explicit(let t, let l, let b, let r): return "[\(t), \(l), \(b), \(r)]"
        }
    }
}
