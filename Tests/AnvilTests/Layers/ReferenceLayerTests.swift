import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Every layer and option, on random shapes and batch sizes, against the naive reference in
/// `ReferenceImplementation.swift`. Each random case is reproducible from its seed. One suite
/// (one name for `Scripts/test.sh`'s filter) over several files: convolutions here, each other
/// family in `ReferenceLayerTests+<family>.swift` (graphs: in `Compile/`).
@Suite("Reference layer tests")
struct ReferenceLayerTests {
    // MARK: - Convolutions

    /// Draws a padding: SAME, VALID or explicit (possibly asymmetric) pads up to `maxPad`.
    static func randomPadding(_ rng: inout RefRandom, maxPad: Int = 3) -> Padding {
        switch rng.int(0 ... 3) {
        case 0: return .same
        case 1: return .valid
        default: return .explicit(top: rng.int(0 ... maxPad), left: rng.int(0 ... maxPad),
                                  bottom: rng.int(0 ... maxPad), right: rng.int(0 ... maxPad))
        }
    }

    @Test("Convolution: random shapes, strides, pads, dilations, groups, bias, activation; all three layouts",
          arguments: 0 ..< 48)
    func convolution(seed: Int) throws {
        var rng = RefRandom(seed: seed)
        var groups = 1, inPerGroup = 1, outPerGroup = 1, kernel = (1, 1), stride = (1, 1), dilation = (1, 1)
        var padding = Padding.same, h = 1, w = 1
        repeat {
            groups = rng.pick([1, 1, 1, 2, 3, 4])
            inPerGroup = rng.int(1 ... 3); outPerGroup = rng.int(1 ... 3)
            kernel = (rng.int(1 ... 4), rng.int(1 ... 4))
            stride = (rng.int(1 ... 3), rng.int(1 ... 3))
            dilation = (rng.int(1 ... 2), rng.int(1 ... 2))
            padding = Self.randomPadding(&rng)
            h = rng.int(1 ... 9); w = rng.int(1 ... 9)
        } while Naive.window(h: h, w: w, kernel: kernel, stride: stride, dilation: dilation, padding: padding) == nil
        let inC = groups * inPerGroup, outC = groups * outPerGroup
        let batch = rng.pick(refBatchSizes)
        let useBias = rng.bool()
        let activation = rng.pick(refAllActivations)
        let x = rng.tensor(n: batch, h: h, w: w, c: inC)
        let weights = rng.floats(outC * kernel.0 * kernel.1 * inPerGroup)
        let bias = useBias ? rng.floats(outC) : nil
        let expected = Naive.convolution(x, weights: weights, bias: bias, outputChannels: outC, kernel: kernel,
                                         stride: stride, padding: padding, dilation: dilation, groups: groups,
                                         activation: activation)
        let context = "conv seed \(seed): input \(x), kernel \(kernel), stride \(stride), dilation \(dilation), " +
            "padding \(padding), groups \(groups), \(inC)->\(outC) channels, bias \(useBias), \(activation)"
        for layout in WeightLayout.allCases {
            let data: [Float]
            switch layout {
            case .forge: data = weights
            case .pytorch: data = Naive.convolutionToPyTorch(weights, outputs: outC, kernel: kernel, inputs: inPerGroup)
            case .tensorflow: data = Naive.convolutionToTensorFlow(weights, outputs: outC, kernel: kernel, inputs: inPerGroup)
            }
            var parameters = ["L_W": data]
            if let bias { parameters["L_b"] = bias }
            let y = try refRun(x, parameters: parameters, layout: layout) {
                $0 --> Convolution(kernel: kernel, channels: outC, stride: stride, padding: padding, dilation: dilation,
                                   groups: groups, useBias: useBias, activation: activation, name: "L")
            }
            refExpectClose(y, expected, "\(context), layout \(layout)")
        }
    }

