import Foundation

/// An element-wise activation, fused into a layer or applied by ``Activation``.
///
/// PReLU, whose slopes are learned, is a layer of its own: ``PReLU``.
public enum ActivationFunction: Hashable, Sendable, CustomStringConvertible {
    /// Identity.
    case none
    /// `max(x, 0)`.
    case relu
    /// `min(max(x, 0), 6)`.
    case relu6
    /// `min(max(x, min), max)`.
    case clip(min: Float, max: Float)
    /// `x` if positive, else `alpha * x`.
    case leakyRelu(alpha: Float)
    /// `1 / (1 + e^-x)`.
    case sigmoid
    /// Hyperbolic tangent.
    case tanh
    /// `x` if positive, else `alpha * (e^x - 1)`.
    case elu(alpha: Float)
    /// Scaled ELU with the constants of Klambauer et al. (α 1.67326…, λ 1.05070…).
    case selu
    /// `max(0, min(1, alpha * x + beta))` (ONNX's; Keras uses α 0.2, β 0.5 too).
    case hardSigmoid(alpha: Float, beta: Float)
    /// `x * relu6(x + 3) / 6`.
    case hardSwish
    /// `a * x + b`.
    case linear(a: Float, b: Float)

    /// ELU with α 1.
    public static let elu = ActivationFunction.elu(alpha: 1)
    /// Leaky ReLU with α 0.01.
    public static let leakyRelu = ActivationFunction.leakyRelu(alpha: 0.01)
    /// Hard sigmoid with α 0.2, β 0.5.
    public static let hardSigmoid = ActivationFunction.hardSigmoid(alpha: 0.2, beta: 0.5)

    static let seluAlpha: Float = 1.6732632423543772848170429916717
    static let seluLambda: Float = 1.0507009873554804934193349852946

    /// The function applied to one value.
    @inline(__always)
    public func callAsFunction(_ x: Float) -> Float {
        switch self {
        case .none: return x
        case .relu: return max(x, 0)
        case .relu6: return min(max(x, 0), 6)
        case .clip(let lo, let hi): return min(max(x, lo), hi)
        case .leakyRelu(let alpha): return x >= 0 ? x : alpha * x
        case .sigmoid: return 1 / (1 + Foundation.exp(-x))
        case .tanh: return Foundation.tanh(x)
        case .elu(let alpha): return x > 0 ? x : alpha * (Foundation.exp(x) - 1)
        case .selu: return Self.seluLambda * (x > 0 ? x : Self.seluAlpha * (Foundation.exp(x) - 1))
        case .hardSigmoid(let alpha, let beta): return max(0, min(1, alpha * x + beta))
        case .hardSwish: return x * min(max(x + 3, 0), 6) / 6
        case .linear(let a, let b): return a * x + b
        }
    }

    /// Applies the function in place to `count` values; the switch is hoisted out of the loop.
    func apply(_ values: UnsafeMutablePointer<Float>, count: Int) {
        switch self {
        case .none: return
        case .relu: for i in 0 ..< count { values[i] = max(values[i], 0) }
        case .relu6: for i in 0 ..< count { values[i] = min(max(values[i], 0), 6) }
        case .clip(let lo, let hi): for i in 0 ..< count { values[i] = min(max(values[i], lo), hi) }
        case .leakyRelu(let alpha): for i in 0 ..< count { let x = values[i]; values[i] = x >= 0 ? x : alpha * x }
        case .linear(let a, let b): for i in 0 ..< count { values[i] = a * values[i] + b }
        default: for i in 0 ..< count { values[i] = self(values[i]) }
        }
    }

    /// Adds `bias[c]` (if any) to each row of `rows × channels` values, then applies the function.
    func applyWithBias(_ values: UnsafeMutablePointer<Float>, rows: Int, channels: Int, bias: UnsafePointer<Float>?) {
        guard let bias else {
            apply(values, count: rows * channels)
            return
        }
        for r in 0 ..< rows {
            let row = values + r * channels
            for c in 0 ..< channels { row[c] += bias[c] }
            apply(row, count: channels)
        }
    }

    /// The name used in summaries and model files.
    public var description: String {
        switch self {
        case .none: return "none"
        case .relu: return "relu"
        case .relu6: return "relu6"
        case .clip(let lo, let hi): return "clip(\(lo), \(hi))"
        case .leakyRelu(let alpha): return "leakyRelu(\(alpha))"
        case .sigmoid: return "sigmoid"
        case .tanh: return "tanh"
        case .elu(let alpha): return "elu(\(alpha))"
        case .selu: return "selu"
        case .hardSigmoid(let alpha, let beta): return "hardSigmoid(\(alpha), \(beta))"
        case .hardSwish: return "hardSwish"
        case .linear(let a, let b): return "linear(\(a), \(b))"
        }
    }
}
