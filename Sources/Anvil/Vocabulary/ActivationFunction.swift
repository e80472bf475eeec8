import CAnvilKernels
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
    /// SiLU (swish): `x * sigmoid(x)`.
    case silu
    /// GELU, exact form: `x / 2 * (1 + erf(x / √2))`.
    case gelu
    /// GELU, tanh approximation: `x / 2 * (1 + tanh(√(2/π) * (x + 0.044715 x³)))`.
    case geluTanh
    /// Mish: `x * tanh(softplus(x))`.
    case mish
    /// `log(1 + e^x)`.
    case softplus
    /// `x / (1 + |x|)`.
    case softsign
    /// CELU: `max(0, x) + min(0, alpha * (e^(x/alpha) - 1))`.
    case celu(alpha: Float)
    /// `x` if greater than `alpha`, else 0.
    case thresholdedRelu(alpha: Float)
    /// `-x`.
    case negative
    /// `|x|`.
    case absolute
    /// `√x` (NaN below 0).
    case squareRoot
    /// `e^x`.
    case exponential
    /// The natural logarithm (−∞ at 0, NaN below).
    case logarithm
    /// `1 / x`.
    case reciprocal
    /// The error function.
    case erf
    /// Sin x.
    case sin
    /// Cos x.
    case cos
    /// Tan x.
    case tan
    /// Asin x (NaN outside [−1, 1]).
    case asin
    /// Acos x (NaN outside [−1, 1]).
    case acos
    /// Atan x.
    case atan
    /// Sinh x.
    case sinh
    /// Cosh x.
    case cosh
    /// Asinh x.
    case asinh
    /// Acosh x (NaN below 1).
    case acosh
    /// Atanh x (NaN outside [−1, 1]).
    case atanh
    /// ⌊x⌋.
    case floor
    /// ⌈x⌉.
    case ceil
    /// X rounded to the nearest integer, halves to even.
    case round
    /// −1, 0 or 1 by the sign of x.
    case sign

    /// ELU with α 1.
    public static let elu = ActivationFunction.elu(alpha: 1)
    /// Leaky ReLU with α 0.01.
    public static let leakyRelu = ActivationFunction.leakyRelu(alpha: 0.01)
    /// Hard sigmoid with α 0.2, β 0.5.
    public static let hardSigmoid = ActivationFunction.hardSigmoid(alpha: 0.2, beta: 0.5)
    /// CELU with α 1 (ONNX's default).
    public static let celu = ActivationFunction.celu(alpha: 1)
    /// Thresholded ReLU with α 1 (ONNX's default).
    public static let thresholdedRelu = ActivationFunction.thresholdedRelu(alpha: 1)

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
        default:
            var function = cFunction, value = x
            anvil_activation(ANVIL_ISA_SCALAR, &function, &value, 1)
            return value
        }
    }

    /// The function as `anvil_activation` takes it.
    var cFunction: anvil_activation_function {
        func make(_ kind: anvil_activation_kind, _ alpha: Float = 0, _ beta: Float = 0) -> anvil_activation_function {
            anvil_activation_function(kind: kind, alpha: alpha, beta: beta)
        }
        switch self {
        case .none: return make(ANVIL_ACTIVATION_NONE)
        case .relu: return make(ANVIL_ACTIVATION_RELU)
        case .relu6: return make(ANVIL_ACTIVATION_CLIP, 0, 6)
        case .clip(let lo, let hi): return make(ANVIL_ACTIVATION_CLIP, lo, hi)
        case .leakyRelu(let alpha): return make(ANVIL_ACTIVATION_LEAKY_RELU, alpha)
        case .sigmoid: return make(ANVIL_ACTIVATION_SIGMOID)
        case .tanh: return make(ANVIL_ACTIVATION_TANH)
        case .elu(let alpha): return make(ANVIL_ACTIVATION_ELU, alpha)
        case .selu: return make(ANVIL_ACTIVATION_SELU, Self.seluAlpha, Self.seluLambda)
        case .hardSigmoid(let alpha, let beta): return make(ANVIL_ACTIVATION_HARD_SIGMOID, alpha, beta)
        case .hardSwish: return make(ANVIL_ACTIVATION_HARD_SWISH)
        case .linear(let a, let b): return make(ANVIL_ACTIVATION_LINEAR, a, b)
        case .silu: return make(ANVIL_ACTIVATION_SILU)
        case .gelu: return make(ANVIL_ACTIVATION_GELU)
        case .geluTanh: return make(ANVIL_ACTIVATION_GELU_TANH)
        case .mish: return make(ANVIL_ACTIVATION_MISH)
        case .softplus: return make(ANVIL_ACTIVATION_SOFTPLUS)
        case .softsign: return make(ANVIL_ACTIVATION_SOFTSIGN)
        case .celu(let alpha): return make(ANVIL_ACTIVATION_CELU, alpha)
        case .thresholdedRelu(let alpha): return make(ANVIL_ACTIVATION_THRESHOLDED_RELU, alpha)
        case .negative: return make(ANVIL_ACTIVATION_NEGATIVE)
        case .absolute: return make(ANVIL_ACTIVATION_ABSOLUTE)
        case .squareRoot: return make(ANVIL_ACTIVATION_SQRT)
        case .exponential: return make(ANVIL_ACTIVATION_EXP)
        case .logarithm: return make(ANVIL_ACTIVATION_LOG)
        case .reciprocal: return make(ANVIL_ACTIVATION_RECIPROCAL)
        case .erf: return make(ANVIL_ACTIVATION_ERF)
        case .sin: return make(ANVIL_ACTIVATION_SIN)
        case .cos: return make(ANVIL_ACTIVATION_COS)
        case .tan: return make(ANVIL_ACTIVATION_TAN)
        case .asin: return make(ANVIL_ACTIVATION_ASIN)
        case .acos: return make(ANVIL_ACTIVATION_ACOS)
        case .atan: return make(ANVIL_ACTIVATION_ATAN)
        case .sinh: return make(ANVIL_ACTIVATION_SINH)
        case .cosh: return make(ANVIL_ACTIVATION_COSH)
        case .asinh: return make(ANVIL_ACTIVATION_ASINH)
        case .acosh: return make(ANVIL_ACTIVATION_ACOSH)
        case .atanh: return make(ANVIL_ACTIVATION_ATANH)
        case .floor: return make(ANVIL_ACTIVATION_FLOOR)
        case .ceil: return make(ANVIL_ACTIVATION_CEIL)
        case .round: return make(ANVIL_ACTIVATION_ROUND)
        case .sign: return make(ANVIL_ACTIVATION_SIGN)
        }
    }

    /// Applies the function in place to `count` values with the C kernel (`anvil_activation`) of
    /// `instructionSet`.
    func apply(_ values: UnsafeMutablePointer<Float>, count: Int, instructionSet: InstructionSet = .current) {
        if self == .none || count <= 0 { return }
        var function = cFunction
        anvil_activation(instructionSet.cValue, &function, values, count)
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
        case .silu: return "silu"
        case .gelu: return "gelu"
        case .geluTanh: return "geluTanh"
        case .mish: return "mish"
        case .softplus: return "softplus"
        case .softsign: return "softsign"
        case .celu(let alpha): return "celu(\(alpha))"
        case .thresholdedRelu(let alpha): return "thresholdedRelu(\(alpha))"
        case .negative: return "negative"
        case .absolute: return "absolute"
        case .squareRoot: return "squareRoot"
        case .exponential: return "exponential"
        case .logarithm: return "logarithm"
        case .reciprocal: return "reciprocal"
        case .erf: return "erf"
        case .sin: return "sin"
        case .cos: return "cos"
        case .tan: return "tan"
        case .asin: return "asin"
        case .acos: return "acos"
        case .atan: return "atan"
        case .sinh: return "sinh"
        case .cosh: return "cosh"
        case .asinh: return "asinh"
        case .acosh: return "acosh"
        case .atanh: return "atanh"
        case .floor: return "floor"
        case .ceil: return "ceil"
        case .round: return "round"
        case .sign: return "sign"
        }
    }
}
