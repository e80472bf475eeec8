import CAnvilKernels
import CAnvilKernelsEmulated
import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Average pooling's C kernel (`anvil_average_pool_lines`), every body the CPU runs (scalar, AVX2,
/// AVX-512) and the AVX-512 body built on emulated intrinsics on any x86-64: against a float64
/// average with the float sum's error bound, and bit for bit against the scalar body (every body
/// adds the same values in the same order, then multiplies by the same scale). The cases reach
/// the 32-channel, 16- and 8-channel loops and the last channels, windows clipped by padding that
/// counts or not, ceil mode, strides and dilation.
@Suite("Average pooling kernel")
struct AveragePoolingKernelTests {
    struct Case: CustomStringConvertible {
        let x: RefTensor
        let kernel: (Int, Int), stride: (Int, Int), dilation: (Int, Int)
        let padding: Padding
        let ceilMode: Bool
        let countsPadding: Bool

        var description: String {
            "\(x) kernel \(kernel) stride \(stride) dilation \(dilation) \(padding) ceil \(ceilMode) counts padding \(countsPadding)"
        }
    }

    /// Random cases whose reference exists (every window has a cell in the input).
    static func cases(count: Int, seed: Int) -> [Case] {
        var random = RefRandom(seed: seed)
        var cases: [Case] = []
        while cases.count < count {
            let w = random.poolingWindow()
            let c = Case(x: w.x, kernel: w.kernel, stride: w.stride, dilation: w.dilation, padding: w.padding,
                         ceilMode: random.int(0 ... 3) == 0, countsPadding: random.bool())
            guard Self.reference(c) != nil, (try? Self.geometry(c)) != nil else { continue }
            cases.append(c)
        }
        return cases
    }

    static func geometry(_ c: Case) throws -> WindowGeometry {
        try WindowGeometry(input: c.x.shape, kernel: c.kernel, stride: c.stride, dilation: c.dilation, padding: c.padding,
                           ceilMode: c.ceilMode)
    }

    static func reference(_ c: Case) -> RefTensor? {
        Naive.averagePool(c.x, kernel: c.kernel, stride: c.stride, padding: c.padding, dilation: c.dilation,
                          ceilMode: c.ceilMode, countIncludesPadding: c.countsPadding)
    }

    /// The kernel with body `isa`, through ``PoolingKernel`` (the path models take).
    static func run(_ c: Case, isa: InstructionSet) throws -> [Float] {
        let g = try geometry(c)
        var kernel = PoolingKernel(geometry: g, channels: c.x.c, mode: .average(countsPadding: c.countsPadding))
        kernel.instructionSet = isa
        return refRunKernel(kernel, input: c.x.floats, batch: c.x.n, inputShape: c.x.shape,
                            outputShape: Shape(height: g.outputHeight, width: g.outputWidth, channels: c.x.c))
    }

    /// The emulated AVX-512 body over the output lines, in two calls split after the first line.
    static func runEmulated(_ c: Case) throws -> [Float] {
        let g = try geometry(c)
        var shape = g.poolShape(channels: c.x.c)
        let divisor = anvil_pool_divisor(counts_padding: c.countsPadding ? 1 : 0, pad_bottom: Int32(g.padBottom),
                                         pad_right: Int32(g.padRight))
        var y = [Float](repeating: .nan, count: c.x.n * g.outputHeight * g.outputWidth * c.x.c)
        let lines = Int32(c.x.n * g.outputHeight)
        c.x.floats.withUnsafeBufferPointer { xp in
            y.withUnsafeMutableBufferPointer { yp in
                anvil_average_pool_lines_avx512_emulated(&shape, divisor, xp.baseAddress!, yp.baseAddress!, 0, 1)
                anvil_average_pool_lines_avx512_emulated(&shape, divisor, xp.baseAddress!, yp.baseAddress!, 1, lines)
            }
        }
        return y
    }

    @Test("Every body matches the float64 average within the float sum's bound", arguments: refInstructionSets)
    func matchesReference(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        for c in Self.cases(count: 60, seed: 616) {
            let expected = try #require(Self.reference(c))
            let actual = try Self.run(c, isa: isa)
            try #require(actual.count == expected.v.count)
            // A float sum of k values is within (k − 1)·2⁻²⁴·Σ|x| of the exact one; the reciprocal
            // of the divisor and the product round once more each: (k + 2)·2⁻²⁴·Σ|x| / divisor
            // bounds every output, k the window's cells, Σ|x| / divisor the same pooling of |x|.
            var magnitudes = c.x
            magnitudes.v = magnitudes.v.map { abs($0) }
            let magnitude = try #require(Self.reference(Case(x: magnitudes, kernel: c.kernel, stride: c.stride,
                                                             dilation: c.dilation, padding: c.padding,
                                                             ceilMode: c.ceilMode, countsPadding: c.countsPadding)))
            let cells = Double(c.kernel.0 * c.kernel.1)
            var worst = 0.0
            for (index, value) in actual.enumerated() {
                let bound = (cells + 2) * 0x1p-24 * magnitude.v[index]
                let error = abs(Double(value) - expected.v[index])
                worst = refWorst(worst, bound > 0 ? error / bound : (error == 0 ? 0 : .infinity))
            }
            #expect(worst <= 1, "\(isa) \(c): worst error \(worst) of its bound")
        }
    }

    @Test("Every body, and the AVX-512 body on emulated intrinsics, gives the scalar body's bits",
          arguments: refInstructionSets)
    func bodiesAgree(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        for c in Self.cases(count: 40, seed: 717) {
            let scalar = try Self.run(c, isa: .scalar)
            #expect(refBitDifferences(try Self.run(c, isa: isa), scalar) == 0, "\(isa) \(c)")
            if anvil_emulated_bodies_available() == 1 {
                #expect(refBitDifferences(try Self.runEmulated(c), scalar) == 0, "emulated AVX-512 \(c)")
            }
        }
    }

    @Test("A window wholly in the padding averages to 0; a NaN or an infinity cell makes its window's average NaN or infinite",
          arguments: refInstructionSets)
    func edges(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        // 3 × 3 input, 2 × 2 windows at stride 2, 2 pixels of padding before and 1 after: the
        // first output row and column lie wholly in the padding, output (1, 1) covers the
        // centre pixel and output (2, 2) the bottom-right one.
        let channels = 37
        var x = RefTensor(n: 1, h: 3, w: 3, c: channels, floats: (0 ..< 9 * channels).map { Float($0 % 5) - 2 })
        x.v[4 * channels + 3] = .nan                  // centre pixel, channel 3
        x.v[8 * channels + 20] = .infinity            // bottom-right pixel, channel 20
        for countsPadding in [false, true] {
            let c = Case(x: x, kernel: (2, 2), stride: (2, 2), dilation: (1, 1),
                         padding: .explicit(top: 2, left: 2, bottom: 1, right: 1), ceilMode: false, countsPadding: countsPadding)
            let g = try Self.geometry(c)
            let y = try Self.run(c, isa: isa)
            func at(_ oy: Int, _ ox: Int, _ ch: Int) -> Float { y[(oy * g.outputWidth + ox) * channels + ch] }
            for ch in 0 ..< channels { #expect(at(0, 0, ch).bitPattern == Float(0).bitPattern, "\(isa) channel \(ch)") }
            #expect(at(1, 1, 3).isNaN, "\(isa): a NaN cell")
            #expect(at(2, 2, 20) == .infinity, "\(isa): an infinite cell")
        }
    }
}