    @Test("Convolution with groups == input channels (the depthwise path) and a channel multiplier",
          arguments: [(1, 3), (2, 1), (3, 2), (4, 3)])
    func convolutionDepthwiseGroups(channels: Int, multiplier: Int) throws {
        var rng = RefRandom(seed: 1000 + channels * 10 + multiplier)
        let kernel = (3, 2), outC = channels * multiplier
        let x = rng.tensor(n: 2, h: 6, w: 5, c: channels)
        let weights = rng.floats(outC * kernel.0 * kernel.1), bias = rng.floats(outC)
        let expected = Naive.convolution(x, weights: weights, bias: bias, outputChannels: outC, kernel: kernel,
                                         stride: (2, 1), padding: .same, dilation: (1, 2), groups: channels,
                                         activation: .relu6)
        for layout in WeightLayout.allCases {
            let data: [Float]
            switch layout {
            case .forge: data = weights
            case .pytorch: data = Naive.convolutionToPyTorch(weights, outputs: outC, kernel: kernel, inputs: 1)
            case .tensorflow: data = Naive.convolutionToTensorFlow(weights, outputs: outC, kernel: kernel, inputs: 1)
            }
            let y = try refRun(x, parameters: ["g_W": data, "g_b": bias], layout: layout) {
                $0 --> Convolution(kernel: kernel, channels: outC, stride: (2, 1), padding: .same, dilation: (1, 2),
                                   groups: channels, activation: .relu6, name: "g")
            }
            refExpectClose(y, expected, "grouped conv c \(channels) m \(multiplier) layout \(layout)")
        }
    }

    @Test("DepthwiseConvolution: random multiplier, shapes, strides, pads, dilations; all three layouts",
          arguments: 0 ..< 32)
    func depthwise(seed: Int) throws {
        var rng = RefRandom(seed: seed + 5000)
        var channels = 1, m = 1, kernel = (1, 1), stride = (1, 1), dilation = (1, 1), padding = Padding.same, h = 1, w = 1
        repeat {
            channels = rng.int(1 ... 4); m = rng.int(1 ... 3)
            kernel = (rng.int(1 ... 4), rng.int(1 ... 4))
            stride = (rng.int(1 ... 3), rng.int(1 ... 3))
            dilation = (rng.int(1 ... 2), rng.int(1 ... 2))
            padding = Self.randomPadding(&rng)
            h = rng.int(1 ... 9); w = rng.int(1 ... 9)
        } while Naive.window(h: h, w: w, kernel: kernel, stride: stride, dilation: dilation, padding: padding) == nil
        let batch = rng.pick(refBatchSizes), useBias = rng.bool(), activation = rng.pick(refAllActivations)
        let x = rng.tensor(n: batch, h: h, w: w, c: channels)
        let weights = rng.floats(channels * m * kernel.0 * kernel.1)
        let bias = useBias ? rng.floats(channels * m) : nil
        let expected = Naive.depthwise(x, weights: weights, bias: bias, multiplier: m, kernel: kernel, stride: stride,
                                       padding: padding, dilation: dilation, activation: activation)
        let context = "depthwise seed \(seed): input \(x), multiplier \(m), kernel \(kernel), stride \(stride), " +
            "dilation \(dilation), padding \(padding), bias \(useBias), \(activation)"
        for layout in WeightLayout.allCases {
            let data: [Float]
            switch layout {
            case .forge: data = weights
            case .pytorch: data = Naive.depthwiseToPyTorch(weights)
            case .tensorflow: data = Naive.depthwiseToTensorFlow(weights, channels: channels, multiplier: m, kernel: kernel)
            }
            var parameters = ["dw_W": data]
            if let bias { parameters["dw_b"] = bias }
            let y = try refRun(x, parameters: parameters, layout: layout) {
                $0 --> DepthwiseConvolution(kernel: kernel, multiplier: m, stride: stride, padding: padding,
                                            dilation: dilation, useBias: useBias, activation: activation, name: "dw")
            }
            refExpectClose(y, expected, "\(context), layout \(layout)")
        }
    }

    @Test("PointwiseConvolution: random channels, bias, activation; all three layouts", arguments: 0 ..< 12)
    func pointwise(seed: Int) throws {
        var rng = RefRandom(seed: seed + 7000)
        let inC = rng.int(1 ... 6), outC = rng.int(1 ... 6), batch = rng.pick(refBatchSizes)
        let useBias = rng.bool(), activation = rng.pick(refAllActivations)
        let x = rng.tensor(n: batch, h: rng.int(1 ... 6), w: rng.int(1 ... 6), c: inC)
        let weights = rng.floats(outC * inC), bias = useBias ? rng.floats(outC) : nil
        let expected = Naive.pointwise(x, weights: weights, bias: bias, outputChannels: outC, activation: activation)
        for layout in WeightLayout.allCases {
            let data = layout == .tensorflow ? Naive.denseToTensorFlow(weights, outputs: outC, inputs: inC) : weights
            var parameters = ["pw_W": data]
            if let bias { parameters["pw_b"] = bias }
            let y = try refRun(x, parameters: parameters, layout: layout) {
                $0 --> PointwiseConvolution(channels: outC, useBias: useBias, activation: activation, name: "pw")
            }
            refExpectClose(y, expected, "pointwise seed \(seed): \(x) -> \(outC), bias \(useBias), \(activation), layout \(layout)")
        }
    }

