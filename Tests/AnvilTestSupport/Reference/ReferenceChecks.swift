import Foundation
import Testing
import Anvil

/// Every activation function, with non-default parameters where it has some (but for the
/// ill-conditioned ones below).
let refAllActivations: [ActivationFunction] = [
    .none, .relu, .relu6, .clip(min: -0.3, max: 0.5), .leakyRelu(alpha: 0.1), .leakyRelu, .sigmoid, .tanh,
    .elu(alpha: 0.7), .elu, .selu, .hardSigmoid(alpha: 0.3, beta: 0.4), .hardSigmoid, .hardSwish,
    .linear(a: 1.5, b: -0.25), .silu, .gelu, .geluTanh, .mish, .softplus, .softsign, .celu(alpha: 0.8), .celu,
    .thresholdedRelu(alpha: 0.3), .thresholdedRelu, .negative, .absolute, .squareRoot, .exponential, .erf,
]

/// Activations whose result is ill-conditioned near an input of 0 (1/x, log x): a rounding of
/// the input there is magnified without bound, so they are checked on exact inputs and after
/// layers whose outputs stay away from 0, not in the random chains of ``refAllActivations``.
let refIllConditionedActivations: [ActivationFunction] = [.reciprocal, .logarithm]

/// Trigonometric and hyperbolic functions and the roundings: checked on exact inputs (the
/// activation kernel test), not in random chains, as a rounding is discontinuous and several
/// are defined on part of the line only (asin, acos, acosh, atanh; tan's poles).
let refExactInputActivations: [ActivationFunction] = [
    .sin, .cos, .tan, .asin, .acos, .atan, .sinh, .cosh, .asinh, .acosh, .atanh, .floor, .ceil, .round, .sign,
]

/// The batch sizes random cases draw from.
let refBatchSizes = [1, 2, 3, 5]

/// Compares Anvil's output with the reference: same batch and shape, and every value within
/// `tolerance · max(1, |expected|)`. Records one issue naming the first mismatch.
func refExpectClose(_ actual: Tensor, _ expected: RefTensor, tolerance: Double = 1e-4, _ context: String,
                    sourceLocation: SourceLocation = #_sourceLocation) {
    guard actual.batch == expected.n, actual.shape == expected.shape else {
        Issue.record("\(context): shape \(actual.batch) × \(actual.shape), expected \(expected.n) × \(expected.shape)",
                     sourceLocation: sourceLocation)
        return
    }
    var bad = 0
    var first: (Int, Float, Double)?
    for (i, (a, e)) in zip(actual.values, expected.v).enumerated() {
        let ok = e.isNaN ? a.isNaN : (abs(Double(a) - e) <= tolerance * max(1, abs(e)) || Double(a) == e)
        if !ok {
            bad += 1
            if first == nil { first = (i, a, e) }
        }
    }
    if let (i, a, e) = first {
        Issue.record("\(context): \(bad) of \(expected.v.count) values differ; first at \(i): \(a) vs reference \(e)",
                     sourceLocation: sourceLocation)
    }
}

/// Builds a one-input, one-output model from `build`, compiles it with `parameters`, runs `input`.
func refRun(_ input: RefTensor, parameters: [String: [Float]] = [:], layout: WeightLayout = .forge,
            _ build: (Input) -> SymbolicTensor) throws -> Tensor {
    let x = Input(width: input.w, height: input.h, channels: input.c)
    let model = try Model(input: x, output: build(x))
    try model.compile(layout: layout, from: ArrayParameterSource(parameters))
    return try model.predict(try input.tensor())
}

/// The larger of two errors, a NaN counting as infinite: `max(worst, .nan)` is `worst`, which
/// would let a kernel's NaN (or an output it never wrote, left NaN) pass a tolerance check.
func refWorst(_ worst: Double, _ error: Double) -> Double { error.isNaN ? .infinity : max(worst, error) }
