import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// The C kernels of TransposedConvolution (col2im), Resize (resampling), Pad, the
/// normalisations, LRN and Lp pooling: every body the CPU runs against the naive reference
/// (the model-level tests in ReferenceLayerTests cover the body the CPU picks).
@Suite("Layer kernels per instruction set")
struct LayerKernelTests {
    /// `layer`'s kernel for `x` with `parameters` (Forge layout), its body forced to `isa`, run directly.
    static func run(_ layer: any Layer, _ x: RefTensor, parameters: [ParameterKind: [Float]] = [:],
                    isa: InstructionSet) throws -> [Float] {
        let output = try layer.outputShape(for: [x.shape])
        let kernel = try layer.makeKernel(KernelContext(layerName: "k", inputShapes: [x.shape], outputShape: output,
                                                        layout: .forge, parameters: parameters.mapValues { ParameterData($0) }))
        return refRunKernel(try Self.forcing(kernel, isa), input: x.floats, batch: x.n, inputShape: x.shape, outputShape: output)
    }

    /// `kernel` with its body forced to `isa`.
    static func forcing(_ kernel: any Kernel, _ isa: InstructionSet) throws -> any Kernel {
        switch kernel {
        case var k as TransposedConvolutionKernel: k.instructionSet = isa; return k
        case var k as ResizeKernel: k.instructionSet = isa; return k
        case var k as PadKernel: k.instructionSet = isa; return k
        case var k as NormalizationKernel: k.instructionSet = isa; return k
        case var k as LocalResponseNormalizationKernel: k.instructionSet = isa; return k
        case var k as LpPoolingKernel: k.instructionSet = isa; return k
        default: throw AnvilError(.internalError, "no body to force in \(type(of: kernel))")
        }
    }

    /// Compares within `1e-4 · max(1, |expected|)`.
    static func expectClose(_ actual: [Float], _ expected: RefTensor, _ context: String,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(actual.count == expected.v.count, "\(context): count", sourceLocation: sourceLocation)
        let bad = zip(actual, expected.v).enumerated().first { abs(Double($0.element.0) - $0.element.1) > 1e-4 * max(1, abs($0.element.1)) }
        #expect(bad == nil, "\(context): first mismatch \(String(describing: bad))", sourceLocation: sourceLocation)
    }

    @Test("col2im (TransposedConvolution): channel counts 1 … 70 over vector widths and tails", arguments: refInstructionSets)
    func transposedConvolution(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 4242)
        for round in 0 ..< 12 {
            let groups = rng.pick([1, 2]), inC = groups * rng.int(1 ... 5), outC = groups * rng.pick([1, 3, 8, 9, 16, 35])
            let kernel = (rng.int(1 ... 4), rng.int(1 ... 4)), stride = (rng.int(1 ... 3), rng.int(1 ... 3))
            let pads = (rng.int(0 ... 1), rng.int(0 ... 1), rng.int(0 ... 1), rng.int(0 ... 1))
            let x = rng.tensor(n: rng.int(1 ... 2), h: rng.int(2 ... 5), w: rng.int(2 ... 5), c: inC)
            let weights = rng.floats(outC * kernel.0 * kernel.1 * (inC / groups)), bias = rng.floats(outC)
            let layer = TransposedConvolution(kernel: kernel, channels: outC, stride: stride,
                                              padding: .explicit(top: pads.0, left: pads.1, bottom: pads.2, right: pads.3),
                                              groups: groups)
            let expected = Naive.transposedConvolution(x, weights: weights, bias: bias, outputChannels: outC, kernel: kernel,
                                                       stride: stride, pads: pads, outputPadding: (0, 0), dilation: (1, 1),
                                                       groups: groups)
            let actual = try Self.run(layer, x, parameters: [.weights: weights, .biases: bias], isa: isa)
            Self.expectClose(actual, expected, "\(isa) round \(round) \(x) k \(kernel) s \(stride) g \(groups) -> \(outC)")
        }
    }
}

