import CAnvilKernels
import CAnvilKernelsEmulated
import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// The F(2×2, 5×5) Winograd kernel (every C body the CPU runs, and the AVX-512 body on emulated
/// intrinsics on any x86-64) against the naive float64 convolution, over what its loops treat
/// differently: output sizes that leave half tiles, channel counts around the 8- and 16-lane
/// vectors and the 16-channel blocks, groups of 1–4 blocks (the AVX-512 products' tiles) and a
/// layer of 4 + 3, tiles that are not a multiple of the six computed together, every kind of
/// padding (including more than the window), batches, the clamps done in C and the activations
/// applied afterwards.
@Suite("Winograd F(2×2, 5×5) kernel")
struct Winograd5x5Tests {
    typealias Case = DirectConvolutionTests.Case

    static let cases: [Case] = [
        Case(batch: 3, height: 14, width: 14, inputs: 32, outputs: 64, kernel: (5, 5), activation: .relu),  // MNIST conv2
        Case(height: 7, width: 9, inputs: 13, outputs: 21, kernel: (5, 5), activation: .relu6),
        Case(height: 5, width: 5, inputs: 8, outputs: 16, kernel: (5, 5), padding: .valid, bias: false),
        Case(height: 6, width: 11, inputs: 70, outputs: 33, kernel: (5, 5),
             padding: .explicit(top: 0, left: 2, bottom: 1, right: 0), activation: .clip(min: -0.4, max: 0.6)),
        Case(batch: 2, height: 9, width: 6, inputs: 16, outputs: 8, kernel: (5, 5),
             padding: .explicit(top: 4, left: 4, bottom: 4, right: 4), activation: .sigmoid),
        Case(height: 3, width: 3, inputs: 9, outputs: 17, kernel: (5, 5), activation: .leakyRelu),
        Case(batch: 2, height: 8, width: 7, inputs: 1, outputs: 5, kernel: (5, 5), bias: true),
        Case(height: 9, width: 10, inputs: 40, outputs: 100, kernel: (5, 5), activation: .relu),  // blocks 4 + 3
    ]

    /// Runs the kernel on `input` (NHWC) with Forge-layout weights, in `parts` parts when given.
    static func run(_ c: Case, _ g: WindowGeometry, input: [Float], weights: [Float], bias: [Float]?,
                    isa: InstructionSet = .current, parts: Int? = nil) -> [Float] {
        let kernelWeights = KernelWeights(source: ParameterData(weights), reordered: nil, bias: bias.map { ParameterData($0) },
                                          outputs: c.outputs, weightsPerOutput: weights.count / c.outputs, affine: nil)
        var kernel = Winograd5x5Kernel(geometry: g, inputChannels: c.inputs, outputChannels: c.outputs,
                                       weights: kernelWeights, activation: c.activation)
        kernel.instructionSet = isa
        let inputShape = Shape(height: c.height, width: c.width, channels: c.inputs)
        let outputShape = Shape(height: g.outputHeight, width: g.outputWidth, channels: c.outputs)
        guard let parts else { return refRunKernel(kernel, input: input, batch: c.batch, inputShape: inputShape, outputShape: outputShape) }
        // The job as the threads run it: the groups in `parts` claims, each on its own participant's slot.
        var output = [Float](repeating: .nan, count: c.batch * outputShape.count)
        var scratch = [Float](repeating: .nan, count: kernel.scratchCount(batch: c.batch))
        input.withUnsafeBufferPointer { x in
            output.withUnsafeMutableBufferPointer { y in
                scratch.withUnsafeMutableBufferPointer { s in
                    var shape = kernel.shape
                    let tiles = c.batch * anvil_winograd5_tiles_per_image(&shape)
                    let needed = min(parts, (s.count - 16) / kernel.slotCount)
                    let job = Winograd5x5Kernel.Groups(kernel: kernel, shape: shape, input: x.baseAddress!, output: y.baseAddress!,
                                                       scratch: s.baseAddress!, tiles: tiles)
                    let groups = (tiles + 5) / 6
                    for part in 0 ..< needed {
                        job.run(groups * part / needed ..< groups * (part + 1) / needed, participant: part)
                    }
                }
            }
        }
        return output
    }

    /// A case's seeded input, weights and bias, and its geometry.
    struct Data {
        let x: RefTensor, weights: [Float], bias: [Float]?, g: WindowGeometry

