import CAnvilKernels
import CAnvilKernelsEmulated
import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// The AVX-512 body of Winograd's products (`x86_avx512/winograd_products.c`) on every machine:
/// its own source built on emulated intrinsics (Tests/CAnvilKernelsEmulated) against a float64
/// GEMM, bit for bit against the AVX2 body (the same runs of channels summed in the same order),
/// and where the CPU has AVX-512 the real body against the emulated one. The cases reach its
/// 8 × 32 tiles and a last odd block (8 × 16), a last group of fewer than 8 tiles, runs of
/// channels that end short of 32, padded rows, and block ranges that start or end inside a pair.
@Suite("Winograd products, AVX-512 body")
struct WinogradProductsAVX512Tests {
    struct Case: CustomStringConvertible, Sendable {
        var tiles: Int, channels: Int, outputs: Int
        var blocks: Range<Int>? = nil

        var blockCount: Int { (outputs + 15) / 16 }
        var range: Range<Int> { blocks ?? 0 ..< blockCount }
        var vStride: Int { channels + 3 }
        var mStride: Int { blockCount * 16 + 16 }
        var description: String { "\(tiles) tiles × \(channels) channels → \(outputs), blocks \(range)" }
        var shape: anvil_winograd_products_shape {
            anvil_winograd_products_shape(tiles: Int32(tiles), channels: Int32(channels), outputs: Int32(outputs),
                                          v_tile_stride: vStride, m_tile_stride: mStride, accumulate: 0)
        }
    }

    static let cases: [Case] = [
        Case(tiles: 13, channels: 70, outputs: 48),               // 8 + 5 tiles; runs 32, 32, 6; a pair and one block
        Case(tiles: 1, channels: 1, outputs: 16),                 // one tile, one channel, one block
        Case(tiles: 30, channels: 256, outputs: 64, blocks: 1 ..< 4), // a range starting at an odd block
        Case(tiles: 8, channels: 33, outputs: 100),               // 3 pairs and a zero-padded last block
        Case(tiles: 17, channels: 64, outputs: 40, blocks: 0 ..< 2), // a range ending inside the layer
    ]

    typealias Body = @Sendable (UnsafePointer<anvil_winograd_products_shape>, UnsafePointer<Float>, UnsafePointer<Float>,
                                UnsafeMutablePointer<Float>, Int32, Int32) -> Void

    static let emulated: Body = { anvil_winograd_products_avx512_emulated($0, $1, $2, $3, $4, $5) }
    static func dispatched(_ isa: anvil_isa) -> Body { { anvil_winograd_products(isa, $0, $1, $2, $3, $4, $5) } }

    /// A case's V (padded rows), W[channel][output], U packed `[block][channel][16]`.
    struct Data {
        let v: [Float], w: [Float], u: [Float]

        init(_ c: Case, seed: Int) {
            var random = RefRandom(seed: seed)
            v = random.floats(c.tiles * c.vStride)
            w = random.floats(c.channels * c.outputs)
            var u = [Float](repeating: 0, count: c.blockCount * c.channels * 16)
            for b in 0 ..< c.blockCount {
                for ch in 0 ..< c.channels {
                    for j in 0 ..< 16 where b * 16 + j < c.outputs { u[(b * c.channels + ch) * 16 + j] = w[ch * c.outputs + b * 16 + j] }
                }
            }
            self.u = u
        }

        /// M (NaN where nothing is written) after `body` over the block ranges `cuts` make of the case's range.
        func run(_ c: Case, _ body: Body, cuts: [Int] = []) -> [Float] {
            var m = [Float](repeating: .nan, count: c.tiles * c.mStride)
            var shape = c.shape
            let bounds = [c.range.lowerBound] + cuts + [c.range.upperBound]
            v.withUnsafeBufferPointer { vp in
                u.withUnsafeBufferPointer { up in
                    m.withUnsafeMutableBufferPointer { mp in
                        for i in 0 ..< bounds.count - 1 {
                            body(&shape, vp.baseAddress!, up.baseAddress!, mp.baseAddress!, Int32(bounds[i]), Int32(bounds[i + 1]))
                        }
                    }
                }
            }
            return m
        }

