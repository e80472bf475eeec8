import CAnvilKernels
import CAnvilKernelsEmulated
import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// The AVX-512 direct-convolution body (`x86_avx512/direct_convolution.c`) on every machine: its
/// own source built on emulated intrinsics (Tests/CAnvilKernelsEmulated) is checked against a
/// float64 naive convolution, and bit for bit against the AVX2 body, which makes every sum in
/// the same order. Where the CPU has AVX-512 the real body (through the dispatch table) must equal
/// the emulated one bit for bit. The cases reach its tiles of every group of blocks — 6 × 64 (four
/// blocks), 8 × 48, 8 × 32 and 8 × 16, and 16 × 16 for 1×1 layers at stride 1 — and the group a last narrow block makes with the one
/// before it, partial blocks through lane masks, tile rests, the window table and the runs,
/// passes over channel ranges, the block-by-block walk, a fused residual, and splits of pixels and
/// of blocks that break groups.
@Suite("Direct convolution, AVX-512 body")
struct DirectConvolutionAVX512Tests {
    /// One convolution over an already padded image.
    struct Case: CustomStringConvertible, Sendable {
        var height: Int, width: Int, inputs: Int, outputs: Int
        var kernel: (Int, Int) = (1, 1), stride = (1, 1), dilation = (1, 1)
        var bias = true, residual = false
        var clamp: (Float, Float) = (-.infinity, .infinity)

        var outputHeight: Int { (height - (kernel.0 - 1) * dilation.0 - 1) / stride.0 + 1 }
        var outputWidth: Int { (width - (kernel.1 - 1) * dilation.1 - 1) / stride.1 + 1 }
        var pixels: Int { outputHeight * outputWidth }
        var depth: Int { kernel.0 * kernel.1 * inputs }
        var blocks: Int { (outputs + 15) / 16 }
        var description: String {
            "\(height)×\(width)×\(inputs) → \(outputs), kernel \(kernel), stride \(stride), dilation \(dilation), bias \(bias), residual \(residual), clamp \(clamp)"
        }
        var shape: anvil_conv_shape {
            anvil_conv_shape(input_width: Int32(width), channels: Int32(inputs), kernel_height: Int32(kernel.0),
                             kernel_width: Int32(kernel.1), stride_height: Int32(stride.0), stride_width: Int32(stride.1),
                             dilation_height: Int32(dilation.0), dilation_width: Int32(dilation.1),
                             output_width: Int32(outputWidth), outputs: Int32(outputs), clamp_min: clamp.0, clamp_max: clamp.1)
        }
    }

    static let cases: [Case] = [
        // Few channels: the window table. 64 pixels in tiles of 8; a group of 16 + 8 channels.
        Case(height: 10, width: 10, inputs: 3, outputs: 24, kernel: (3, 3), clamp: (0, .infinity)),
        // Stride 2, a pair of 16 + 5 (masked), 16 pixels.
        Case(height: 9, width: 9, inputs: 3, outputs: 21, kernel: (3, 3), stride: (2, 2), clamp: (0, 6)),
        // Dilation and unequal strides through the table, no bias, a pair of 16 + 1.
        Case(height: 8, width: 11, inputs: 5, outputs: 17, kernel: (3, 2), stride: (1, 2), dilation: (2, 1), bias: false,
             clamp: (-0.2, 0.3)),
        // 1×1 runs: 35 pixels = 8 + 8 + 8 + a rest of 11 as 5 + 6; with a residual.
        Case(height: 5, width: 7, inputs: 144, outputs: 24, residual: true),
        // 16 blocks in groups of 4, weights cached: chunks of pixels.
        Case(height: 6, width: 6, inputs: 64, outputs: 256, clamp: (0, .infinity)),
        // 300 × 256 weights: the block-by-block walk; 4 groups of 4 and one of 3 ending in 12 channels.
        Case(height: 6, width: 6, inputs: 256, outputs: 300),
        // 600 inputs: three passes that read partial sums back; a group of 3 blocks, the last 8 (masked); residual.
        Case(height: 7, width: 7, inputs: 600, outputs: 40, residual: true, clamp: (0, .infinity)),
        // 3×3 over 1,100 inputs, weights past the L2 walk: eight passes of 144 (the last 92) over
        // runs of window rows, sized for the L2 by the layer alone; a pair of 16 + 3.
        Case(height: 3, width: 5, inputs: 1100, outputs: 19, kernel: (3, 3)),
        // ResNet-50's last 3×3 layers: 512 inputs in four passes of 128; a group of 4 and one alone.
        Case(height: 7, width: 7, inputs: 512, outputs: 80, kernel: (3, 3), clamp: (0, .infinity)),
        // A single pixel and a single partial block.
        Case(height: 1, width: 1, inputs: 64, outputs: 10),
        // Stride 2 over runs, a residual; 9 blocks, the last of 2 channels: groups of 4, 3 and 2.
        Case(height: 9, width: 9, inputs: 70, outputs: 130, kernel: (3, 3), stride: (2, 2), residual: true),
        // Many pixels of few channels: the largest chunks and a rest joining the last.
        Case(height: 30, width: 31, inputs: 16, outputs: 40, clamp: (0, 6)),
        // One whole block alone (8 × 16 tiles without a mask).
        Case(height: 14, width: 14, inputs: 96, outputs: 16, kernel: (1, 1)),
        // Four blocks, the last of 12 channels (masked), in tiles of 6: 35 pixels as 4 × 6, 6 and 5; a residual.
        Case(height: 5, width: 7, inputs: 24, outputs: 60, residual: true, clamp: (0, 6)),
        // Five whole blocks: a group of 4 and one alone.
        Case(height: 4, width: 6, inputs: 32, outputs: 80),
        // Five blocks, the last of 8: groups of 3 and 2; a 3×3 window in runs.
        Case(height: 6, width: 5, inputs: 40, outputs: 72, kernel: (3, 3), clamp: (-0.5, .infinity)),
        // The window table with groups of 4: 3×3 over 3 channels, 64 outputs, 64 pixels.
        Case(height: 10, width: 10, inputs: 3, outputs: 64, kernel: (3, 3), bias: false),
        // 1×1 at stride 1, one block of 5 (masked): 16-pixel tiles of contiguous pixels, 45 = 16 +
        // 16 + 13, over three passes of 1,100 inputs that read partial sums back; a residual.
        Case(height: 5, width: 9, inputs: 1100, outputs: 5, residual: true, clamp: (0, 6)),
        // 20 pixels of one whole block: a rest of 1–1.5 tiles as 10 + 10.
        Case(height: 4, width: 5, inputs: 24, outputs: 16),
        // 1×1 at stride 2 (pixels not contiguous): the 8-pixel tiles.
        Case(height: 9, width: 9, inputs: 20, outputs: 7, stride: (2, 2)),
    ]