        init(_ c: Case, seed: Int) throws {
            var random = RefRandom(seed: seed)
            x = random.tensor(n: c.batch, h: c.height, w: c.width, c: c.inputs)
            weights = random.floats(c.outputs * 25 * c.inputs)
            bias = c.bias ? random.floats(c.outputs) : nil
            g = try WindowGeometry(input: x.shape, kernel: c.kernel, stride: c.stride, dilation: c.dilation, padding: c.padding)
        }

        /// The worst error of `actual` against the naive float64 convolution, scaled by each
        /// output's Σ|x·w| + |b| (the same convolution of magnitudes); infinity for a wrong count.
        func worstError(_ c: Case, _ actual: [Float]) -> Double {
            let expected = Naive.convolution(x, weights: weights, bias: bias, outputChannels: c.outputs, kernel: c.kernel,
                                             padding: c.padding, activation: c.activation)
            var magnitudes = x
            magnitudes.v = x.v.map(abs)
            let scale = Naive.convolution(magnitudes, weights: weights.map(abs), bias: bias?.map(abs), outputChannels: c.outputs,
                                          kernel: c.kernel, padding: c.padding)
            guard actual.count == expected.v.count else { return .infinity }
            var worst = 0.0
            for i in 0 ..< expected.v.count {
                let error = abs(Double(actual[i]) - expected.v[i]) / max(scale.v[i], 1e-30)
                worst = error.isFinite ? max(worst, error) : .infinity
            }
            return worst
        }
    }

    /// The transforms' constants (up to 5 in Bᵀ, 16/24 in G) amplify float rounding: measured
    /// maxima are 1e-7…1.1e-6 of Σ|x·w| (2.4e-6 with a single input channel, where the sum has
    /// few terms); a wrong tap or edge would be off by 1e-2 or more.
    static let bound = 1e-5

    @Test("Every body matches the naive convolution", arguments: refInstructionSets)
    func matchesReference(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        for (index, c) in Self.cases.enumerated() {
            let data = try Data(c, seed: 5_500 + index)
            let actual = Self.run(c, data.g, input: data.x.floats, weights: data.weights, bias: data.bias, isa: isa)
            let worst = data.worstError(c, actual)
            #expect(worst <= Self.bound, "\(isa) \(c): worst scaled error \(worst)")
        }
    }

    /// A C body of `anvil_winograd5` (without the `isa`).
    typealias Body = @Sendable (UnsafePointer<anvil_winograd5_shape>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>?,
                      UnsafeMutablePointer<Float>, Int, Int, UnsafeMutablePointer<Float>) -> Void

    static let emulated: Body = { anvil_winograd5_avx512_emulated($0, $1, $2, $3, $4, $5, $6, $7) }
    static func dispatched(_ isa: InstructionSet) -> Body { { anvil_winograd5(isa.cValue, $0, $1, $2, $3, $4, $5, $6, $7) } }

    /// `body` over the case's tiles in two calls (the second starting mid-group), with the
    /// kernel's own filters and shape, then the activation the kernel applies after the C clamp.
    static func run(_ c: Case, _ data: Data, body: Body) -> [Float] {
        let kernelWeights = KernelWeights(source: ParameterData(data.weights), reordered: nil,
                                          bias: data.bias.map { ParameterData($0) }, outputs: c.outputs,
                                          weightsPerOutput: data.weights.count / c.outputs, affine: nil)
        let kernel = Winograd5x5Kernel(geometry: data.g, inputChannels: c.inputs, outputChannels: c.outputs,
                                       weights: kernelWeights, activation: c.activation)
        var shape = kernel.shape
        let tiles = c.batch * anvil_winograd5_tiles_per_image(&shape), cut = min(tiles, 7)
        var output = [Float](repeating: .nan, count: c.batch * data.g.outputHeight * data.g.outputWidth * c.outputs)
        var scratch = [Float](repeating: .nan, count: Int(anvil_winograd5_scratch_count(Int32(c.inputs))))
        let input = data.x.floats
        input.withUnsafeBufferPointer { x in
            output.withUnsafeMutableBufferPointer { y in
                scratch.withUnsafeMutableBufferPointer { s in
                    let u = kernel.filters.buffer.baseAddress!, b = kernel.bias?.buffer.baseAddress
                    body(&shape, x.baseAddress!, u, b, y.baseAddress!, 0, cut, s.baseAddress!)
                    body(&shape, x.baseAddress!, u, b, y.baseAddress!, cut, tiles, s.baseAddress!)
                }
            }
        }
        let rest = ActivationClamp(c.activation).rest
        if rest != .none { output.withUnsafeMutableBufferPointer { rest.apply($0.baseAddress!, count: $0.count, instructionSet: .scalar) } }
        return output
    }