        /// M after `body` over the case's blocks in one call per run of channels `cuts` make (each
        /// a multiple of ANVIL_WINOGRAD_CHUNK): U repacked for each run's channels, every call
        /// after the first with `accumulate` set.
        func runChannels(_ c: Case, _ body: Body, cuts: [Int]) -> [Float] {
            var m = [Float](repeating: .nan, count: c.tiles * c.mStride)
            let bounds = [0] + cuts + [c.channels]
            for i in 0 ..< bounds.count - 1 {
                let begin = bounds[i], count = bounds[i + 1] - begin
                var part = [Float](repeating: 0, count: c.blockCount * count * 16)
                for b in 0 ..< c.blockCount {
                    for ch in 0 ..< count {
                        for j in 0 ..< 16 { part[(b * count + ch) * 16 + j] = u[(b * c.channels + begin + ch) * 16 + j] }
                    }
                }
                var shape = c.shape
                shape.channels = Int32(count)
                shape.accumulate = i > 0 ? 1 : 0
                v.withUnsafeBufferPointer { vp in
                    part.withUnsafeBufferPointer { up in
                        m.withUnsafeMutableBufferPointer { mp in
                            body(&shape, vp.baseAddress! + begin, up.baseAddress!, mp.baseAddress!, Int32(c.range.lowerBound),
                                 Int32(c.range.upperBound))
                        }
                    }
                }
            }
            return m
        }
    }

    /// Products from taps add 128 input channels at a time into M (`accumulate`): a case's
    /// channels in several calls, each a whole number of runs, must sum as one call does, bit for
    /// bit, in every body (the emulated AVX-512 one on any x86-64).
    @Test("channels in several calls sum as in one", arguments: refInstructionSets)
    func accumulatedCalls(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        let chunk = Int(ANVIL_WINOGRAD_CHUNK)
        var bodies: [(String, Body)] = [("\(isa)", Self.dispatched(isa.cValue))]
        if anvil_emulated_bodies_available() == 1 { bodies.append(("emulated AVX-512", Self.emulated)) }
        for (index, c) in Self.cases.enumerated() where c.channels > chunk {
            let data = Data(c, seed: 9_400 + index)
            let cuts = Array(stride(from: chunk, to: c.channels, by: chunk * (index % 2 + 1)))
            for (name, body) in bodies {
                let whole = data.run(c, body)
                #expect(refBitDifferences(data.runChannels(c, body, cuts: cuts), whole) == 0, "\(name) \(c), cuts \(cuts)")
            }
        }
    }


    @Test("The emulated AVX-512 body matches a float64 GEMM and the AVX2 body bit for bit, however the blocks are split")
    func emulatedBody() throws {
        try #require(anvil_emulated_bodies_available() == 1, "the emulated bodies are built on x86-64 only")
        for (index, c) in Self.cases.enumerated() {
            let data = Data(c, seed: 9_000 + index)
            let actual = data.run(c, Self.emulated)
            let tolerance = 2e-6 * Double(c.channels).squareRoot() * 4
            var worst = 0.0, unwritten = 0
            for t in 0 ..< c.tiles {
                for o in c.range.lowerBound * 16 ..< min(c.outputs, c.range.upperBound * 16) {
                    var sum = 0.0
                    for ch in 0 ..< c.channels { sum += Double(data.v[t * c.vStride + ch]) * Double(data.w[ch * c.outputs + o]) }
                    let value = actual[t * c.mStride + o]
                    if value.isNaN { unwritten += 1 } else { worst = refWorst(worst, abs(Double(value) - sum) / max(1, abs(sum))) }
                }
            }
            #expect(unwritten == 0 && worst <= tolerance, "\(c): \(unwritten) outputs unwritten, worst relative error \(worst)")
            if InstructionSet.avx2.isSupported {
                #expect(refBitDifferences(data.run(c, Self.dispatched(ANVIL_ISA_AVX2)), actual) == 0, "\(c): AVX2 differs")
            }
            if c.range.count > 1 {
                #expect(refBitDifferences(data.run(c, Self.emulated, cuts: [c.range.lowerBound + 1]), actual) == 0,
                        "\(c): split after the first block")
            }
        }
    }

    @Test("The real AVX-512 body equals the emulated one bit for bit")
    func realBody() throws {
        try refRequireSupported(.avx512)
        for (index, c) in Self.cases.enumerated() {
            let data = Data(c, seed: 9_000 + index)
            #expect(refBitDifferences(data.run(c, Self.dispatched(ANVIL_ISA_AVX512)), data.run(c, Self.emulated)) == 0, "\(c)")
        }
    }
}
