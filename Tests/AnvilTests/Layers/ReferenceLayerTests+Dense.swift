import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ReferenceLayerTests``: dense and flatten against the naive reference.
extension ReferenceLayerTests {
    @Test("Dense over a spatial input, directly and after Flatten in both orders; all layouts", arguments: 0 ..< 20)
    func dense(seed: Int) throws {
        var rng = RefRandom(seed: seed + 13000)
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(1 ... 4), w: rng.int(1 ... 4), c: rng.int(1 ... 4))
        let neurons = rng.int(1 ... 6), useBias = rng.bool(), activation = rng.pick(refAllActivations)
        let count = x.h * x.w * x.c
        let weights = rng.floats(neurons * count), bias = useBias ? rng.floats(neurons) : nil
        let context = "dense seed \(seed): input \(x) -> \(neurons), bias \(useBias), \(activation)"
        func parameters(_ data: [Float]) -> [String: [Float]] {
            var result = ["fc_W": data]
            if let bias { result["fc_b"] = bias }
            return result
        }
        // Directly over H×W×C: Forge [out][h][w][c], PyTorch [out][c][h][w], TensorFlow [h·w·c][out].
        let expected = Naive.dense(x, weights: weights, bias: bias, neurons: neurons, activation: activation)
        for layout in WeightLayout.allCases {
            let data: [Float]
            switch layout {
            case .forge: data = weights
            case .pytorch: data = Naive.denseToPyTorch(weights, outputs: neurons, input: x.shape)
            case .tensorflow: data = Naive.denseToTensorFlow(weights, outputs: neurons, inputs: count)
            }
            let y = try refRun(x, parameters: parameters(data), layout: layout) {
                $0 --> Dense(neurons: neurons, useBias: useBias, activation: activation, name: "fc")
            }
            refExpectClose(y, expected, "\(context), layout \(layout)")
        }
        // After Flatten: the weights index the flattened vector in the flatten order.
        for order in [Flatten.Order.channelsLast, .channelsFirst] {
            let flat = Naive.flatten(x, order: order)
            let expectedFlat = Naive.dense(flat, weights: weights, bias: bias, neurons: neurons, activation: activation)
            for layout in WeightLayout.allCases {
                let data = layout == .tensorflow ? Naive.denseToTensorFlow(weights, outputs: neurons, inputs: count) : weights
                let y = try refRun(x, parameters: parameters(data), layout: layout) {
                    $0 --> Flatten(order: order) --> Dense(neurons: neurons, useBias: useBias, activation: activation, name: "fc")
                }
                refExpectClose(y, expectedFlat, "\(context), flatten \(order), layout \(layout)")
            }
        }
    }

    @Test("A batch gives the same outputs as its images one at a time (sgemv vs sgemm, tiling)")
    func batchMatchesSingleImages() throws {
        var rng = RefRandom(seed: 4242)
        let x = rng.tensor(n: 5, h: 6, w: 5, c: 3)
        let parameters = ["c_W": rng.floats(4 * 3 * 3 * 3), "c_b": rng.floats(4), "d_W": rng.floats(7 * 3 * 3 * 4), "d_b": rng.floats(7)]
        let input = Input(width: 5, height: 6, channels: 3)
        let output = input --> Convolution(kernel: (3, 3), channels: 4, stride: (2, 2), activation: .relu, name: "c")
            --> Dense(neurons: 7, name: "d")
        let model = try Model(input: input, output: output)
        try model.compile(from: ArrayParameterSource(parameters))
        let all = try model.predict(try x.tensor())
        for b in 0 ..< 5 {
            let image = RefTensor(n: 1, h: 6, w: 5, c: 3, v: Array(x.v[b * 90 ..< (b + 1) * 90]))
            let single = try model.predict(try image.tensor())
            var expected = RefTensor(n: 1, h: 1, w: 1, c: 7, floats: Array(all.image(b)))
            expected.rank = 2
            refExpectClose(single, expected, tolerance: 1e-5, "image \(b) alone vs in a batch of 5")
        }
    }

    @Test("Flatten in both orders", arguments: [Flatten.Order.channelsLast, .channelsFirst])
    func flatten(order: Flatten.Order) throws {
        var rng = RefRandom(seed: order == .channelsLast ? 1 : 2)
        for batch in refBatchSizes {
            let x = rng.tensor(n: batch, h: rng.int(1 ... 5), w: rng.int(1 ... 5), c: rng.int(1 ... 5))
            let y = try refRun(x) { $0 --> Flatten(order: order) }
            refExpectClose(y, Naive.flatten(x, order: order), tolerance: 0, "flatten \(order) \(x)")
        }
    }
}
