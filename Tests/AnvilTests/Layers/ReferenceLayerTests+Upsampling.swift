import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ReferenceLayerTests``: transposed convolutions against the naive (scatter) reference.
extension ReferenceLayerTests {
    @Test("TransposedConvolution: random strides, asymmetric pads, output padding, dilations, groups, bias, activation; all three layouts",
          arguments: 0 ..< 24)
    func transposedConvolution(seed: Int) throws {
        var rng = RefRandom(seed: seed + 7100)
        var groups = 1, kernel = (1, 1), stride = (1, 1), dilation = (1, 1), outputPadding = (0, 0)
        var pads = (0, 0, 0, 0), h = 1, w = 1
        repeat {
            groups = rng.pick([1, 1, 2, 3])
            kernel = (rng.int(1 ... 4), rng.int(1 ... 4))
            stride = (rng.int(1 ... 3), rng.int(1 ... 3))
            dilation = (rng.int(1 ... 2), rng.int(1 ... 2))
            outputPadding = (rng.int(0 ... max(stride.0, dilation.0) - 1), rng.int(0 ... max(stride.1, dilation.1) - 1))
            pads = (rng.int(0 ... 2), rng.int(0 ... 2), rng.int(0 ... 2), rng.int(0 ... 2))
            h = rng.int(1 ... 6); w = rng.int(1 ... 6)
        } while Naive.transposedLength(h, kernel: kernel.0, stride: stride.0, dilation: dilation.0, before: pads.0,
                                       after: pads.2, outputPadding: outputPadding.0) < 1
            || Naive.transposedLength(w, kernel: kernel.1, stride: stride.1, dilation: dilation.1, before: pads.1,
                                      after: pads.3, outputPadding: outputPadding.1) < 1
        let inC = groups * rng.int(1 ... 3), outC = groups * rng.int(1 ... 3)
        let useBias = rng.bool()
        let activation = rng.pick(refAllActivations)
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: h, w: w, c: inC)
        let weights = rng.floats(outC * kernel.0 * kernel.1 * (inC / groups))
        let bias = useBias ? rng.floats(outC) : nil
        let expected = Naive.transposedConvolution(x, weights: weights, bias: bias, outputChannels: outC, kernel: kernel,
                                                   stride: stride, pads: pads, outputPadding: outputPadding,
                                                   dilation: dilation, groups: groups, activation: activation)
        let context = "deconv seed \(seed): input \(x), kernel \(kernel), stride \(stride), dilation \(dilation), pads \(pads), " +
            "output padding \(outputPadding), groups \(groups), \(inC)->\(outC), bias \(useBias), \(activation)"
        for layout in WeightLayout.allCases {
            let data: [Float]
            switch layout {
            case .forge: data = weights
            case .pytorch: data = Naive.transposedToPyTorch(weights, outputs: outC, kernel: kernel, inputs: inC, groups: groups)
            case .tensorflow: data = Naive.transposedToTensorFlow(weights, outputs: outC, kernel: kernel, inputs: inC, groups: groups)
            }
            var parameters = ["L_W": data]
            if let bias { parameters["L_b"] = bias }
            let y = try refRun(x, parameters: parameters, layout: layout) {
                $0 --> TransposedConvolution(kernel: kernel, channels: outC, stride: stride,
                                             padding: .explicit(top: pads.0, left: pads.1, bottom: pads.2, right: pads.3),
                                             outputPadding: outputPadding, dilation: dilation, groups: groups,
                                             useBias: useBias, activation: activation, name: "L")
            }
            refExpectClose(y, expected, "\(context), layout \(layout)")
        }
    }

    @Test("TransposedConvolution SAME: output in × stride, the smaller half of the pad at the top/left",
          arguments: [(1, 2, 0), (2, 2, 0), (3, 2, 1), (4, 2, 0), (3, 1, 0), (5, 3, 2), (1, 3, 0)])
    func transposedConvolutionSame(kernel: Int, stride: Int, outputPadding: Int) throws {
        var rng = RefRandom(seed: kernel * 100 + stride * 10 + outputPadding)
        let x = rng.tensor(n: 2, h: 3, w: 4, c: 3)
        let weights = rng.floats(5 * kernel * kernel * 3), bias = rng.floats(5)
        let fullH = (x.h - 1) * stride + kernel + outputPadding, fullW = (x.w - 1) * stride + kernel + outputPadding
        let totalH = fullH - x.h * stride, totalW = fullW - x.w * stride
        // Pads as they fall: a negative total (kernel smaller than the stride) leaves bottom rows with the bias only.
        let pads = (max(totalH, 0) / 2, max(totalW, 0) / 2, totalH - max(totalH, 0) / 2, totalW - max(totalW, 0) / 2)
        let expected = Naive.transposedConvolution(x, weights: weights, bias: bias, outputChannels: 5, kernel: (kernel, kernel),
                                                   stride: (stride, stride), pads: pads, outputPadding: (outputPadding, outputPadding),
                                                   dilation: (1, 1), groups: 1)
        let y = try refRun(x, parameters: ["s_W": weights, "s_b": bias]) {
            $0 --> TransposedConvolution(kernel: (kernel, kernel), channels: 5, stride: (stride, stride), padding: .same,
                                         outputPadding: (outputPadding, outputPadding), name: "s")
        }
        #expect(y.shape == Shape(height: x.h * stride, width: x.w * stride, channels: 5))
        refExpectClose(y, expected, "deconv same k \(kernel) s \(stride) op \(outputPadding)")
    }

    @Test("TransposedConvolution + BatchNormalization + ReLU fuse into one kernel with the same result")
    func transposedConvolutionFusion() throws {
        var rng = RefRandom(seed: 77)
        let x = rng.tensor(n: 2, h: 3, w: 3, c: 4)
        let weights = rng.floats(6 * 2 * 2 * 4), bias = rng.floats(6)
        let gamma = rng.floats(6), beta = rng.floats(6), mean = rng.floats(6), variance = rng.floats(6, 0.5, 2)
        var expected = Naive.transposedConvolution(x, weights: weights, bias: bias, outputChannels: 6, kernel: (2, 2),
                                                   stride: (2, 2), pads: (0, 0, 0, 0), outputPadding: (0, 0),
                                                   dilation: (1, 1), groups: 1)
        expected = Naive.activation(Naive.batchNormalization(expected, gamma: gamma, beta: beta, mean: mean,
                                                             variance: variance, epsilon: 1e-3), .relu)
        let y = try refRun(x, parameters: ["d_W": weights, "d_b": bias, "bn_gamma": gamma, "bn_beta": beta,
                                           "bn_mean": mean, "bn_variance": variance]) {
            $0 --> TransposedConvolution(kernel: (2, 2), channels: 6, stride: (2, 2), name: "d")
               --> BatchNormalization(epsilon: 1e-3, name: "bn") --> Activation(.relu)
        }
        refExpectClose(y, expected, "deconv + bn + relu")
    }
}