    typealias Body = @Sendable (UnsafePointer<anvil_conv_shape>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>?,
                      UnsafePointer<Float>?, UnsafeMutablePointer<Float>, Int32, Int32, Int32, Int32) -> Void


    static let emulated: Body = { anvil_conv_direct_avx512_emulated($0, $1, $2, $3, $4, $5, $6, $7, $8, $9) }
    static func dispatched(_ isa: anvil_isa) -> Body {
        { anvil_conv_direct(isa, $0, $1, $2, $3, $4, $5, $6, $7, $8, $9) }
    }

    /// A case's data: input, packed weights, bias, residual, and the float64 reference.
    struct Data {
        let input: [Float], packed: [Float], bias: [Float]?, residual: [Float]?, expected: [Double]

        init(_ c: Case, seed: Int) {
            var random = RefRandom(seed: seed)
            input = random.floats(c.height * c.width * c.inputs)
            let weights = random.floats(c.outputs * c.depth)
            bias = c.bias ? random.floats(c.outputs) : nil
            residual = c.residual ? random.floats(c.pixels * c.outputs) : nil
            var packed = [Float](repeating: 0, count: anvil_conv_packed_count(Int32(c.outputs), Int32(c.depth)))
            weights.withUnsafeBufferPointer { w in
                packed.withUnsafeMutableBufferPointer { anvil_conv_pack_weights(w.baseAddress!, Int32(c.outputs), Int32(c.depth), $0.baseAddress!) }
            }
            self.packed = packed
            var expected = [Double](repeating: 0, count: c.pixels * c.outputs)
            for oy in 0 ..< c.outputHeight {
                for ox in 0 ..< c.outputWidth {
                    let p = oy * c.outputWidth + ox
                    for o in 0 ..< c.outputs {
                        var sum = Double(bias?[o] ?? 0) + Double(residual?[p * c.outputs + o] ?? 0)
                        for ky in 0 ..< c.kernel.0 {
                            for kx in 0 ..< c.kernel.1 {
                                let y = oy * c.stride.0 + ky * c.dilation.0, x = ox * c.stride.1 + kx * c.dilation.1
                                for ch in 0 ..< c.inputs {
                                    sum += Double(input[(y * c.width + x) * c.inputs + ch])
                                        * Double(weights[o * c.depth + (ky * c.kernel.1 + kx) * c.inputs + ch])
                                }
                            }
                        }
                        expected[p * c.outputs + o] = min(max(sum, Double(c.clamp.0)), Double(c.clamp.1))
                    }
                }
            }
            self.expected = expected
        }

