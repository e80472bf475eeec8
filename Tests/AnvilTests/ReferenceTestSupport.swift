import Foundation
import Testing
@testable import Anvil

/// A tiny deterministic generator (SplitMix64), so every random test case is reproducible
/// from its seed.
struct RefRandom {
    private var state: UInt64

    init(seed: Int) { state = UInt64(truncatingIfNeeded: seed) &* 0x9E37_79B9_7F4A_7C15 &+ 0x1234_5678 }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform integer in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    /// A uniform double in `[0, 1)`.
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// A uniform float in `[lo, hi)`.
    mutating func float(_ lo: Float = -1, _ hi: Float = 1) -> Float { lo + (hi - lo) * Float(unit()) }

    mutating func bool() -> Bool { next() & 1 == 1 }

    mutating func pick<T>(_ items: [T]) -> T { items[int(0 ... items.count - 1)] }

    /// `count` floats in `[lo, hi)`.
    mutating func floats(_ count: Int, _ lo: Float = -1, _ hi: Float = 1) -> [Float] {
        (0 ..< count).map { _ in float(lo, hi) }
    }

    /// A random input batch.
    mutating func tensor(n: Int, h: Int, w: Int, c: Int, _ lo: Float = -1, _ hi: Float = 1) -> RefTensor {
        RefTensor(n: n, h: h, w: w, c: c, floats: floats(n * h * w * c, lo, hi))
    }
}

/// Every activation function, with non-default parameters where it has some.
let refAllActivations: [ActivationFunction] = [
    .none, .relu, .relu6, .clip(min: -0.3, max: 0.5), .leakyRelu(alpha: 0.1), .leakyRelu, .sigmoid, .tanh,
    .elu(alpha: 0.7), .elu, .selu, .hardSigmoid(alpha: 0.3, beta: 0.4), .hardSigmoid, .hardSwish,
    .linear(a: 1.5, b: -0.25),
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

/// Runs one kernel directly on `input` (`batch` images of `inputShape`, NHWC): NaN-filled
/// output and scratch, so anything the kernel fails to write shows.
func refRunKernel(_ kernel: any Kernel, input: [Float], batch: Int, inputShape: Shape, outputShape: Shape) -> [Float] {
    var output = [Float](repeating: .nan, count: batch * outputShape.count)
    var scratch = [Float](repeating: .nan, count: max(1, kernel.scratchCount(batch: batch)))
    input.withUnsafeBufferPointer { x in
        output.withUnsafeMutableBufferPointer { y in
            scratch.withUnsafeMutableBufferPointer { s in
                kernel.run(KernelIO(inputs: [x.baseAddress!], output: y.baseAddress!, scratch: s.baseAddress!, batch: batch,
                                    inputShapes: [inputShape], outputShape: outputShape))
            }
        }
    }
    return output
}

/// The kernel `layer` builds for one input of `input`'s shape, weights in Forge layout (all
/// 0.01): what `compile` would choose for it.
func refChosenKernel(_ layer: any Layer, input: Shape) throws -> any Kernel {
    var parameters: [ParameterKind: ParameterData] = [:]
    for spec in layer.parameters(for: [input]) {
        parameters[spec.kind] = ParameterData([Float](repeating: 0.01, count: spec.count))
    }
    return try layer.makeKernel(KernelContext(layerName: "probe", inputShapes: [input],
                                              outputShape: try layer.outputShape(for: [input]), layout: .forge,
                                              parameters: parameters))
}
