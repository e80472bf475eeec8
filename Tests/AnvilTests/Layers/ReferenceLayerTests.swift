import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Every layer and option, on random shapes and batch sizes, against the naive reference in
/// `ReferenceImplementation.swift`. Each random case is reproducible from its seed.
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
        let tileRows = max(64, ConvolutionKernel.tileBudget / depth)
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

    // MARK: - Pooling

    @Test("Max and average pooling: random kernels, strides, pads, dilations, ceil mode, countIncludesPadding",
          arguments: 0 ..< 64)
    func pooling(seed: Int) throws {
        var rng = RefRandom(seed: seed + 9000)
        let isMax = seed % 2 == 0
        var expected: RefTensor?
        var x = RefTensor(zerosN: 1, h: 1, w: 1, c: 1)
        var kernel = (1, 1), stride = (1, 1), dilation = (1, 1), padding = Padding.valid
        var ceilMode = false, countsPadding = false
        repeat {
            kernel = (rng.int(1 ... 4), rng.int(1 ... 4))
            stride = (rng.int(1 ... 3), rng.int(1 ... 3))
            dilation = rng.int(0 ... 2) == 0 ? (rng.int(1 ... 3), rng.int(1 ... 3)) : (1, 1)
            let effective = ((kernel.0 - 1) * dilation.0 + 1, (kernel.1 - 1) * dilation.1 + 1)
            switch rng.int(0 ... 3) {
            case 0: padding = .valid
            case 1: padding = .same
            default:  // explicit pads must be smaller than the window
                padding = .explicit(top: rng.int(0 ... min(2, effective.0 - 1)), left: rng.int(0 ... min(2, effective.1 - 1)),
                                    bottom: rng.int(0 ... min(2, effective.0 - 1)), right: rng.int(0 ... min(2, effective.1 - 1)))
            }
            ceilMode = padding != .same && rng.bool()
            countsPadding = rng.bool()
            x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(1 ... 9), w: rng.int(1 ... 9), c: rng.int(1 ... 4))
            expected = isMax
                ? Naive.maxPool(x, kernel: kernel, stride: stride, padding: padding, dilation: dilation, ceilMode: ceilMode)
                : Naive.averagePool(x, kernel: kernel, stride: stride, padding: padding, dilation: dilation,
                                    ceilMode: ceilMode, countIncludesPadding: countsPadding)
        } while expected == nil
        let context = "\(isMax ? "max" : "average") pool seed \(seed): input \(x), kernel \(kernel), stride \(stride), " +
            "dilation \(dilation), padding \(padding), ceil \(ceilMode), countIncludesPadding \(countsPadding)"
        let y = try refRun(x) { input in
            isMax
                ? input --> MaxPooling(kernel: kernel, stride: stride, padding: padding, dilation: dilation, ceilMode: ceilMode)
                : input --> AveragePooling(kernel: kernel, stride: stride, padding: padding, dilation: dilation,
                                           ceilMode: ceilMode, countIncludesPadding: countsPadding)
        }
        refExpectClose(y, expected!, context)
    }

    @Test("Pooling stride defaults to the kernel size")
    func poolingDefaultStride() throws {
        var rng = RefRandom(seed: 77)
        let x = rng.tensor(n: 2, h: 7, w: 8, c: 3)
        let y1 = try refRun(x) { $0 --> MaxPooling(kernel: (2, 3)) }
        refExpectClose(y1, Naive.maxPool(x, kernel: (2, 3), stride: (2, 3))!, "max pool default stride")
        let y2 = try refRun(x) { $0 --> AveragePooling(kernel: (3, 2)) }
        refExpectClose(y2, Naive.averagePool(x, kernel: (3, 2), stride: (3, 2))!, "average pool default stride")
    }

    @Test("Global average and max pooling", arguments: 0 ..< 8)
    func globalPooling(seed: Int) throws {
        var rng = RefRandom(seed: seed + 11000)
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(1 ... 7), w: rng.int(1 ... 7), c: rng.int(1 ... 5), -4, 4)
        refExpectClose(try refRun(x) { $0 --> GlobalAveragePooling() }, Naive.globalAveragePool(x), "GAP seed \(seed) \(x)")
        refExpectClose(try refRun(x) { $0 --> GlobalMaxPooling() }, Naive.globalMaxPool(x), "GMP seed \(seed) \(x)")
    }

    // MARK: - Dense and flatten

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
            let expected = RefTensor(n: 1, h: 1, w: 1, c: 7, floats: Array(all.image(b)))
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

    // MARK: - Activations

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

    // MARK: - Per-channel layers

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

    // MARK: - Merging

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

    // MARK: - Resize

    struct ResizeCase: Sendable, CustomTestStringConvertible {
        var input: (Int, Int)
        var size: (Int, Int)?
        var scale: (Float, Float)?
        var testDescription: String {
            "\(input.0)x\(input.1) " + (size.map { "to \($0.0)x\($0.1)" } ?? "by \(scale!.0)x\(scale!.1)")
        }
    }

    static let resizeCases: [ResizeCase] = [
        ResizeCase(input: (4, 5), size: (7, 3)), ResizeCase(input: (3, 3), size: (1, 1)),
        ResizeCase(input: (1, 4), size: (3, 8)), ResizeCase(input: (6, 6), size: (6, 6)),
        ResizeCase(input: (5, 7), size: (2, 3)), ResizeCase(input: (2, 2), size: (5, 1)),
        ResizeCase(input: (3, 4), scale: (2, 2)), ResizeCase(input: (4, 6), scale: (0.5, 0.5)),
        ResizeCase(input: (4, 3), scale: (1.5, 2.5)), ResizeCase(input: (5, 3), scale: (0.6, 1.7)),
        ResizeCase(input: (2, 3), scale: (3, 1)), ResizeCase(input: (3, 5), scale: (0.34, 0.8)),
    ]

    @Test("Resize: all four coordinate modes, by size and by scale",
          arguments: Resize.Coordinates.allCases, resizeCases)
    func resize(coordinates: Resize.Coordinates, testCase: ResizeCase) throws {
        var rng = RefRandom(seed: testCase.input.0 * 100 + testCase.input.1)
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: testCase.input.0, w: testCase.input.1, c: rng.int(1 ... 3))
        let expected = Naive.resize(x, size: testCase.size, scale: testCase.scale, coordinates: coordinates)
        let y = try refRun(x) { input in
            if let size = testCase.size {
                return input --> Resize(height: size.0, width: size.1, coordinates: coordinates)
            }
            return input --> Resize(scaleHeight: testCase.scale!.0, scaleWidth: testCase.scale!.1, coordinates: coordinates)
        }
        refExpectClose(y, expected, "resize \(testCase.testDescription) \(coordinates)")
    }

    // MARK: - Layouts

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
        refExpectClose(b, RefTensor(a), tolerance: 1e-6, "pytorch vs forge")
        refExpectClose(c, RefTensor(a), tolerance: 1e-6, "tensorflow vs forge")
        var r = Naive.convolution(x, weights: cw, bias: cb, outputChannels: 6, kernel: (3, 2), activation: .relu)
        r = Naive.convolution(r, weights: gw, bias: nil, outputChannels: 6, kernel: (2, 2), groups: 3)
        r = Naive.depthwise(r, weights: dw, bias: db, multiplier: 2, kernel: (3, 3), stride: (2, 2), activation: .tanh)
        #expect(r.shape == after)
        r = Naive.dense(r, weights: fw, bias: fb, neurons: 5)
        refExpectClose(a, r, "forge vs reference")
    }

    // MARK: - Graphs

    @Test("A layer applied twice shares its weights and requests each parameter once")
    func sharedWeights() throws {
        var rng = RefRandom(seed: 99)
        let x = rng.tensor(n: 2, h: 5, w: 5, c: 3)
        let w = rng.floats(3 * 3 * 3 * 3), b = rng.floats(3)
        let input = Input(width: 5, height: 5, channels: 3)
        let shared = Convolution(kernel: (3, 3), channels: 3)
        let output = input --> shared --> Activation(.relu) --> shared
        let model = try Model(input: input, output: output)
        #expect(model.layers.map(\.name) == ["conv_1", "activation_1", "conv_1"])
        #expect(model.layers.map(\.sharesParameters) == [false, false, true])
        #expect(model.parameterCount == 3 * 27 + 3)
        let requests = RequestLog()
        try model.compile { name, count, kind in
            requests.append("\(name)_\(kind.suffix):\(count)")
            switch kind {
            case .weights: return ParameterData(w)
            case .biases: return ParameterData(b)
            default: throw AnvilError(.missingParameter, "unexpected \(kind)")
            }
        }
        #expect(requests.items.sorted() == ["conv_1_W:81", "conv_1_b:3"])
        let once = Naive.convolution(x, weights: w, bias: b, outputChannels: 3, kernel: (3, 3), activation: .relu)
        let expected = Naive.convolution(once, weights: w, bias: b, outputChannels: 3, kernel: (3, 3))
        refExpectClose(try model.predict(try x.tensor()), expected, "shared conv applied twice")
    }

    @Test("A shared convolution whose first application has a folded BN: the second application is unaffected")
    func sharedWeightsWithFolding() throws {
        var rng = RefRandom(seed: 98)
        let x = rng.tensor(n: 3, h: 5, w: 4, c: 3)
        let w = rng.floats(3 * 3 * 3 * 3), b = rng.floats(3)
        let bn = Self.normalization(&rng, channels: 3, prefix: "bn")
        var parameters = bn.parameters
        parameters["shared_W"] = w; parameters["shared_b"] = b
        let input = Input(width: 4, height: 5, channels: 3)
        let shared = Convolution(kernel: (3, 3), channels: 3, name: "shared")
        let output = input --> shared --> BatchNormalization(name: "bn") --> Activation(.relu) --> shared --> Activation(.sigmoid)
        let model = try Model(input: input, output: output)
        #expect(model.plan.steps.count == 2)
        try model.compile(from: ArrayParameterSource(parameters))
        let first = Naive.activation(Naive.batchNormalization(
            Naive.convolution(x, weights: w, bias: b, outputChannels: 3, kernel: (3, 3)),
            gamma: bn.gamma, beta: bn.beta, mean: bn.mean, variance: bn.variance, epsilon: 0.001), .relu)
        let expected = Naive.convolution(first, weights: w, bias: b, outputChannels: 3, kernel: (3, 3), activation: .sigmoid)
        refExpectClose(try model.predict(try x.tensor()), expected, "shared conv, BN folded into the first application only")
    }

    @Test("Random DAGs (branches, merges, fusions, several outputs, buffer reuse) match the reference", arguments: 0 ..< 24)
    func randomGraph(seed: Int) throws {
        var rng = RefRandom(seed: seed + 40000)
        let h = rng.int(1 ... 5), w = rng.int(1 ... 5), batch = rng.pick(refBatchSizes)
        let input = Input(width: w, height: h, channels: rng.int(1 ... 4))
        var symbols: [SymbolicTensor] = [input]
        var refs: [RefTensor] = [rng.tensor(n: batch, h: h, w: w, c: input.shape.channels)]
        var sources: [[Int]] = [[]]
        var nodeParameters: [[String: [Float]]] = [[:]]
        var descriptions: [String] = ["input \(refs[0])"]
        for i in 1 ... rng.int(4 ... 14) {
            // Mostly recent tensors, sometimes any earlier one.
            func pick() -> Int { rng.int(0 ... 2) == 0 ? rng.int(0 ... symbols.count - 1) : max(0, symbols.count - 1 - rng.int(0 ... 2)) }
            let a = pick()
            let t = refs[a], s = symbols[a]
            var parameters: [String: [Float]] = [:]
            let symbol: SymbolicTensor, result: RefTensor, used: [Int], text: String
            switch rng.int(0 ... 7) {
            case 0:
                let f = rng.pick(refAllActivations)
                (symbol, result, used, text) = (s --> Activation(f), Naive.activation(t, f), [a], "activation \(f)")
            case 1:
                let c = rng.int(1 ... 4), useBias = rng.bool(), f = rng.bool() ? ActivationFunction.none : rng.pick(refAllActivations)
                let weights = rng.floats(c * t.c), bias = useBias ? rng.floats(c) : nil
                parameters["p\(i)_W"] = weights
                if let bias { parameters["p\(i)_b"] = bias }
                (symbol, result, used, text) = (s --> PointwiseConvolution(channels: c, useBias: useBias, activation: f, name: "p\(i)"),
                                                Naive.pointwise(t, weights: weights, bias: bias, outputChannels: c, activation: f),
                                                [a], "pointwise \(c) \(f)")
            case 2:
                let bn = Self.normalization(&rng, channels: t.c, prefix: "n\(i)")
                parameters = bn.parameters
                (symbol, result, used, text) = (s --> BatchNormalization(name: "n\(i)"),
                                                Naive.batchNormalization(t, gamma: bn.gamma, beta: bn.beta, mean: bn.mean,
                                                                         variance: bn.variance, epsilon: 0.001), [a], "bn")
            case 3:
                var others = (0 ..< symbols.count).filter { refs[$0].c == t.c }
                if others.count > 1 { others.removeAll { $0 == a } }
                let b = others[rng.int(0 ... others.count - 1)], c = others[rng.int(0 ... others.count - 1)]
                let three = rng.bool(), f = rng.pick(refAllActivations)
                let list = three ? [a, b, c] : [a, b]
                (symbol, result, used, text) = (list.map { symbols[$0] } --> Add(activation: f), Naive.add(list.map { refs[$0] }, activation: f),
                                                list, "add \(list) \(f)")
            case 4:
                let list = [a] + (0 ..< rng.int(1 ... 2)).map { _ in pick() }
                (symbol, result, used, text) = (list.map { symbols[$0] } --> Concatenate(), Naive.concatenate(list.map { refs[$0] }),
                                                list, "concat \(list)")
            case 5:
                if rng.bool() {
                    (symbol, result, used, text) = (s --> MaxPooling(kernel: (3, 3), stride: (1, 1), padding: .same),
                                                    Naive.maxPool(t, kernel: (3, 3), stride: (1, 1), padding: .same)!, [a], "maxpool")
                } else {
                    (symbol, result, used, text) = (s --> AveragePooling(kernel: (3, 3), stride: (1, 1), padding: .same),
                                                    Naive.averagePool(t, kernel: (3, 3), stride: (1, 1), padding: .same)!, [a], "avgpool")
                }
            case 6:
                let c = rng.int(1 ... 4), weights = rng.floats(c * 9 * t.c), bias = rng.floats(c)
                parameters = ["c\(i)_W": weights, "c\(i)_b": bias]
                (symbol, result, used, text) = (s --> Convolution(kernel: (3, 3), channels: c, name: "c\(i)"),
                                                Naive.convolution(t, weights: weights, bias: bias, outputChannels: c, kernel: (3, 3)),
                                                [a], "conv \(c)")
            default:
                let m = rng.int(1 ... 2), weights = rng.floats(t.c * m * 9)
                parameters = ["d\(i)_W": weights]
                (symbol, result, used, text) = (s --> DepthwiseConvolution(kernel: (3, 3), multiplier: m, useBias: false, name: "d\(i)"),
                                                Naive.depthwise(t, weights: weights, bias: nil, multiplier: m, kernel: (3, 3)),
                                                [a], "depthwise \(m)")
            }
            symbols.append(symbol); refs.append(result); sources.append(used); nodeParameters.append(parameters)
            descriptions.append("\(i): \(text) of \(used)")
        }
        // Outputs: the last tensor and up to two earlier ones (possibly the input itself).
        var outputs = [symbols.count - 1]
        for _ in 0 ..< rng.int(0 ... 2) {
            let o = rng.int(0 ... symbols.count - 1)
            if !outputs.contains(o) { outputs.append(o) }
        }
        // Only layers the outputs depend on are in the model; give parameters for those alone.
        var reachable = Set<Int>(), stack = outputs
        while let n = stack.popLast() { if reachable.insert(n).inserted { stack += sources[n] } }
        var parameters: [String: [Float]] = [:]
        for n in reachable { parameters.merge(nodeParameters[n]) { a, _ in a } }

        let model = try Model(inputs: [input], outputs: outputs.map { symbols[$0] })
        try model.compile(from: ArrayParameterSource(parameters))
        let results = try model.predict([try refs[0].tensor()])
        let graph = descriptions.joined(separator: "; ")
        for (k, o) in outputs.enumerated() {
            refExpectClose(results[k], refs[o], "random graph seed \(seed), output \(k) (tensor \(o)) of [\(graph)]")
        }
    }

    final class RequestLog: @unchecked Sendable {
        var items: [String] = []
        func append(_ item: String) { items.append(item) }
    }

    @Test("Multi-input, multi-output model")
    func multipleInputsAndOutputs() throws {
        var rng = RefRandom(seed: 555)
        let xa = rng.tensor(n: 3, h: 6, w: 6, c: 2), xb = rng.tensor(n: 3, h: 3, w: 3, c: 4)
        let w = rng.floats(4 * 9 * 2), b = rng.floats(4), fw = rng.floats(10 * 3 * 3 * 8), fb = rng.floats(10)
        let a = Input(width: 6, height: 6, channels: 2, name: "image")
        let bIn = Input(width: 3, height: 3, channels: 4, name: "extra")
        let features = a --> Convolution(kernel: (3, 3), channels: 4, activation: .relu, name: "conv") --> MaxPooling(kernel: (2, 2))
        let joined = [features, bIn] --> Concatenate(name: "join")
        let scores = joined --> Dense(neurons: 10, name: "fc") --> Softmax(name: "probabilities")
        let pooled = joined --> GlobalAveragePooling(name: "pooled")
        let model = try Model(inputs: [a, bIn], outputs: [scores, pooled, features])
        #expect(model.inputNames == ["image", "extra"])
        #expect(model.outputNames == ["probabilities", "pooled", "maxpool_1"])
        #expect(model.outputShapes == [.vector(10), .vector(8), Shape(height: 3, width: 3, channels: 4)])
        try model.compile(from: ArrayParameterSource(["conv_W": w, "conv_b": b, "fc_W": fw, "fc_b": fb]))
        let outputs = try model.predict([try xa.tensor(), try xb.tensor()])
        #expect(outputs.count == 3)
        let rf = Naive.maxPool(Naive.convolution(xa, weights: w, bias: b, outputChannels: 4, kernel: (3, 3), activation: .relu),
                               kernel: (2, 2), stride: (2, 2))!
        let rj = Naive.concatenate([rf, xb])
        refExpectClose(outputs[0], Naive.softmax(Naive.dense(rj, weights: fw, bias: fb, neurons: 10)), "scores")
        refExpectClose(outputs[1], Naive.globalAveragePool(rj), "pooled")
        refExpectClose(outputs[2], rf, "features")
    }

    @Test("Automatic names are deterministic: per prefix, in topological order, skipping user names")
    func automaticNames() throws {
        func build() throws -> [String] {
            let input = Input(width: 16, height: 16, channels: 3)
            let x = input --> Convolution(kernel: (3, 3), channels: 4) --> BatchNormalization() --> PReLU()
                --> Convolution(kernel: (3, 3), channels: 4, name: "conv_1") --> MaxPooling(kernel: (2, 2))
                --> DepthwiseConvolution(kernel: (3, 3)) --> PointwiseConvolution(channels: 8) --> AveragePooling(kernel: (2, 2))
                --> Convolution(kernel: (1, 1), channels: 8) --> Activation(.relu)
            let y = [x, x --> Activation(.sigmoid)] --> Add()
            let z = [y, y] --> Concatenate() --> Resize(height: 8, width: 8) --> GlobalMaxPooling() --> Flatten()
                --> Dense(neurons: 3) --> Dense(neurons: 2) --> Softmax() --> LogSoftmax()
            return try Model(input: input, output: z).layers.map(\.name)
        }
        let names = try build()
        #expect(names == [
            "conv_2", "bn_1", "prelu_1", "conv_1", "maxpool_1", "depthwise_1", "pointwise_1", "avgpool_1", "conv_3",
            "activation_1", "activation_2", "add_1", "concat_1", "resize_1", "gmp_1", "flatten_1", "dense_1", "dense_2",
            "softmax_1", "logsoftmax_1",
        ])
        #expect(try build() == names)
        // GlobalAveragePooling's prefix.
        let input = Input(width: 4, height: 4, channels: 2)
        #expect(try Model(input: input, output: input --> GlobalAveragePooling()).layers.map(\.name) == ["gap_1"])
    }

    @Test("Inception-style branches joined by Concatenate, and a residual block joined by Add")
    func branchingAndMerging() throws {
        var rng = RefRandom(seed: 8080)
        let x = rng.tensor(n: 2, h: 8, w: 7, c: 4)
        var p: [String: [Float]] = [:]
        p["b1_W"] = rng.floats(3 * 4); p["b1_b"] = rng.floats(3)
        p["b2a_W"] = rng.floats(2 * 4); p["b2a_b"] = rng.floats(2)
        p["b2b_W"] = rng.floats(5 * 9 * 2); p["b2b_b"] = rng.floats(5)
        p["b3_W"] = rng.floats(2 * 25 * 4); p["b3_b"] = rng.floats(2)
        p["b4_W"] = rng.floats(3 * 4); p["b4_b"] = rng.floats(3)
        p["r1_W"] = rng.floats(13 * 9 * 13)
        p["r2_W"] = rng.floats(13 * 9 * 13)
        let bn1 = Self.normalization(&rng, channels: 13, prefix: "n1"), bn2 = Self.normalization(&rng, channels: 13, prefix: "n2")
        p.merge(bn1.parameters) { a, _ in a }
        p.merge(bn2.parameters) { a, _ in a }

        let y = try refRun(x, parameters: p) { input in
            let b1 = input --> PointwiseConvolution(channels: 3, activation: .relu, name: "b1")
            let b2 = input --> Convolution(kernel: (1, 1), channels: 2, activation: .relu, name: "b2a")
                --> Convolution(kernel: (3, 3), channels: 5, activation: .relu, name: "b2b")
            let b3 = input --> Convolution(kernel: (5, 5), channels: 2, activation: .relu, name: "b3")
            let b4 = input --> MaxPooling(kernel: (3, 3), stride: (1, 1), padding: .same)
                --> Convolution(kernel: (1, 1), channels: 3, activation: .relu, name: "b4")
            let inception = [b1, b2, b3, b4] --> Concatenate(name: "mixed")
            let residual = inception
                --> Convolution(kernel: (3, 3), channels: 13, useBias: false, name: "r1") --> BatchNormalization(name: "n1")
                --> Activation(.relu)
                --> Convolution(kernel: (3, 3), channels: 13, useBias: false, name: "r2") --> BatchNormalization(name: "n2")
            return [inception, residual] --> Add(activation: .relu)
        }

        func conv(_ t: RefTensor, _ name: String, _ out: Int, _ k: Int, bias: Bool = true) -> RefTensor {
            Naive.convolution(t, weights: p["\(name)_W"]!, bias: bias ? p["\(name)_b"]! : nil, outputChannels: out,
                              kernel: (k, k), activation: bias ? .relu : .none)
        }
        let b1 = conv(x, "b1", 3, 1)
        let b2 = conv(conv(x, "b2a", 2, 1), "b2b", 5, 3)
        let b3 = conv(x, "b3", 2, 5)
        let b4 = conv(Naive.maxPool(x, kernel: (3, 3), stride: (1, 1), padding: .same)!, "b4", 3, 1)
        let mixed = Naive.concatenate([b1, b2, b3, b4])
        func norm(_ t: RefTensor, _ bn: (parameters: [String: [Float]], gamma: [Float], beta: [Float], mean: [Float], variance: [Float])) -> RefTensor {
            Naive.batchNormalization(t, gamma: bn.gamma, beta: bn.beta, mean: bn.mean, variance: bn.variance, epsilon: 0.001)
        }
        let r = norm(conv(Naive.activation(norm(conv(mixed, "r1", 13, 3, bias: false), bn1), .relu), "r2", 13, 3, bias: false), bn2)
        // Two convolutions with BN (variance down to ~0.1) amplify float32 rounding; 1e-3 as ONNX's rtol.
        refExpectClose(y, Naive.add([mixed, r], activation: .relu), tolerance: 1e-3, "inception + residual")
    }
}