extension LayerKernelTests {
    /// `layer`'s resampling kernel for `x`, its body forced to `isa`, in one pass or two stages.
    static func runResize(_ layer: Resize, _ x: RefTensor, isa: InstructionSet, twoStages: Bool) throws -> [Float] {
        let output = try layer.outputShape(for: [x.shape])
        var kernel = try #require(try layer.makeKernel(KernelContext(layerName: "k", inputShapes: [x.shape], outputShape: output,
                                                                     layout: .forge, parameters: [:])) as? ResizeKernel)
        kernel.instructionSet = isa
        kernel.twoStages = twoStages
        return refRunKernel(kernel, input: x.floats, batch: x.n, inputShape: x.shape, outputShape: output)
    }

    @Test("Resampling: nearest, linear and cubic taps, channel counts over vector widths and tails", arguments: refInstructionSets)
    func resample(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 4343)
        for mode in Resize.Mode.allCases {
            for c in [1, 7, 8, 33, 40] {
                let x = rng.tensor(n: 2, h: rng.int(2 ... 5), w: rng.int(2 ... 5), c: c)
                let (oh, ow) = (rng.int(1 ... 9), rng.int(1 ... 9))
                let scale = (Double(oh) / Double(x.h), Double(ow) / Double(x.w))
                let expected: RefTensor
                switch mode {
                case .nearest: expected = Naive.resizeNearest(x, outH: oh, outW: ow, scale: scale, length: (Double(oh), Double(ow)),
                                                               coordinates: .halfPixel, rounding: .roundPreferCeil)
                case .linear: expected = Naive.resize(x, size: (oh, ow), coordinates: .halfPixel)
                case .cubic: expected = Naive.resizeCubic(x, outH: oh, outW: ow, scale: scale, length: (Double(oh), Double(ow)),
                                                          coordinates: .halfPixel, a: -0.75, excludeOutside: false)
                }
                for twoStages in [false, true] {
                    let actual = try Self.runResize(Resize(height: oh, width: ow, mode: mode, nearestRounding: .roundPreferCeil), x,
                                                    isa: isa, twoStages: twoStages)
                    Self.expectClose(actual, expected, "\(isa) \(mode) \(x) to \(oh)x\(ow) two stages \(twoStages)")
                }
            }
        }
    }

    @Test("Resampling: antialiased downsampling and crop-and-resize (extrapolated rows and columns), channel counts over vector widths",
          arguments: refInstructionSets)
    func resampleAntialiasAndCrop(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 4545)
        for mode in [Resize.Mode.linear, .cubic] {
            for c in [1, 7, 8, 33, 40] {
                let x = rng.tensor(n: 2, h: rng.int(6 ... 11), w: rng.int(6 ... 11), c: c)
                let (oh, ow) = (rng.int(1 ... 4), rng.int(1 ... 4))
                let scale = (Double(oh) / Double(x.h), Double(ow) / Double(x.w))
                let exclude = c % 2 == 1
                let expected = Naive.resizeONNX(x, outH: oh, outW: ow, scale: scale, length: (Double(oh), Double(ow)),
                                                coordinates: .halfPixel, mode: mode, excludeOutside: exclude, antialias: true)
                let layer = Resize(height: oh, width: ow, mode: mode, excludeOutside: exclude, antialias: true)
                for twoStages in [false, true] {
                    Self.expectClose(try Self.runResize(layer, x, isa: isa, twoStages: twoStages), expected,
                                     "\(isa) antialias \(mode) \(x) to \(oh)x\(ow) two stages \(twoStages)")
                }
            }
        }
        for mode in Resize.Mode.allCases {
            for c in [1, 8, 33] {
                let x = rng.tensor(n: 2, h: rng.int(2 ... 6), w: rng.int(2 ... 6), c: c)
                let (oh, ow) = (rng.int(1 ... 7), rng.int(1 ... 7))
                let region = Resize.Region(top: -0.25, left: 0.3, bottom: 0.9, right: 1.4)
                let expected = Naive.resizeONNX(x, outH: oh, outW: ow, scale: (Double(oh) / Double(x.h), Double(ow) / Double(x.w)),
                                                length: (Double(oh), Double(ow)), coordinates: .tfCropAndResize, mode: mode,
                                                roi: (-0.25, 0.3, 0.9, 1.4), extrapolation: 3.5)
                let layer = Resize(height: oh, width: ow, coordinates: .tfCropAndResize, mode: mode, region: region,
                                   extrapolationValue: 3.5)
                for twoStages in [false, true] {
                    Self.expectClose(try Self.runResize(layer, x, isa: isa, twoStages: twoStages), expected,
                                     "\(isa) crop \(mode) \(x) to \(oh)x\(ow) two stages \(twoStages)")
                }
            }
        }
    }

    @Test("Pad: every mode, channel pads, channel counts over vector widths", arguments: refInstructionSets)
    func pad(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 4444)
        for mode in Pad.Mode.allCases {
            for c in [1, 9, 16, 21] {
                let x = rng.tensor(n: 2, h: 3, w: 4, c: c)
                let pads = (2, 1, mode == .reflect ? min(c - 1, 2) : 3, 1, 3, mode == .reflect ? min(c - 1, 1) : 2)
                let expected = Naive.pad(x, pads: pads, mode: mode.rawValue, value: 1.5)
                let layer = Pad(top: pads.0, left: pads.1, bottom: pads.3, right: pads.4, front: pads.2, back: pads.5, mode: mode, value: 1.5)
                Self.expectClose(try Self.run(layer, x, isa: isa), expected, "\(isa) \(mode) \(x)")
            }
        }
    }

    @Test("Group, instance and layer normalisation: channel counts over vector widths and tails", arguments: refInstructionSets)
    func normalization(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 4545)
        for c in [1, 3, 4, 8, 12, 17, 32, 45] {
            let x = rng.tensor(n: 2, h: rng.int(1 ... 4), w: rng.int(1 ... 4), c: c, -2, 3)
            let gamma = rng.floats(c), beta = rng.floats(c)
            let affine: [ParameterKind: [Float]] = [.gamma: gamma, .beta: beta]
            let groups = c % 4 == 0 ? 4 : 1
            Self.expectClose(try Self.run(GroupNormalization(groups: groups, epsilon: 1e-5), x, parameters: affine, isa: isa),
                             Naive.groupNormalization(x, groups: groups, epsilon: 1e-5, gamma: gamma, beta: beta), "\(isa) group \(x)")
            Self.expectClose(try Self.run(InstanceNormalization(epsilon: 1e-3, affine: false), x, isa: isa),
                             Naive.groupNormalization(x, groups: c, epsilon: 1e-3, gamma: nil, beta: nil), "\(isa) instance \(x)")
            Self.expectClose(try Self.run(LayerNormalization(epsilon: 1e-5), x, parameters: affine, isa: isa),
                             Naive.layerNormalization(x, epsilon: 1e-5, gamma: gamma, beta: beta), "\(isa) layer \(x)")
        }
    }

    @Test("Layer normalisation over the last 2 and 3 axes: groups of every size over vector widths and tails",
          arguments: refInstructionSets)
    func layerNormalizationAxes(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 4548)
        for axes in [2, 3] {
            for c in [1, 3, 8, 13] {
                let x = rng.tensor(n: 2, h: rng.int(1 ... 4), w: rng.int(1 ... 5), c: c, -2, 3)
                let size = axes == 2 ? x.w * c : x.h * x.w * c
                let gamma = rng.floats(size), beta = rng.floats(size)
                Self.expectClose(try Self.run(LayerNormalization(axes: axes, epsilon: 1e-5), x,
                                              parameters: [.gamma: gamma, .beta: beta], isa: isa),
                                 Naive.layerNormalization(x, axes: axes, epsilon: 1e-5, gamma: gamma, beta: beta),
                                 "\(isa) layer axes \(axes) \(x)")
                Self.expectClose(try Self.run(LayerNormalization(axes: axes, epsilon: 1e-2, affine: false), x, isa: isa),
                                 Naive.layerNormalization(x, axes: axes, epsilon: 1e-2, gamma: nil, beta: nil),
                                 "\(isa) layer axes \(axes) no affine \(x)")
            }
        }
        // A large group with a large offset: the moments stay exact (summed in double).
        let x = rng.tensor(n: 1, h: 16, w: 32, c: 24, 1000, 1001)
        Self.expectClose(try Self.run(LayerNormalization(axes: 3, epsilon: 1e-5, affine: false), x, isa: isa),
                         Naive.layerNormalization(x, axes: 3, epsilon: 1e-5, gamma: nil, beta: nil), "\(isa) large offset group")
    }

    @Test("LRN: vector powers (0.75, 0.5) and others, sizes 1 … 7", arguments: refInstructionSets)
    func localResponseNormalization(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 4646)
        for c in [1, 5, 8, 16, 29, 64] {
            for beta in [0.75, 0.5, 0.8] as [Float] {
                let size = rng.int(1 ... 7)
                let x = rng.tensor(n: 1, h: 2, w: 3, c: c, -2, 2)
                Self.expectClose(try Self.run(LocalResponseNormalization(size: size, alpha: 0.3, beta: beta, bias: 1.5), x, isa: isa),
                                 Naive.localResponseNormalization(x, size: size, alpha: 0.3, beta: Double(beta), bias: 1.5),
                                 "\(isa) lrn c \(c) size \(size) beta \(beta)")
            }
        }
    }

    @Test("Lp pooling: p 1, 2 (vector) and 2.5, channel counts over vector widths", arguments: refInstructionSets)
    func lpPooling(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 4747)
        for p in [1, 2, 2.5] as [Float] {
            for c in [1, 8, 13, 24] {
                let x = rng.tensor(n: 2, h: 5, w: 4, c: c)
                let expected = try #require(Naive.lpPool(x, p: Double(p), kernel: (3, 2), stride: (2, 1), padding: .explicit(1)))
                Self.expectClose(try Self.run(LpPooling(p: p, kernel: (3, 2), stride: (2, 1), padding: .explicit(1)), x, isa: isa),
                                 expected, "\(isa) lp \(p) c \(c)")
            }
        }
    }
}
