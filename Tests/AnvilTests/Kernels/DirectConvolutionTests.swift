import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// The direct convolution kernel (every C body the CPU runs) against the naive reference,
/// over the cases its loops treat differently: tile remainders (pixels not a multiple of 6),
/// partial channel blocks (outputs not a multiple of 16), padding, stride and dilation,
/// passes over channel ranges (more than 512 inputs), weights too large to stay cached
/// (block-by-block order), several threads, the clamp activations done in C and the others
/// applied afterwards.
@Suite("Direct convolution kernel")
struct DirectConvolutionTests {
    struct Case: CustomStringConvertible, Sendable {
        var batch = 1, height: Int, width: Int, inputs: Int, outputs: Int
        var kernel: (Int, Int), stride = (1, 1), dilation = (1, 1)
        var padding: Padding = .same
        var bias = true
        var activation: ActivationFunction = .none

        var description: String {
            "\(batch)×\(height)×\(width)×\(inputs) → \(outputs), kernel \(kernel), stride \(stride), dilation \(dilation), \(padding), bias \(bias), \(activation)"
        }
    }

    static let cases: [Case] = [
        Case(height: 28, width: 28, inputs: 1, outputs: 32, kernel: (5, 5), activation: .relu),          // MNIST conv1
        Case(batch: 3, height: 14, width: 14, inputs: 32, outputs: 64, kernel: (5, 5), activation: .relu), // MNIST conv2
        Case(height: 9, width: 7, inputs: 3, outputs: 21, kernel: (3, 3), stride: (2, 2), activation: .relu6),
        Case(height: 8, width: 11, inputs: 5, outputs: 17, kernel: (3, 2), stride: (1, 2), dilation: (2, 1),
             padding: .explicit(top: 0, left: 2, bottom: 1, right: 0), bias: false, activation: .clip(min: -0.2, max: 0.3)),
        Case(height: 12, width: 12, inputs: 3, outputs: 16, kernel: (7, 7), stride: (2, 2), activation: .sigmoid),
        Case(batch: 2, height: 5, width: 5, inputs: 7, outputs: 9, kernel: (1, 1), padding: .valid, activation: .hardSwish),
        Case(height: 7, width: 7, inputs: 600, outputs: 40, kernel: (1, 1), padding: .valid, activation: .relu),  // 2 passes
        Case(height: 3, width: 5, inputs: 1100, outputs: 19, kernel: (3, 3), bias: true),                      // 8 passes
        // ResNet-50's last 3×3 layers, weights past the L2: passes sized so a group's share fits
        // beside the next group's (AVX-512: 4 passes of 128), a lone fifth block.
        Case(height: 7, width: 7, inputs: 512, outputs: 80, kernel: (3, 3), activation: .relu),
        Case(height: 6, width: 6, inputs: 256, outputs: 300, kernel: (1, 1), padding: .valid),                 // block order
        Case(height: 4, width: 4, inputs: 70, outputs: 130, kernel: (3, 3), stride: (2, 2), activation: .leakyRelu),
        Case(height: 1, width: 1, inputs: 64, outputs: 10, kernel: (1, 1), padding: .valid),
        // Few channels: chunks of the largest size, and a rest that joins the last one.
        Case(height: 30, width: 31, inputs: 16, outputs: 40, kernel: (1, 1), padding: .valid, activation: .relu6),
        // A last block of at most 8 channels runs paired with the one before it, in tiles of 3
        // pixels: through the window table (64 pixels: a rest of 4 as 2 + 2), in runs (chunks
        // of 24 and 11: a rest of 2), with a masked lane, and a single pixel.
        Case(height: 8, width: 8, inputs: 3, outputs: 24, kernel: (3, 3), activation: .relu),
        Case(height: 5, width: 7, inputs: 144, outputs: 24, kernel: (1, 1), padding: .valid),
        Case(height: 1, width: 1, inputs: 64, outputs: 24, kernel: (1, 1), padding: .valid),
        Case(batch: 2, height: 3, width: 11, inputs: 20, outputs: 37, kernel: (1, 1), padding: .valid, activation: .relu6),
        Case(height: 6, width: 9, inputs: 32, outputs: 72, kernel: (3, 3), stride: (2, 2), bias: false),
        // Every two blocks run as one tile of 32 channels (3 pixels × 4 vectors in AVX2): one and
        // two pixels, a masked fourth vector (28 outputs), an odd block count whose last block
        // runs alone (3 blocks of 16) or pairs while the first runs alone (40 = 16 + 16 + 8), and
        // a 3×3 window read in runs.
        Case(height: 1, width: 1, inputs: 40, outputs: 32, kernel: (1, 1), padding: .valid),
        Case(height: 1, width: 2, inputs: 48, outputs: 64, kernel: (1, 1), padding: .valid, activation: .relu),
        Case(height: 4, width: 5, inputs: 33, outputs: 28, kernel: (1, 1), padding: .valid),
        Case(height: 7, width: 5, inputs: 24, outputs: 48, kernel: (1, 1), padding: .valid, activation: .relu6),
        Case(height: 9, width: 8, inputs: 40, outputs: 40, kernel: (3, 3), bias: true),
    ]

