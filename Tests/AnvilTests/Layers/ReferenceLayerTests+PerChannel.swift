import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ReferenceLayerTests``: per-channel layers against the naive reference.
extension ReferenceLayerTests {
    @Test("PReLU, Softmax, LogSoftmax", arguments: 0 ..< 8)
    func perChannel(seed: Int) throws {
        var rng = RefRandom(seed: seed + 15000)
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(1 ... 5), w: rng.int(1 ... 5), c: rng.int(1 ... 6), -5, 5)
        let slopes = rng.floats(x.c, -0.5, 1.5)
        refExpectClose(try refRun(x, parameters: ["p_slopes": slopes]) { $0 --> PReLU(name: "p") },
                       Naive.prelu(x, slopes: slopes), "PReLU seed \(seed) \(x)")
        refExpectClose(try refRun(x) { $0 --> Softmax() }, Naive.softmax(x), "Softmax seed \(seed) \(x)")
        refExpectClose(try refRun(x) { $0 --> LogSoftmax() }, Naive.softmax(x, logarithm: true), "LogSoftmax seed \(seed) \(x)")
        // Large logits must not overflow.
        var large = x
        large.v = x.v.map { $0 * 40 }
        refExpectClose(try refRun(large) { $0 --> Softmax() }, Naive.softmax(large), "Softmax of large values seed \(seed)")
        refExpectClose(try refRun(large) { $0 --> LogSoftmax() }, Naive.softmax(large, logarithm: true),
                       "LogSoftmax of large values seed \(seed)")
    }

    /// Random BatchNormalization parameters for `channels` channels (positive variances).
    static func normalization(_ rng: inout RefRandom, channels: Int, prefix: String)
        -> (parameters: [String: [Float]], gamma: [Float], beta: [Float], mean: [Float], variance: [Float]) {
        let gamma = rng.floats(channels, 0.5, 2), beta = rng.floats(channels), mean = rng.floats(channels, -0.5, 0.5)
        let variance = rng.floats(channels, 0.05, 2)
        return (["\(prefix)_gamma": gamma, "\(prefix)_beta": beta, "\(prefix)_mean": mean, "\(prefix)_variance": variance],
                gamma, beta, mean, variance)
    }

    @Test("BatchNormalization standalone, after Add, after a conv with its own activation (not folded)",
          arguments: 0 ..< 6)
    func batchNormalizationUnfolded(seed: Int) throws {
        var rng = RefRandom(seed: seed + 17000)
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(1 ... 5), w: rng.int(1 ... 5), c: rng.int(1 ... 5), -3, 3)
        let epsilon = rng.pick([Float(0.001), 1e-5, 0.1])
        let bn = Self.normalization(&rng, channels: x.c, prefix: "bn")
        func reference(_ t: RefTensor) -> RefTensor {
            Naive.batchNormalization(t, gamma: bn.gamma, beta: bn.beta, mean: bn.mean, variance: bn.variance, epsilon: epsilon)
        }
        refExpectClose(try refRun(x, parameters: bn.parameters) { $0 --> BatchNormalization(epsilon: epsilon, name: "bn") },
                       reference(x), "BN standalone seed \(seed) \(x)")
        refExpectClose(try refRun(x, parameters: bn.parameters) {
            [$0, $0] --> Add() --> BatchNormalization(epsilon: epsilon, name: "bn")
        }, reference(Naive.add([x, x])), "Add --> BN seed \(seed)")
        let w = rng.floats(x.c * 9 * x.c), b = rng.floats(x.c)
        var parameters = bn.parameters
        parameters["c_W"] = w; parameters["c_b"] = b
        refExpectClose(try refRun(x, parameters: parameters) {
            $0 --> Convolution(kernel: (3, 3), channels: x.c, activation: .relu, name: "c")
                --> BatchNormalization(epsilon: epsilon, name: "bn")
        }, reference(Naive.convolution(x, weights: w, bias: b, outputChannels: x.c, kernel: (3, 3), activation: .relu)),
        "conv(relu) --> BN seed \(seed)")
        // After a concatenation (DenseNet's norm → relu): the BN step applies the activation.
        let activation = rng.pick([ActivationFunction.relu, .relu6, .sigmoid, .leakyRelu(alpha: 0.1)])
        refExpectClose(try refRun(x, parameters: bn.parameters) {
            [$0, $0] --> Add() --> BatchNormalization(epsilon: epsilon, name: "bn") --> Activation(activation)
        }, Naive.activation(reference(Naive.add([x, x])), activation), "Add --> BN --> \(activation) seed \(seed)")
    }

    @Test("BatchNormalization with a fused activation over a tensor large enough to be split across threads")
    func batchNormalizationActivationLarge() throws {
        var rng = RefRandom(seed: 17_900)
        let x = rng.tensor(n: 1, h: 30, w: 29, c: 96, -3, 3)
        let bn = Self.normalization(&rng, channels: x.c, prefix: "bn")
        let expected = Naive.activation(Naive.batchNormalization(Naive.add([x, x]), gamma: bn.gamma, beta: bn.beta, mean: bn.mean,
                                                                 variance: bn.variance, epsilon: 1e-5), .relu)
        refExpectClose(try refRun(x, parameters: bn.parameters) {
            [$0, $0] --> Add() --> BatchNormalization(epsilon: 1e-5, name: "bn") --> Activation(.relu)
        }, expected, "Add --> BN --> relu, 30×29×96")
        // A standalone activation over the same size (its copy is split in blocks, not images).
        refExpectClose(try refRun(x) { [$0, $0] --> Add() --> Activation(.tanh) },
                       Naive.activation(Naive.add([x, x]), .tanh), "Add --> tanh, 30×29×96")
    }

    @Test("BatchNormalization folded into conv / conv without bias / depthwise / dense, then a fused ReLU",
          arguments: 0 ..< 6)
    func batchNormalizationFolded(seed: Int) throws {
        var rng = RefRandom(seed: seed + 19000)
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(2 ... 6), w: rng.int(2 ... 6), c: rng.int(1 ... 4))
        let outC = rng.int(1 ... 5), epsilon = Float(1e-3)
        let bn = Self.normalization(&rng, channels: outC, prefix: "bn")
        func normalize(_ t: RefTensor) -> RefTensor {
            Naive.batchNormalization(t, gamma: bn.gamma, beta: bn.beta, mean: bn.mean, variance: bn.variance, epsilon: epsilon)
        }
        for useBias in [true, false] {
            let w = rng.floats(outC * 3 * 2 * x.c), b = rng.floats(outC)
            var parameters = bn.parameters
            parameters["c_W"] = w
            if useBias { parameters["c_b"] = b }
            let conv = Naive.convolution(x, weights: w, bias: useBias ? b : nil, outputChannels: outC, kernel: (3, 2),
                                         stride: (2, 1), padding: .explicit(top: 1, left: 0, bottom: 2, right: 1))
            let input = Input(width: x.w, height: x.h, channels: x.c)
            let output = input
                --> Convolution(kernel: (3, 2), channels: outC, stride: (2, 1), padding: .explicit(top: 1, left: 0, bottom: 2, right: 1),
                                useBias: useBias, name: "c")
                --> BatchNormalization(epsilon: epsilon, name: "bn")
                --> Activation(.relu)
            let model = try Model(input: input, output: output)
            #expect(model.plan.steps.count == 1, "conv --> BN --> relu should compile to one step")
            try model.compile(from: ArrayParameterSource(parameters))
            refExpectClose(try model.predict(try x.tensor()), Naive.activation(normalize(conv), .relu),
                           "conv(bias \(useBias)) --> BN --> relu folded, seed \(seed)")
        }
        // Depthwise (multiplier making outC channels is not always possible: use its own BN size).
        let m = 2, dwC = x.c * m
        let dbn = Self.normalization(&rng, channels: dwC, prefix: "bn")
        let dww = rng.floats(dwC * 9), dwb = rng.floats(dwC)
        var dparameters = dbn.parameters
        dparameters["k_W"] = Naive.depthwiseToTensorFlow(dww, channels: x.c, multiplier: m, kernel: (3, 3))
        dparameters["k_b"] = dwb
        let dwRef = Naive.batchNormalization(Naive.depthwise(x, weights: dww, bias: dwb, multiplier: m, kernel: (3, 3)),
                                             gamma: dbn.gamma, beta: dbn.beta, mean: dbn.mean, variance: dbn.variance, epsilon: epsilon)
        refExpectClose(try refRun(x, parameters: dparameters, layout: .tensorflow) {
            $0 --> DepthwiseConvolution(kernel: (3, 3), multiplier: m, name: "k") --> BatchNormalization(epsilon: epsilon, name: "bn")
                --> Activation(.relu6)
        }, Naive.activation(dwRef, .relu6), "depthwise --> BN --> relu6 folded, seed \(seed)")
        // Dense.
        let fw = rng.floats(outC * x.h * x.w * x.c), fb = rng.floats(outC)
        var fparameters = bn.parameters
        fparameters["d_W"] = Naive.denseToPyTorch(fw, outputs: outC, input: x.shape)
        fparameters["d_b"] = fb
        refExpectClose(try refRun(x, parameters: fparameters, layout: .pytorch) {
            $0 --> Dense(neurons: outC, name: "d") --> BatchNormalization(epsilon: epsilon, name: "bn") --> Activation(.relu)
        }, Naive.activation(normalize(Naive.dense(x, weights: fw, bias: fb, neurons: outC)), .relu),
        "dense --> BN --> relu folded, seed \(seed)")
    }

    @Test("BN folding (conv --> BN --> relu) gives the same output as the unfolded network")
    func batchNormalizationFoldingMatchesUnfused() throws {
        var rng = RefRandom(seed: 31337)
        let x = rng.tensor(n: 3, h: 7, w: 6, c: 3)
        let bn = Self.normalization(&rng, channels: 5, prefix: "bn")
        var parameters = bn.parameters
        parameters["c_W"] = rng.floats(5 * 3 * 3 * 3); parameters["c_b"] = rng.floats(5)
        // Folded: the conv output has one consumer.
        let input = Input(width: 6, height: 7, channels: 3)
        let conv = Convolution(kernel: (3, 3), channels: 5, name: "c")
        let norm = BatchNormalization(name: "bn")
        let relu = Activation(.relu, name: "r")
        let folded = try Model(input: input, output: input --> conv --> norm --> relu)
        #expect(folded.plan.steps.count == 1)
        try folded.compile(from: ArrayParameterSource(parameters))
        // Unfolded: the conv output and the BN output are model outputs too, so nothing fuses.
        let input2 = Input(width: 6, height: 7, channels: 3)
        let c2 = input2 --> Convolution(kernel: (3, 3), channels: 5, name: "c")
        let b2 = c2 --> BatchNormalization(name: "bn")
        let r2 = b2 --> Activation(.relu, name: "r")
        let unfolded = try Model(inputs: [input2], outputs: [r2, c2, b2])
        #expect(unfolded.plan.steps.count == 3)
        try unfolded.compile(from: ArrayParameterSource(parameters))
        let a = try folded.predict(try x.tensor())
        let b = try unfolded.predict([try x.tensor()])[0]
        refExpectClose(a, RefTensor(b), tolerance: 1e-5, "folded vs unfolded")
        let reference = Naive.activation(Naive.batchNormalization(
            Naive.convolution(x, weights: parameters["c_W"]!, bias: parameters["c_b"]!, outputChannels: 5, kernel: (3, 3)),
            gamma: bn.gamma, beta: bn.beta, mean: bn.mean, variance: bn.variance, epsilon: 0.001), .relu)
        refExpectClose(a, reference, "folded vs reference")
        refExpectClose(b, reference, "unfolded vs reference")
    }
}
