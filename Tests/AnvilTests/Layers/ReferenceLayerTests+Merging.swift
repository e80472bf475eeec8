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
}