    /// Runs the kernel on `input` (NHWC) with Forge-layout weights.
    static func runDirect(_ c: Case, _ g: WindowGeometry, input: [Float], weights: [Float], bias: [Float]?,
                          isa: InstructionSet = .current) -> [Float] {
        let kernelWeights = KernelWeights(source: ParameterData(weights), reordered: nil, bias: bias.map { ParameterData($0) },
                                          outputs: c.outputs, weightsPerOutput: weights.count / c.outputs, affine: nil)
        var kernel = DirectConvolutionKernel(geometry: g, inputChannels: c.inputs, outputChannels: c.outputs,
                                             weights: kernelWeights, activation: c.activation)
        kernel.instructionSet = isa
        return refRunKernel(kernel, input: input, batch: c.batch,
                            inputShape: Shape(height: c.height, width: c.width, channels: c.inputs),
                            outputShape: Shape(height: g.outputHeight, width: g.outputWidth, channels: c.outputs))
    }

    @Test("Every body matches the naive convolution", arguments: refInstructionSets)
    func matchesReference(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        for (index, c) in Self.cases.enumerated() {
            var random = RefRandom(seed: 7_000 + index)
            let x = random.tensor(n: c.batch, h: c.height, w: c.width, c: c.inputs)
            let weights = random.floats(c.outputs * c.kernel.0 * c.kernel.1 * c.inputs)
            let bias = c.bias ? random.floats(c.outputs) : nil
            let g = try WindowGeometry(input: x.shape, kernel: c.kernel, stride: c.stride, dilation: c.dilation, padding: c.padding)
            let expected = Naive.convolution(x, weights: weights, bias: bias, outputChannels: c.outputs, kernel: c.kernel,
                                             stride: c.stride, padding: c.padding, dilation: c.dilation, activation: c.activation)
            let actual = Self.runDirect(c, g, input: x.floats, weights: weights, bias: bias, isa: isa)
            // Sums of up to ~10,000 products of values in [-1, 1]: allow float rounding of that size.
            let depth = Double(c.kernel.0 * c.kernel.1 * c.inputs)
            let tolerance = 2e-6 * depth.squareRoot() * 4
            var worst = 0.0
            for (a, e) in zip(actual, expected.v) { worst = refWorst(worst, abs(Double(a) - e) / max(1, abs(e))) }
            #expect(actual.count == expected.v.count && worst <= tolerance,
                    "\(isa) \(c): worst relative error \(worst) > \(tolerance)")
        }
    }

    @Test("NaN and infinity propagate through the fused clamp in every body, paired and single blocks",
          arguments: refInstructionSets)
    func specialValues(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        for activation in [ActivationFunction.none, .relu, .relu6] {
            // 3×3 over 6 × 9 × 8, 24 outputs (a pair of blocks, then a single one of 8).
            let c = Case(height: 6, width: 9, inputs: 8, outputs: 24, kernel: (3, 3), activation: activation)
            var random = RefRandom(seed: 7_300)
            var input = random.floats(6 * 9 * 8)
            // A NaN at pixel (2, 4) channel 3: every output channel of the pixels whose window
            // covers it, (1...3, 3...5), is NaN; no other output is.
            input[(2 * 9 + 4) * 8 + 3] = .nan
            // With every weight positive, an infinity in the corner makes the outputs next to it
            // infinite (6 after ReLU6), not NaN.
            input[0 * 8 + 5] = .infinity
            let weights = random.floats(24 * 9 * 8).map { abs($0) + 0.01 }
            let g = try WindowGeometry(input: Shape(height: 6, width: 9, channels: 8), kernel: c.kernel, stride: c.stride,
                                       dilation: c.dilation, padding: c.padding)
            let output = Self.runDirect(c, g, input: input, weights: weights, bias: random.floats(24), isa: isa)
            for oy in 0 ..< 6 {
                for ox in 0 ..< 9 {
                    let covers = (1 ... 3).contains(oy) && (3 ... 5).contains(ox)
                    let pixel = output[(oy * 9 + ox) * 24 ..< (oy * 9 + ox + 1) * 24]
                    let nans = pixel.filter(\.isNaN).count
                    #expect(nans == (covers ? 24 : 0), "\(isa) \(activation) (\(oy), \(ox)): \(Array(pixel))")
                    if oy <= 1 && ox <= 1 {
                        let limit: Float = activation == .relu6 ? 6 : .infinity
                        let limited = pixel.filter { $0 == limit }.count
                        #expect(limited == 24, "\(isa) \(activation) (\(oy), \(ox)): \(Array(pixel))")
                    }
                }
            }
        }
    }

    @Test("A fused residual, with last blocks of 8, 5 and 12 channels (paired or not) and a second pass, every body",
          arguments: refInstructionSets)
    func residual(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        // 24, 21 and 28 outputs: a last block of 8 (whole 8-wide vectors), 5 and 12 channels (a
        // masked vector); 600 inputs take two passes, so the second reads partial sums back.
        let cases = [
            Case(height: 9, width: 10, inputs: 40, outputs: 24, kernel: (1, 1), padding: .valid, activation: .relu6),
            Case(batch: 2, height: 7, width: 8, inputs: 6, outputs: 21, kernel: (3, 3), activation: .relu),
            Case(height: 6, width: 5, inputs: 600, outputs: 28, kernel: (1, 1), padding: .valid, bias: false, activation: .hardSwish),
            Case(height: 5, width: 7, inputs: 600, outputs: 40, kernel: (1, 1), padding: .valid, activation: .relu),
        ]
        for (index, c) in cases.enumerated() {
            var random = RefRandom(seed: 7_100 + index)
            let x = random.tensor(n: c.batch, h: c.height, w: c.width, c: c.inputs)
            let weights = random.floats(c.outputs * c.kernel.0 * c.kernel.1 * c.inputs)
            let bias = c.bias ? random.floats(c.outputs) : nil
            let g = try WindowGeometry(input: x.shape, kernel: c.kernel, stride: c.stride, dilation: c.dilation, padding: c.padding)
            let shortcut = random.tensor(n: c.batch, h: g.outputHeight, w: g.outputWidth, c: c.outputs)
            let convolution = Naive.convolution(x, weights: weights, bias: bias, outputChannels: c.outputs, kernel: c.kernel,
                                                stride: c.stride, padding: c.padding, dilation: c.dilation, activation: .none)
            let expected = Naive.add([convolution, shortcut], activation: c.activation)
            var kernel = DirectConvolutionKernel(
                geometry: g, inputChannels: c.inputs, outputChannels: c.outputs,
                weights: KernelWeights(source: ParameterData(weights), reordered: nil, bias: bias.map { ParameterData($0) },
                                       outputs: c.outputs, weightsPerOutput: weights.count / c.outputs, affine: nil),
                activation: c.activation)
            kernel.instructionSet = isa
            var actual = [Float](repeating: .nan, count: expected.v.count)
            var scratch = [Float](repeating: .nan, count: max(1, kernel.scratchCount(batch: c.batch)))
            let input = x.floats, residual = shortcut.floats
            input.withUnsafeBufferPointer { xp in
                residual.withUnsafeBufferPointer { rp in
                    actual.withUnsafeMutableBufferPointer { y in
                        scratch.withUnsafeMutableBufferPointer { s in
                            kernel.run(KernelIO(inputs: [xp.baseAddress!, rp.baseAddress!], output: y.baseAddress!,
                                                scratch: s.baseAddress!, batch: c.batch,
                                                inputShapes: [x.shape, shortcut.shape], outputShape: shortcut.shape))
                        }
                    }
                }
            }
            let tolerance = 2e-6 * Double(c.kernel.0 * c.kernel.1 * c.inputs).squareRoot() * 4
            var worst = 0.0
            for (a, e) in zip(actual, expected.v) { worst = refWorst(worst, abs(Double(a) - e) / max(1, abs(e))) }
            #expect(worst <= tolerance, "\(isa) \(c): worst relative error \(worst) > \(tolerance)")
        }
    }

    @Test("However the work items are split (as threads split them), the output is the same bit for bit",
          arguments: refInstructionSets)
    func splitsAgree(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        let c = Case(batch: 2, height: 13, width: 11, inputs: 24, outputs: 40, kernel: (3, 3), padding: .valid, activation: .relu)
        var random = RefRandom(seed: 99)
        let x = random.floats(c.batch * c.height * c.width * c.inputs)
        let weights = random.floats(c.outputs * 9 * c.inputs)
        let g = try WindowGeometry(input: Shape(height: c.height, width: c.width, channels: c.inputs), kernel: c.kernel,
                                   stride: c.stride, dilation: c.dilation, padding: c.padding)
        var kernel = DirectConvolutionKernel(
            geometry: g, inputChannels: c.inputs, outputChannels: c.outputs,
            weights: KernelWeights(source: ParameterData(weights), reordered: nil, bias: nil, outputs: c.outputs,
                                   weightsPerOutput: 9 * c.inputs, affine: nil),
            activation: c.activation)
        kernel.instructionSet = isa
        let chunks = (kernel.pixels + DirectConvolutionKernel.chunkPixels - 1) / DirectConvolutionKernel.chunkPixels
        func run(splitAt cuts: [Int]) -> [Float] {
            var output = [Float](repeating: .nan, count: c.batch * kernel.pixels * c.outputs)
            x.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { y in
                    let job = DirectConvolutionKernel.Chunks(kernel: kernel, input: input.baseAddress!, output: y.baseAddress!,
                                                             chunks: chunks)
                    let bounds = [0] + cuts + [c.batch * chunks]
                    for i in 0 ..< bounds.count - 1 { job.run(bounds[i] ..< bounds[i + 1]) }
                }
            }
            return output
        }
        let whole = run(splitAt: [])
        #expect(!whole.contains { $0.isNaN })
        #expect(run(splitAt: [1]) == whole)
        #expect(run(splitAt: [chunks / 2, chunks + 1]) == whole)
        // Few-pixel layers split the blocks of output channels instead (3 blocks here).
        func runBlocks(splitAt cuts: [Int]) -> [Float] {
            var output = [Float](repeating: .nan, count: c.batch * kernel.pixels * c.outputs)
            x.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { y in
                    let job = DirectConvolutionKernel.Blocks(kernel: kernel, input: input.baseAddress!, output: y.baseAddress!,
                                                             batch: c.batch)
                    let bounds = [0] + cuts + [kernel.blocks]
                    for i in 0 ..< bounds.count - 1 { job.run(bounds[i] ..< bounds[i + 1]) }
                }
            }
            return output
        }
        #expect(runBlocks(splitAt: []) == whole)
        #expect(runBlocks(splitAt: [1]) == whole)
        #expect(runBlocks(splitAt: [1, 2]) == whole)
    }

    @Test("Threads split the blocks of few-pixel layers only when each gets a whole tile's blocks")
    func splitRule() throws {
        func kernel(size: Int, outputs: Int, isa: InstructionSet) throws -> DirectConvolutionKernel {
            let g = try WindowGeometry(input: Shape(height: size, width: size, channels: 8), kernel: (3, 3), stride: (1, 1),
                                       dilation: (1, 1), padding: .same)
            var k = DirectConvolutionKernel(
                geometry: g, inputChannels: 8, outputChannels: outputs,
                weights: KernelWeights(source: ParameterData([Float](repeating: 0, count: outputs * 72)), reordered: nil,
                                       bias: nil, outputs: outputs, weightsPerOutput: 72, affine: nil),
                activation: .none)
            k.instructionSet = isa
            return k
        }
        // DenseNet-121's 14 × 14 128 → 32: two blocks, fewer than two threads' tiles take.
        #expect(try !kernel(size: 14, outputs: 32, isa: .avx512).splitsBlocks(batch: 1, threads: 2))
        #expect(try kernel(size: 14, outputs: 32, isa: .avx512).splitsBlocks(batch: 1, threads: 1))
        // 7 × 7 with 512 outputs: 32 blocks, the weights split between the threads.
        #expect(try kernel(size: 7, outputs: 512, isa: .avx512).splitsBlocks(batch: 1, threads: 2))
        #expect(try kernel(size: 7, outputs: 64, isa: .avx2).splitsBlocks(batch: 1, threads: 2))
        #expect(try !kernel(size: 7, outputs: 64, isa: .avx512).splitsBlocks(batch: 1, threads: 2))
        // Many pixels always split the pixels; a batch counts its images' pixels.
        #expect(try !kernel(size: 56, outputs: 512, isa: .avx512).splitsBlocks(batch: 1, threads: 2))
        #expect(try !kernel(size: 7, outputs: 512, isa: .avx512).splitsBlocks(batch: 8, threads: 2))
    }

    @Test("Every ungrouped convolution Winograd does not take gets the direct kernel, 1×1 layers of any size too")
    func choice() throws {
        guard ConvolutionOverride.current == .auto else { return }
        // What compile builds for each: spatial kernels Winograd leaves (stride 2, 7×7), 1×1 layers
        // from 7×7 to 56×56 maps and up to 1024 × 1024 weights; grouped ones stay on im2col and
        // a single pixel is a fully connected layer.
        func chosen(_ layer: any Layer, _ size: Int, _ channels: Int) throws -> any Kernel {
            try refChosenKernel(layer, input: Shape(height: size, width: size, channels: channels))
        }
        #expect(try chosen(Convolution(kernel: (3, 3), channels: 64, stride: (2, 2)), 56, 32) is DirectConvolutionKernel)
        #expect(try chosen(Convolution(kernel: (7, 7), channels: 64, stride: (2, 2)), 32, 3) is DirectConvolutionKernel)
        #expect(try chosen(PointwiseConvolution(channels: 2048), 7, 512) is DirectConvolutionKernel)
        #expect(try chosen(PointwiseConvolution(channels: 256), 56, 64) is DirectConvolutionKernel)
        #expect(try chosen(PointwiseConvolution(channels: 1024), 28, 1024) is DirectConvolutionKernel)
        #expect(try chosen(Convolution(kernel: (3, 3), channels: 32, groups: 2), 14, 32) is Im2colConvolutionKernel)
        #expect(try chosen(PointwiseConvolution(channels: 1000), 1, 1024) is DenseKernel)
    }
}