    @Test("The emulated AVX-512 body matches the naive convolution, and the AVX2 body bit for bit")
    func emulatedBody() throws {
        try #require(anvil_emulated_bodies_available() == 1, "the emulated bodies are built on x86-64 only")
        for (index, c) in Self.cases.enumerated() {
            let data = try Data(c, seed: 5_500 + index)
            let actual = Self.run(c, data, body: Self.emulated)
            let worst = data.worstError(c, actual)
            #expect(worst <= Self.bound, "\(c): worst scaled error \(worst)")
            if InstructionSet.avx2.isSupported {
                #expect(refBitDifferences(Self.run(c, data, body: Self.dispatched(.avx2)), actual) == 0, "\(c): AVX2 differs")
            }
        }
    }

    @Test("The real AVX-512 body equals the emulated one bit for bit")
    func realBody() throws {
        try refRequireSupported(.avx512)
        for (index, c) in Self.cases.enumerated() {
            let data = try Data(c, seed: 5_500 + index)
            #expect(refBitDifferences(Self.run(c, data, body: Self.dispatched(.avx512)), Self.run(c, data, body: Self.emulated)) == 0,
                    "\(c)")
        }
    }

    @Test("However the tiles are split among threads, the output is the same bit for bit", arguments: refInstructionSets)
    func splitsAgree(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        let c = Case(batch: 2, height: 11, width: 13, inputs: 24, outputs: 40, kernel: (5, 5), activation: .relu)
        var random = RefRandom(seed: 77)
        let x = random.floats(c.batch * c.height * c.width * c.inputs)
        let weights = random.floats(c.outputs * 25 * c.inputs)
        let bias = random.floats(c.outputs)
        let g = try WindowGeometry(input: Shape(height: c.height, width: c.width, channels: c.inputs), kernel: c.kernel,
                                   stride: c.stride, dilation: c.dilation, padding: c.padding)
        let whole = Self.run(c, g, input: x, weights: weights, bias: bias, isa: isa, parts: 1)
        #expect(!whole.contains { $0.isNaN })
        for parts in [2, 3, 5] where parts <= Compute.maximumThreadCount {
            #expect(Self.run(c, g, input: x, weights: weights, bias: bias, isa: isa, parts: parts) == whole, "\(isa), \(parts) parts")
        }
        #expect(Self.run(c, g, input: x, weights: weights, bias: bias, isa: isa) == whole, "\(isa), the kernel's own split")
    }

    @Test("Takes 5×5 stride-1 undilated layers of 8 or more input channels, nothing else")
    func choice() throws {
        func geometry(_ k: Int, stride: Int = 1, dilation: Int = 1) throws -> WindowGeometry {
            try WindowGeometry(input: Shape(height: 14, width: 14, channels: 1), kernel: (k, k), stride: (stride, stride),
                               dilation: (dilation, dilation), padding: .same)
        }
        guard ConvolutionOverride.current == .auto else { return }
        func chosen(_ g: WindowGeometry, inputs: Int) -> ConvolutionAlgorithm {
            ConvolutionSelection.algorithm(geometry: g, inputChannels: inputs, outputChannels: 16, groups: 1)
        }
        #expect(chosen(try geometry(5), inputs: 32) == .winograd5x5)
        #expect(chosen(try geometry(5), inputs: 1) != .winograd5x5)
        #expect(chosen(try geometry(5, stride: 2), inputs: 32) != .winograd5x5)
        #expect(chosen(try geometry(5, dilation: 2), inputs: 32) != .winograd5x5)
        #expect(chosen(try geometry(3), inputs: 32) != .winograd5x5)
        // What compile builds: MNIST's conv2 here, its single-channel conv1 not.
        let conv = Convolution(kernel: (5, 5), channels: 64)
        #expect(try refChosenKernel(conv, input: Shape(height: 14, width: 14, channels: 32)) is Winograd5x5Kernel)
        #expect(try refChosenKernel(conv, input: Shape(height: 28, width: 28, channels: 1)) is DirectConvolutionKernel)
    }
}
