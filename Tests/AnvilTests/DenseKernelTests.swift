import CAnvilKernels
import Foundation
import Testing
@testable import Anvil

/// Dense layers through each of their three paths — the small-batch C kernel (batches under
/// 16), the packed direct-convolution kernel (larger batches of small layers) and `sgemm`
/// (larger batches of layers with 4 M weights or more) — against the naive reference, with
/// both the AVX2 and the portable C bodies.
@Suite("Dense kernel paths", .serialized)
struct DenseKernelTests {
    @Test("Every batch size from 1 to 20, and 37, on a small layer (small-batch and packed paths)",
          arguments: [false, true])
    func smallLayer(portable: Bool) throws {
        anvil_kernels_force_portable(portable ? 1 : 0)
        defer { anvil_kernels_force_portable(0) }
        var random = RefRandom(seed: 4_242)
        // 3 × 3 × 11 = 99 inputs (not a multiple of 8), 37 outputs (not a multiple of 16).
        let weights = random.floats(37 * 99), bias = random.floats(37)
        for (index, batch) in (Array(1 ... 20) + [37]).enumerated() {
            let activation = refAllActivations[index % refAllActivations.count]
            let x = random.tensor(n: batch, h: 3, w: 3, c: 11)
            let actual = try refRun(x, parameters: ["fc_W": weights, "fc_b": bias]) {
                $0 --> Dense(neurons: 37, activation: activation, name: "fc")
            }
            let expected = Naive.dense(x, weights: weights, bias: bias, neurons: 37, activation: activation)
            refExpectClose(actual, expected, "\(portable ? "portable" : "AVX2") batch \(batch), \(activation)")
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
