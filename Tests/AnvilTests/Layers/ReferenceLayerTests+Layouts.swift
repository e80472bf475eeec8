import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ReferenceLayerTests``: layouts against the naive reference.
extension ReferenceLayerTests {
    @Test("The same weights in the Forge, PyTorch and TensorFlow layouts give the same output")
    func layoutsAgree() throws {
        var rng = RefRandom(seed: 2024)
        let x = rng.tensor(n: 2, h: 6, w: 5, c: 4)
        // conv 3x2, 4 -> 6, then depthwise 3x3 m 2 (12 channels), then dense over the 3x3x12 result.
        let cw = rng.floats(6 * 3 * 2 * 4), cb = rng.floats(6)
        let gw = rng.floats(6 * 2 * 2 * 2)  // grouped conv, 3 groups, 6 -> 6
        let dw = rng.floats(12 * 9), db = rng.floats(12)
        let after = Shape(height: 3, width: 3, channels: 12)
        let fw = rng.floats(5 * after.count), fb = rng.floats(5)
        func build(_ input: Input) -> SymbolicTensor {
            input --> Convolution(kernel: (3, 2), channels: 6, padding: .same, activation: .relu, name: "conv")
                --> Convolution(kernel: (2, 2), channels: 6, groups: 3, useBias: false, name: "grouped")
                --> DepthwiseConvolution(kernel: (3, 3), multiplier: 2, stride: (2, 2), activation: .tanh, name: "dw")
                --> Dense(neurons: 5, name: "fc")
        }
        let forge: [String: [Float]] = ["conv_W": cw, "conv_b": cb, "grouped_W": gw, "dw_W": dw, "dw_b": db, "fc_W": fw, "fc_b": fb]
        let pytorch: [String: [Float]] = [
            "conv_W": Naive.convolutionToPyTorch(cw, outputs: 6, kernel: (3, 2), inputs: 4), "conv_b": cb,
            "grouped_W": Naive.convolutionToPyTorch(gw, outputs: 6, kernel: (2, 2), inputs: 2),
            "dw_W": Naive.depthwiseToPyTorch(dw), "dw_b": db,
            "fc_W": Naive.denseToPyTorch(fw, outputs: 5, input: after), "fc_b": fb,
        ]
        let tensorflow: [String: [Float]] = [
            "conv_W": Naive.convolutionToTensorFlow(cw, outputs: 6, kernel: (3, 2), inputs: 4), "conv_b": cb,
            "grouped_W": Naive.convolutionToTensorFlow(gw, outputs: 6, kernel: (2, 2), inputs: 2),
            "dw_W": Naive.depthwiseToTensorFlow(dw, channels: 6, multiplier: 2, kernel: (3, 3)), "dw_b": db,
            "fc_W": Naive.denseToTensorFlow(fw, outputs: 5, inputs: after.count), "fc_b": fb,
        ]
        let a = try refRun(x, parameters: forge, layout: .forge, build)
        let b = try refRun(x, parameters: pytorch, layout: .pytorch, build)
        let c = try refRun(x, parameters: tensorflow, layout: .tensorflow, build)
        var r = Naive.convolution(x, weights: cw, bias: cb, outputChannels: 6, kernel: (3, 2), activation: .relu)
        r = Naive.convolution(r, weights: gw, bias: nil, outputChannels: 6, kernel: (2, 2), groups: 3)
        r = Naive.depthwise(r, weights: dw, bias: db, multiplier: 2, kernel: (3, 3), stride: (2, 2), activation: .tanh)
        #expect(r.shape == after)
        // PyTorch's dense weights are used in place on the input reordered to C, H, W, so its
        // 108 products are summed in another order than Forge's: the outputs may differ by the
        // rounding of that sum, on the scale of its terms Σ|w·x| + |b| (the dense tests' measure).
        let scales = Naive.denseScales(r, weights: fw, bias: fb, neurons: 5)
        for (name, other) in [("pytorch", b), ("tensorflow", c)] {
            var worst = 0.0
            for (i, (u, v)) in zip(other.values, a.values).enumerated() { worst = refWorst(worst, abs(Double(u) - Double(v)) / scales[i]) }
            #expect(other.values.count == a.values.count && worst <= 1e-6, "\(name) vs forge: worst error \(worst)")
        }
        r = Naive.dense(r, weights: fw, bias: fb, neurons: 5)
        refExpectClose(a, r, "forge vs reference")
    }
}