    @Test("A convolution whose im2col matrix is split into several tiles, a tile crossing images")
    func tiledConvolution() throws {
        var rng = RefRandom(seed: 6060)
        let channels = 4096, kernel = (3, 3)
        let depth = kernel.0 * kernel.1 * channels
        let tileRows = max(64, Im2colConvolutionKernel.tileBudget / depth)
        let x = rng.tensor(n: 3, h: 5, w: 5, c: channels)
        #expect(x.n * x.h * x.w > tileRows, "the test must span more than one tile")
        #expect((x.n * x.h * x.w) % tileRows != 0 && tileRows % (x.h * x.w) != 0, "a tile should end inside an image")
        let w = rng.floats(2 * depth), b = rng.floats(2)
        let y = try refRun(x, parameters: ["big_W": w, "big_b": b]) {
            $0 --> Convolution(kernel: kernel, channels: 2, activation: .relu, name: "big")
        }
        refExpectClose(y, Naive.convolution(x, weights: w, bias: b, outputChannels: 2, kernel: kernel, activation: .relu),
                       "tiled convolution")
    }

    @Test("Larger tensors (multi-threaded paths) through every element-wise, pooling and merging kernel")
    func largerTensors() throws {
        var rng = RefRandom(seed: 7070)
        let x = rng.tensor(n: 3, h: 24, w: 20, c: 16, -3, 3)
        let bn = Self.normalization(&rng, channels: 16, prefix: "bn")
        let slopes = rng.floats(16), dw = rng.floats(16 * 9), pw = rng.floats(8 * 16)
        var parameters = bn.parameters
        parameters["pr_slopes"] = slopes; parameters["dw_W"] = dw; parameters["pw_W"] = pw
        let input = Input(width: 20, height: 24, channels: 16)
        let normalized = input --> BatchNormalization(name: "bn")
        let p = normalized --> PReLU(name: "pr")
        let d = p --> DepthwiseConvolution(kernel: (3, 3), useBias: false, activation: .hardSwish, name: "dw")
        let sum = [d, p, input] --> Add(activation: .elu)
        let joined = [sum, sum --> PointwiseConvolution(channels: 8, useBias: false, name: "pw")] --> Concatenate()
        let pooled = joined --> MaxPooling(kernel: (3, 3), stride: (1, 1), padding: .same)
        let averaged = joined --> AveragePooling(kernel: (2, 3), stride: (1, 1), padding: .same, countIncludesPadding: true)
        let resized = averaged --> Resize(height: 30, width: 17, coordinates: .alignCorners)
        let probabilities = [pooled, joined] --> Add() --> Softmax()
        let model = try Model(inputs: [input], outputs: [probabilities, resized, sum --> GlobalAveragePooling(), joined --> Flatten(order: .channelsFirst)])
        try model.compile(from: ArrayParameterSource(parameters))
        let outputs = try model.predict([try x.tensor()])

        let rn = Naive.batchNormalization(x, gamma: bn.gamma, beta: bn.beta, mean: bn.mean, variance: bn.variance, epsilon: 0.001)
        let rp = Naive.prelu(rn, slopes: slopes)
        let rd = Naive.depthwise(rp, weights: dw, bias: nil, multiplier: 1, kernel: (3, 3), activation: .hardSwish)
        let rs = Naive.add([rd, rp, x], activation: .elu)
        let rj = Naive.concatenate([rs, Naive.pointwise(rs, weights: pw, bias: nil, outputChannels: 8)])
        let rm = Naive.maxPool(rj, kernel: (3, 3), stride: (1, 1), padding: .same)!
        let ra = Naive.averagePool(rj, kernel: (2, 3), stride: (1, 1), padding: .same, countIncludesPadding: true)!
        refExpectClose(outputs[0], Naive.softmax(Naive.add([rm, rj])), "softmax of max pool + concat")
        refExpectClose(outputs[1], Naive.resize(ra, size: (30, 17), coordinates: .alignCorners), "resized average pool")
        refExpectClose(outputs[2], Naive.globalAveragePool(rs), "global average pool")
        refExpectClose(outputs[3], Naive.flatten(rj, order: .channelsFirst), "flatten channels-first")
    }
}