/// ``ReferenceLayerTests``: Resize's nearest (every rounding) and cubic modes, every coordinate mapping.
extension ReferenceLayerTests {
    /// Output size, scale and resized length of a resize case, as the reference takes them.
    static func resizeGeometry(_ x: RefTensor, _ testCase: ResizeCase) -> (Int, Int, (Double, Double), (Double, Double)) {
        if let size = testCase.size {
            return (size.0, size.1, (Double(size.0) / Double(x.h), Double(size.1) / Double(x.w)),
                    (Double(size.0), Double(size.1)))
        }
        let scale = (Double(testCase.scale!.0), Double(testCase.scale!.1))
        return (Int((Double(x.h) * scale.0).rounded(.down)), Int((Double(x.w) * scale.1).rounded(.down)), scale,
                (Double(x.h) * scale.0, Double(x.w) * scale.1))
    }

    /// `x` through a Resize with these options.
    static func resized(_ x: RefTensor, _ testCase: ResizeCase, coordinates: Resize.Coordinates, mode: Resize.Mode,
                        rounding: Resize.NearestRounding = .roundPreferFloor, a: Float = -0.75,
                        excludeOutside: Bool = false) throws -> Tensor {
        try refRun(x) { input in
            if let size = testCase.size {
                return input --> Resize(height: size.0, width: size.1, coordinates: coordinates, mode: mode,
                                        nearestRounding: rounding, cubicCoefficient: a, excludeOutside: excludeOutside)
            }
            return input --> Resize(scaleHeight: testCase.scale!.0, scaleWidth: testCase.scale!.1, coordinates: coordinates,
                                    mode: mode, nearestRounding: rounding, cubicCoefficient: a, excludeOutside: excludeOutside)
        }
    }

    @Test("Resize nearest: every rounding mode and coordinate mapping, by size and by scale",
          arguments: Resize.NearestRounding.allCases, Resize.Coordinates.allCases)
    func resizeNearest(rounding: Resize.NearestRounding, coordinates: Resize.Coordinates) throws {
        for testCase in Self.resizeCases {
            var rng = RefRandom(seed: testCase.input.0 * 100 + testCase.input.1)
            let x = rng.tensor(n: rng.pick(refBatchSizes), h: testCase.input.0, w: testCase.input.1, c: rng.int(1 ... 3))
            let (oh, ow, scale, length) = Self.resizeGeometry(x, testCase)
            let expected = Naive.resizeNearest(x, outH: oh, outW: ow, scale: scale, length: length, coordinates: coordinates,
                                               rounding: rounding)
            let y = try Self.resized(x, testCase, coordinates: coordinates, mode: .nearest, rounding: rounding)
            refExpectClose(y, expected, "nearest \(rounding) \(coordinates) \(testCase.testDescription)")
        }
    }

    @Test("Resize cubic: every coordinate mapping, a = -0.75 and -0.5, with and without excludeOutside",
          arguments: Resize.Coordinates.allCases, [false, true])
    func resizeCubic(coordinates: Resize.Coordinates, excludeOutside: Bool) throws {
        for testCase in Self.resizeCases {
            for a in [-0.75, -0.5] as [Float] {
                var rng = RefRandom(seed: testCase.input.0 * 100 + testCase.input.1 + 17)
                let x = rng.tensor(n: rng.pick(refBatchSizes), h: testCase.input.0, w: testCase.input.1, c: rng.int(1 ... 3))
                let (oh, ow, scale, length) = Self.resizeGeometry(x, testCase)
                let expected = Naive.resizeCubic(x, outH: oh, outW: ow, scale: scale, length: length, coordinates: coordinates,
                                                 a: Double(a), excludeOutside: excludeOutside)
                let y = try Self.resized(x, testCase, coordinates: coordinates, mode: .cubic, a: a, excludeOutside: excludeOutside)
                refExpectClose(y, expected, "cubic a \(a) exclude \(excludeOutside) \(coordinates) \(testCase.testDescription)")
            }
        }
    }
}
