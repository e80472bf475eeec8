import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ReferenceLayerTests``: merging against the naive reference.
extension ReferenceLayerTests {
    @Test("Add (2 and 3 inputs, with activation) and Concatenate (2 and 3 inputs)", arguments: 0 ..< 6)
    func merging(seed: Int) throws {
        var rng = RefRandom(seed: seed + 21000)
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(1 ... 5), w: rng.int(1 ... 5), c: rng.int(1 ... 4))
        let c1 = rng.int(1 ... 4), c2 = rng.int(1 ... 4)
        let w1 = rng.floats(c1 * x.c), w2 = rng.floats(c2 * x.c), w3 = rng.floats(x.c * x.c)
        let parameters = ["p1_W": w1, "p2_W": w2, "p3_W": w3]
        let p1 = Naive.pointwise(x, weights: w1, bias: nil, outputChannels: c1)
        let p2 = Naive.pointwise(x, weights: w2, bias: nil, outputChannels: c2)
        let p3 = Naive.pointwise(x, weights: w3, bias: nil, outputChannels: x.c)
        let f = rng.pick(refAllActivations)
        refExpectClose(try refRun(x, parameters: ["p3_W": w3]) {
            [$0, $0 --> PointwiseConvolution(channels: x.c, useBias: false, name: "p3")] --> Add(activation: f)
        }, Naive.add([x, p3], activation: f), "Add 2 seed \(seed) \(f)")
        refExpectClose(try refRun(x, parameters: ["p3_W": w3]) {
            [$0, $0 --> PointwiseConvolution(channels: x.c, useBias: false, name: "p3"), $0 --> Activation(.sigmoid)] --> Add()
        }, Naive.add([x, p3, Naive.activation(x, .sigmoid)]), "Add 3 seed \(seed)")
        refExpectClose(try refRun(x, parameters: ["p1_W": w1, "p2_W": w2]) {
            [$0 --> PointwiseConvolution(channels: c1, useBias: false, name: "p1"),
             $0 --> PointwiseConvolution(channels: c2, useBias: false, name: "p2")] --> Concatenate()
        }, Naive.concatenate([p1, p2]), "Concatenate 2 seed \(seed)")
        refExpectClose(try refRun(x, parameters: parameters) {
            [$0 --> PointwiseConvolution(channels: c1, useBias: false, name: "p1"), $0,
             $0 --> PointwiseConvolution(channels: c2, useBias: false, name: "p2"),
             $0 --> PointwiseConvolution(channels: x.c, useBias: false, name: "p3")] --> Concatenate()
        }, Naive.concatenate([p1, x, p2, p3]), tolerance: 1e-4, "Concatenate 4 seed \(seed)")
    }

    @Test("Elementwise in a graph: a squeeze-and-excitation gate, a per-pixel map, a constant layer scale, N-ary mean",
          arguments: 0 ..< 4)
    func elementwise(seed: Int) throws {
        var rng = RefRandom(seed: seed + 21500)
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(1 ... 5), w: rng.int(1 ... 5), c: rng.int(1 ... 12))
        // x · sigmoid(global average): squeeze-and-excitation.
        let gate = Naive.activation(Naive.globalAveragePool(x), .sigmoid)
        refExpectClose(try refRun(x) { [$0, $0 --> GlobalAveragePooling() --> Activation(.sigmoid)] --> Elementwise(.multiply) },
                       Naive.elementwise([x, gate], .multiply), "SE multiply seed \(seed)")
        // A per-pixel map (a 1-channel pointwise convolution) subtracted from x, then ReLU.
        let pw = rng.floats(x.c)
        let map = Naive.pointwise(x, weights: pw, bias: nil, outputChannels: 1)
        refExpectClose(try refRun(x, parameters: ["p_W": pw]) {
            [$0, $0 --> PointwiseConvolution(channels: 1, useBias: false, name: "p")] --> Elementwise(.subtract, activation: .relu)
        }, Naive.elementwise([x, map], .subtract, activation: .relu), "per-pixel subtract seed \(seed)")
        // A constant per-channel layer scale, and a scalar constant first (2 − x).
        let scale = rng.floats(x.c)
        let constant = RefTensor(n: 1, h: 1, w: 1, c: x.c, floats: scale)
        refExpectClose(try refRun(x, parameters: ["s_constant": scale]) { $0 --> Elementwise(.multiply, constant: .vector(x.c), name: "s") },
                       Naive.elementwise([x, constant], .multiply), "layer scale seed \(seed)")
        let two = RefTensor(n: 1, h: 1, w: 1, c: 1, floats: [2])
        refExpectClose(try refRun(x, parameters: ["t_constant": [2]]) {
            $0 --> Elementwise(.subtract, constant: .vector(1), constantFirst: true, name: "t")
        }, Naive.elementwise([two, x], .subtract), "2 - x seed \(seed)")
        // The mean and the maximum of three tensors, one of them broadcast.
        let t = Naive.activation(x, .tanh)
        refExpectClose(try refRun(x) { [$0, $0 --> Activation(.tanh), $0 --> GlobalMaxPooling()] --> Elementwise(.mean) },
                       Naive.elementwise([x, t, Naive.globalMaxPool(x)], .mean), "mean of 3 seed \(seed)")
        refExpectClose(try refRun(x) { [$0 --> GlobalAveragePooling(), $0 --> Activation(.tanh), $0] --> Elementwise(.maximum) },
                       Naive.elementwise([Naive.globalAveragePool(x), t, x], .maximum), "max of 3 seed \(seed)")
    }
}
