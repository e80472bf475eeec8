import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Dense layers through each of their three paths — the small-batch C kernel (batches under
/// 16), the packed direct-convolution kernel (larger batches of small layers) and `sgemm`
/// (larger batches of layers with 4 M weights or more) — against the naive reference, with
/// every C body the CPU runs (scalar, AVX2, AVX-512).
@Suite("Dense kernel paths")
struct DenseKernelTests {
    /// Runs a `DenseKernel` built directly (so a test can choose the C body) on `x`.
    static func runDense(_ x: RefTensor, weights: [Float], bias: [Float], outputs: Int, activation: ActivationFunction,
                         isa: InstructionSet) -> [Float] {
        let inputs = x.h * x.w * x.c
        let kernelWeights = KernelWeights(source: ParameterData(weights), reordered: nil, bias: ParameterData(bias),
                                          outputs: outputs, weightsPerOutput: inputs, affine: nil)
        var kernel = DenseKernel(inputs: inputs, outputs: outputs, weights: kernelWeights, activation: activation,
                                 channelsFirstInput: nil)
        kernel.instructionSet = isa
        return refRunKernel(kernel, input: x.floats, batch: x.n, inputShape: x.shape,
                            outputShape: Shape(height: 1, width: 1, channels: outputs))
    }

    @Test("Every batch size from 1 to 20, and 37, on a small layer (small-batch and packed paths)",
          arguments: refInstructionSets)
    func smallLayer(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var random = RefRandom(seed: 4_242)
        // 3 × 3 × 11 = 99 inputs (not a multiple of 8), 37 outputs (not a multiple of 16).
        let weights = random.floats(37 * 99), bias = random.floats(37)
        for (index, batch) in (Array(1 ... 20) + [37]).enumerated() {
            let activation = refAllActivations[index % refAllActivations.count]
            let x = random.tensor(n: batch, h: 3, w: 3, c: 11)
            let actual = Self.runDense(x, weights: weights, bias: bias, outputs: 37, activation: activation, isa: isa)
            let expected = Naive.dense(x, weights: weights, bias: bias, neurons: 37, activation: activation)
            var worst = 0.0
            for (a, e) in zip(actual, expected.v) { worst = max(worst, abs(Double(a) - e) / max(1, abs(e))) }
            #expect(worst <= 1e-5, "\(isa) batch \(batch), \(activation): worst error \(worst)")
        }
    }

    @Test("Through a compiled model, batches 1–20 match the reference")
    func throughModel() throws {
        var random = RefRandom(seed: 4_343)
        let weights = random.floats(21 * 50), bias = random.floats(21)
        for batch in 1 ... 20 {
            let x = random.tensor(n: batch, h: 1, w: 5, c: 10)
            let actual = try refRun(x, parameters: ["fc_W": weights, "fc_b": bias]) {
                $0 --> Dense(neurons: 21, activation: .relu, name: "fc")
            }
            refExpectClose(actual, Naive.dense(x, weights: weights, bias: bias, neurons: 21, activation: .relu), "batch \(batch)")
        }
    }

    @Test("A 1×1 convolution of a 1×1 input (a classifier head) runs as a Dense kernel and matches the naive convolution")
    func singlePixelConvolution() throws {
        var random = RefRandom(seed: 4_444)
        let weights = random.floats(37 * 99), bias = random.floats(37)
        let g = try WindowGeometry(input: Shape(height: 1, width: 1, channels: 99), kernel: (1, 1), stride: (1, 1),
                                   dilation: (1, 1), padding: .valid)
        #expect(g.isSinglePixel)
        for batch in [1, 5, 16, 40] {
            let x = random.tensor(n: batch, h: 1, w: 1, c: 99)
            let actual = try refRun(x, parameters: ["head_W": weights, "head_b": bias]) {
                $0 --> Convolution(kernel: (1, 1), channels: 37, padding: .valid, activation: .relu6, name: "head")
            }
            let expected = Naive.convolution(x, weights: weights, bias: bias, outputChannels: 37, kernel: (1, 1),
                                             padding: .valid, activation: .relu6)
            refExpectClose(actual, expected, "batch \(batch)")
        }
    }

    @Test("A layer too large to keep a packed copy runs sgemm at batch 16 and the small-batch kernel at 3")
    func largeLayer() throws {
        let inputs = 2_001, outputs = 2_000
        #expect(inputs * outputs >= DenseKernel.packedWeightLimit)
        var random = RefRandom(seed: 77)
        let weights = random.floats(outputs * inputs, -0.05, 0.05), bias = random.floats(outputs)
        for batch in [16, 3] {
            let x = random.tensor(n: batch, h: 1, w: 1, c: inputs)
            let actual = try refRun(x, parameters: ["big_W": weights, "big_b": bias]) {
                $0 --> Dense(neurons: outputs, activation: .relu, name: "big")
            }
            refExpectClose(actual, Naive.dense(x, weights: weights, bias: bias, neurons: outputs, activation: .relu),
                           "batch \(batch)")
        }
    }
}