        /// `body` over the pixel ranges `pixelCuts` split the image into, each over the block
        /// ranges `blockCuts` split the blocks into (as threads split the work). `inPlace`: the
        /// output buffer starts as the residual and is passed as it (an output written over its
        /// residual, ``Kernel/inPlaceInput``).
        func run(_ c: Case, _ body: Body, pixelCuts: [Int] = [], blockCuts: [Int] = [], inPlace: Bool = false) -> [Float] {
            var output = inPlace ? residual! : [Float](repeating: .nan, count: c.pixels * c.outputs)
            var shape = c.shape
            let pixels = [0] + pixelCuts + [c.pixels], blocks = [0] + blockCuts + [c.blocks]
            input.withUnsafeBufferPointer { x in
                packed.withUnsafeBufferPointer { w in
                    output.withUnsafeMutableBufferPointer { y in
                        Self.withPointer(bias) { b in
                            Self.withPointer(residual) { r in
                                for i in 0 ..< pixels.count - 1 {
                                    for j in 0 ..< blocks.count - 1 {
                                        body(&shape, x.baseAddress!, w.baseAddress!, b, inPlace ? UnsafePointer(y.baseAddress!) : r,
                                             y.baseAddress!, Int32(pixels[i]),
                                             Int32(pixels[i + 1]), Int32(blocks[j]), Int32(blocks[j + 1]))
                                    }
                                }
                            }
                        }
                    }
                }
            }
            return output
        }

        static func withPointer(_ values: [Float]?, _ body: (UnsafePointer<Float>?) -> Void) {
            guard let values else { return body(nil) }
            values.withUnsafeBufferPointer { body($0.baseAddress) }
        }
    }

    @Test("The emulated AVX-512 body matches the float64 convolution and the AVX2 body bit for bit, however split")
    func emulatedBody() throws {
        try #require(anvil_emulated_bodies_available() == 1, "the emulated bodies are built on x86-64 only")
        for (index, c) in Self.cases.enumerated() {
            let data = Data(c, seed: 8_000 + index)
            let actual = data.run(c, Self.emulated)
            let tolerance = 2e-6 * Double(c.depth).squareRoot() * 4
            var worst = 0.0
            for (a, e) in zip(actual, data.expected) { worst = refWorst(worst, abs(Double(a) - e) / max(1, abs(e))) }
            #expect(!actual.contains { $0.isNaN } && worst <= tolerance, "\(c): worst relative error \(worst) > \(tolerance)")
            if InstructionSet.avx2.isSupported {
                #expect(refBitDifferences(data.run(c, Self.dispatched(ANVIL_ISA_AVX2)), actual) == 0,
                        "\(c): AVX2 and emulated AVX-512 differ")
            }
            // Threads' splits: pixels at odd places, and blocks so that groups break.
            #expect(refBitDifferences(data.run(c, Self.emulated, pixelCuts: [c.pixels / 3, c.pixels / 3 + 1]), actual) == 0,
                    "\(c): pixel split")
            if c.blocks > 1 {
                #expect(refBitDifferences(data.run(c, Self.emulated, blockCuts: [1]), actual) == 0, "\(c): block split at 1")
                #expect(refBitDifferences(data.run(c, Self.emulated, blockCuts: Array(stride(from: 3, to: c.blocks, by: 3))),
                                         actual) == 0, "\(c): block splits every 3")
            }
        }
    }

    @Test("Every body, and the emulated AVX-512 one, writes over its residual as it adds it: the same bits as into another buffer",
          arguments: refInstructionSets)
    func residualInPlace(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var bodies: [(String, Body)] = [("\(isa)", Self.dispatched(isa.cValue))]
        if isa == .avx2 && anvil_emulated_bodies_available() == 1 { bodies.append(("emulated AVX-512", Self.emulated)) }
        for (index, c) in Self.cases.enumerated() where c.residual {
            let data = Data(c, seed: 8_000 + index)
            for (name, body) in bodies {
                let separate = data.run(c, body)
                #expect(refBitDifferences(data.run(c, body, inPlace: true), separate) == 0, "\(name) \(c)")
                #expect(refBitDifferences(data.run(c, body, pixelCuts: [c.pixels / 3], blockCuts: c.blocks > 1 ? [1] : [],
                                                   inPlace: true), separate) == 0, "\(name) \(c), split")
            }
        }
    }

    @Test("The real AVX-512 body equals the emulated one bit for bit")
    func realBody() throws {
        try refRequireSupported(.avx512)
        for (index, c) in Self.cases.enumerated() {
            let data = Data(c, seed: 8_000 + index)
            let emulated = data.run(c, Self.emulated)
            #expect(refBitDifferences(data.run(c, Self.dispatched(ANVIL_ISA_AVX512)), emulated) == 0, "\(c)")
            if c.blocks > 1 {
                #expect(refBitDifferences(data.run(c, Self.dispatched(ANVIL_ISA_AVX512), blockCuts: [1]), emulated) == 0,
                        "\(c): block split at 1")
            }
        }
    }
}
