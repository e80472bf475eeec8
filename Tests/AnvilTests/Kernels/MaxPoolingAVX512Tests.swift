import CAnvilKernels
import CAnvilKernelsEmulated
import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// The AVX-512 max pooling body (`x86_avx512/pooling.c`) on every machine: its own source built
/// on emulated intrinsics (Tests/CAnvilKernelsEmulated) against a naive max pooling (exact: a
/// maximum rounds nothing) and the AVX2 body, and where the CPU has AVX-512 the real body against
/// the emulated one. The cases reach its 32-channel loop, 16-channel loop and masked last 1–15
/// channels, padding, strides, dilation, windows entirely in the padding and NaN cells (skipped).
@Suite("Max pooling, AVX-512 body")
struct MaxPoolingAVX512Tests {
    struct Case: CustomStringConvertible, Sendable {
        var images = 1
        var height: Int, width: Int, channels: Int
        var kernel = (2, 2), stride = (2, 2), dilation = (1, 1)
        var pad = (0, 0)
        var output: (Int, Int)

        var description: String {
            "\(images)×\(height)×\(width)×\(channels), kernel \(kernel), stride \(stride), dilation \(dilation), pad \(pad) → \(output)"
        }
        var shape: anvil_pool_shape {
            anvil_pool_shape(input_height: Int32(height), input_width: Int32(width), channels: Int32(channels),
                             kernel_height: Int32(kernel.0), kernel_width: Int32(kernel.1), stride_height: Int32(stride.0),
                             stride_width: Int32(stride.1), dilation_height: Int32(dilation.0),
                             dilation_width: Int32(dilation.1), pad_top: Int32(pad.0), pad_left: Int32(pad.1),
                             output_height: Int32(output.0), output_width: Int32(output.1))
        }
    }

    static let cases: [Case] = [
        Case(height: 8, width: 8, channels: 70, output: (4, 4)),                                  // 32 + 32 + a masked 6
        Case(images: 2, height: 6, width: 6, channels: 32, output: (3, 3)),                      // 32, no tail
        Case(images: 2, height: 7, width: 9, channels: 16, kernel: (3, 3), stride: (2, 2), pad: (1, 1), output: (4, 5)),
        Case(height: 5, width: 6, channels: 5, kernel: (3, 2), stride: (1, 2), dilation: (2, 1), output: (1, 3)),
        Case(height: 6, width: 6, channels: 130, kernel: (3, 3), stride: (1, 1), pad: (1, 1), output: (6, 6)), // 4 × 32 + 2
        // Output pixels past the input: windows entirely in the padding give -infinity.
        Case(height: 3, width: 3, channels: 48, kernel: (2, 2), stride: (2, 2), pad: (2, 2), output: (3, 3)),
    ]

    typealias Body = @Sendable (UnsafePointer<anvil_pool_shape>, UnsafePointer<Float>, UnsafeMutablePointer<Float>,
                                Int32, Int32) -> Void

    static let emulated: Body = { anvil_max_pool_lines_avx512_emulated($0, $1, $2, $3, $4) }
    static func dispatched(_ isa: anvil_isa) -> Body { { anvil_max_pool_lines(isa, $0, $1, $2, $3, $4) } }

    /// Random input with a NaN in about one cell in 16.
    static func input(_ c: Case, seed: Int) -> [Float] {
        var random = RefRandom(seed: seed)
        return (0 ..< c.images * c.height * c.width * c.channels).map { _ in
            random.int(0 ... 15) == 0 ? .nan : random.float(-4, 4)
        }
    }

    /// `body` over the output lines, in two calls split after the first line.
    static func run(_ c: Case, _ x: [Float], _ body: Body) -> [Float] {
        var y = [Float](repeating: 12345, count: c.images * c.output.0 * c.output.1 * c.channels)
        var shape = c.shape
        let lines = c.images * c.output.0
        x.withUnsafeBufferPointer { xp in
            y.withUnsafeMutableBufferPointer { yp in
                body(&shape, xp.baseAddress!, yp.baseAddress!, 0, 1)
                body(&shape, xp.baseAddress!, yp.baseAddress!, 1, Int32(lines))
            }
        }
        return y
    }

    /// The maximum of each window's in-bounds, non-NaN cells (-infinity when there are none).
    static func naive(_ c: Case, _ x: [Float]) -> [Float] {
        var y: [Float] = []
        for n in 0 ..< c.images {
            for oy in 0 ..< c.output.0 {
                for ox in 0 ..< c.output.1 {
                    for ch in 0 ..< c.channels {
                        var best = -Float.infinity
                        for ky in 0 ..< c.kernel.0 {
                            for kx in 0 ..< c.kernel.1 {
                                let iy = oy * c.stride.0 - c.pad.0 + ky * c.dilation.0
                                let ix = ox * c.stride.1 - c.pad.1 + kx * c.dilation.1
                                guard iy >= 0, iy < c.height, ix >= 0, ix < c.width else { continue }
                                let v = x[((n * c.height + iy) * c.width + ix) * c.channels + ch]
                                if !v.isNaN, v > best { best = v }
                            }
                        }
                        y.append(best)
                    }
                }
            }
        }
        return y
    }


    @Test("The emulated AVX-512 body matches the naive max pooling and the AVX2 body")
    func emulatedBody() throws {
        try #require(anvil_emulated_bodies_available() == 1, "the emulated bodies are built on x86-64 only")
        for (index, c) in Self.cases.enumerated() {
            let x = Self.input(c, seed: 9_500 + index)
            let actual = Self.run(c, x, Self.emulated)
            #expect(refBitDifferences(actual, Self.naive(c, x)) == 0, "\(c): differs from the naive max pooling")
            if InstructionSet.avx2.isSupported {
                #expect(refBitDifferences(Self.run(c, x, Self.dispatched(ANVIL_ISA_AVX2)), actual) == 0, "\(c): AVX2 differs")
            }
        }
    }

    @Test("The real AVX-512 body equals the emulated one")
    func realBody() throws {
        try refRequireSupported(.avx512)
        for (index, c) in Self.cases.enumerated() {
            let x = Self.input(c, seed: 9_500 + index)
            #expect(refBitDifferences(Self.run(c, x, Self.dispatched(ANVIL_ISA_AVX512)), Self.run(c, x, Self.emulated)) == 0,
                    "\(c)")
        }
    }
}
