import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ReferenceLayerTests``: activations against the naive reference.
extension ReferenceLayerTests {
    @Test("Every activation: standalone, fused after conv/dense, as a layer's own activation, after Add",
          arguments: refAllActivations)
    func activation(_ f: ActivationFunction) throws {
        var rng = RefRandom(seed: f.description.unicodeScalars.reduce(0) { $0 &* 31 &+ Int($1.value) })
        // Standalone, over a wide range and the breakpoints of the piecewise functions.
        var x = rng.tensor(n: 3, h: 4, w: 5, c: 3, -8, 8)
        for (i, special) in [0, -3, 3, 6, -6, 0.5, -0.3, 1, -1, 2.5, -2.5, 20, -20].enumerated() { x.v[i] = special }
        refExpectClose(try refRun(x) { $0 --> Activation(f) }, Naive.activation(x, f), "Activation(\(f)) standalone")

        let small = rng.tensor(n: 2, h: 5, w: 4, c: 3, -2, 2)
        let w = rng.floats(4 * 3 * 3 * 3, -1, 1), b = rng.floats(4)
        let conv = Naive.convolution(small, weights: w, bias: b, outputChannels: 4, kernel: (3, 3), activation: .none)
        // Fused into the preceding convolution.
        let fused = try refRun(small, parameters: ["c_W": w, "c_b": b]) {
            $0 --> Convolution(kernel: (3, 3), channels: 4, name: "c") --> Activation(f)
        }
        refExpectClose(fused, Naive.activation(conv, f), "conv --> Activation(\(f)) (fused)")
        // The convolution's own activation.
        let own = try refRun(small, parameters: ["c_W": w, "c_b": b]) {
            $0 --> Convolution(kernel: (3, 3), channels: 4, activation: f, name: "c")
        }
        refExpectClose(own, Naive.activation(conv, f), "Convolution(activation: \(f))")
        // Dense's own and fused.
        let dw = rng.floats(6 * small.h * small.w * small.c), db = rng.floats(6)
        let dense = Naive.dense(small, weights: dw, bias: db, neurons: 6, activation: f)
        refExpectClose(try refRun(small, parameters: ["d_W": dw, "d_b": db]) {
            $0 --> Dense(neurons: 6, activation: f, name: "d")
        }, dense, "Dense(activation: \(f))")
        refExpectClose(try refRun(small, parameters: ["d_W": dw, "d_b": db]) {
            $0 --> Dense(neurons: 6, name: "d") --> Activation(f)
        }, dense, "Dense --> Activation(\(f)) (fused)")
        // Depthwise's and pointwise's own.
        let kw = rng.floats(3 * 2 * 3 * 3)
        refExpectClose(try refRun(small, parameters: ["k_W": kw]) {
            $0 --> DepthwiseConvolution(kernel: (3, 3), multiplier: 2, useBias: false, activation: f, name: "k")
        }, Naive.depthwise(small, weights: kw, bias: nil, multiplier: 2, kernel: (3, 3), activation: f),
        "DepthwiseConvolution(activation: \(f))")
        let pw = rng.floats(2 * 3)
        refExpectClose(try refRun(small, parameters: ["p_W": pw]) {
            $0 --> PointwiseConvolution(channels: 2, useBias: false, activation: f, name: "p")
        }, Naive.pointwise(small, weights: pw, bias: nil, outputChannels: 2, activation: f),
        "PointwiseConvolution(activation: \(f))")
        // After Add (not fusable), and Add's own activation.
        refExpectClose(try refRun(small) { [$0, $0 --> Activation(.tanh)] --> Add(activation: f) },
                       Naive.add([small, Naive.activation(small, .tanh)], activation: f), "Add(activation: \(f))")
        refExpectClose(try refRun(small) { [$0, $0] --> Add() --> Activation(f) },
                       Naive.activation(Naive.add([small, small]), f), "Add --> Activation(\(f))")
    }
}

/// ``ReferenceLayerTests``: the ill-conditioned activations (1/x, log x) fused after layers
/// whose outputs stay well away from 0.
extension ReferenceLayerTests {
    @Test("1/x and log x: standalone on exact inputs, fused into conv and dense on positive outputs",
          arguments: refIllConditionedActivations)
    func illConditionedActivation(_ f: ActivationFunction) throws {
        var rng = RefRandom(seed: 21_700 + f.description.count)
        var x = rng.tensor(n: 2, h: 4, w: 5, c: 3, -8, 8)
        for (i, special) in [0, -3, 3, 1e-3, -1e-3, 1, -1, 20, -20].enumerated() { x.v[i] = special }
        refExpectClose(try refRun(x) { $0 --> Activation(f) }, Naive.activation(x, f), "Activation(\(f)) standalone")
        // Positive inputs, weights and biases: every output is at least the bias (0.5).
        let positive = rng.tensor(n: 2, h: 5, w: 4, c: 3, 0.5, 1)
        let w = rng.floats(4 * 3 * 3 * 3, 0.1, 1), b = rng.floats(4, 0.5, 1)
        let conv = Naive.convolution(positive, weights: w, bias: b, outputChannels: 4, kernel: (3, 3), activation: .none)
        refExpectClose(try refRun(positive, parameters: ["c_W": w, "c_b": b]) {
            $0 --> Convolution(kernel: (3, 3), channels: 4, name: "c") --> Activation(f)
        }, Naive.activation(conv, f), "conv --> Activation(\(f)) (fused)")
        let dw = rng.floats(6 * positive.h * positive.w * positive.c, 0.1, 1), db = rng.floats(6, 0.5, 1)
        refExpectClose(try refRun(positive, parameters: ["d_W": dw, "d_b": db]) {
            $0 --> Dense(neurons: 6, activation: f, name: "d")
        }, Naive.dense(positive, weights: dw, bias: db, neurons: 6, activation: f), "Dense(activation: \(f))")
    }
}
