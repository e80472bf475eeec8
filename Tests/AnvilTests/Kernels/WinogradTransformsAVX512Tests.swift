import CAnvilKernels
import CAnvilKernelsEmulated
import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// The AVX-512 body of Winograd's 3×3 transforms (`x86_avx512/winograd_3x3.c`: the shared
/// header at 16 lanes) on every machine: the same header at 16 lanes compiled without the
/// target (Tests/CAnvilKernelsEmulated) bit for bit against the scalar body at 8 lanes — each
/// lane does the same operations in the same order, and the scalar body is held to a float64
/// convolution by ``WinogradTests`` — and where the CPU has AVX-512 the real body against the
/// emulated one. Buffers are filled with a sentinel past what a call may write, so a store of
/// whole vectors where a short one belongs (padding lanes, the last channels, past the end)
/// shows as a difference.
@Suite("Winograd 3×3 transforms, AVX-512 body")
struct WinogradTransformsAVX512Tests {
    struct Case: CustomStringConvertible, Sendable {
        var tile: Int, batch = 1, height: Int, width: Int, channels: Int, outputs: Int
        var padTop = 1, padLeft = 1, padBottom = 1, padRight = 1
        var bias = true, slope: Float = 1

        var outputHeight: Int { height + padTop + padBottom - 2 }
        var outputWidth: Int { width + padLeft + padRight - 2 }
        var positions: Int { (tile + 2) * (tile + 2) }
        var tiles: Int { batch * ((outputHeight + tile - 1) / tile) * ((outputWidth + tile - 1) / tile) }
        var padded: Int { (outputs + 15) / 16 * 16 }
        var description: String { "F(\(tile)) \(batch)×\(height)×\(width)×\(channels) → \(outputs)" }
        var shape: anvil_winograd3_shape {
            anvil_winograd3_shape(tile: Int32(tile), input_height: Int32(height), input_width: Int32(width),
                                  channels: Int32(channels), output_height: Int32(outputHeight),
                                  output_width: Int32(outputWidth), outputs: Int32(outputs), pad_top: Int32(padTop),
                                  pad_left: Int32(padLeft), v_tile_stride: positions * channels,
                                  v_position_stride: channels, m_tile_stride: positions * padded,
                                  m_position_stride: padded, clamp_min: -0.5, clamp_max: 0.7, negative_slope: slope)
        }
    }

    /// Channel counts on and off 16 (a last vector of 3, 8 or 15 lanes), edge tiles cut by the
    /// output's end, padding on some sides only, two images, a leaky slope, no bias.
    static let cases: [Case] = [
        Case(tile: 4, height: 9, width: 11, channels: 35, outputs: 40),
        Case(tile: 2, height: 7, width: 6, channels: 16, outputs: 16, slope: 0.1),
        Case(tile: 4, batch: 2, height: 8, width: 8, channels: 64, outputs: 7, padTop: 0, padLeft: 0, padBottom: 0,
             padRight: 0, bias: false),
        Case(tile: 2, height: 5, width: 5, channels: 24, outputs: 33, padTop: 0, padBottom: 0),
        Case(tile: 4, height: 6, width: 13, channels: 31, outputs: 48, padLeft: 2, padRight: 0),
    ]

    static let sentinel: Float = -1234.5
    /// Floats of slack after each buffer: a whole-vector store past the end lands there.
    static let slack = 64

    /// The three transforms of one body.
    struct Body: Sendable {
        let input: @Sendable (UnsafePointer<anvil_winograd3_shape>, UnsafePointer<Float>, UnsafeMutablePointer<Float>, Int, Int, Int) -> Void
        let output: @Sendable (UnsafePointer<anvil_winograd3_shape>, UnsafePointer<Float>, UnsafePointer<Float>?,
                               UnsafeMutablePointer<Float>, Int, Int, Int) -> Void
        let filters: @Sendable (Int32, UnsafePointer<Float>, anvil_winograd3_filter_strides, UnsafePointer<Float>?, Int32, Int32,
                                UnsafeMutablePointer<Float>, Int32, Int32) -> Void
        let taps: @Sendable (Int32, UnsafePointer<Float>, anvil_winograd3_tap_strides, Int32, Int32, Int32, UnsafeMutablePointer<Float>,
                             Int) -> Void

        static let emulated = Body(
            input: { anvil_winograd3_transform_input_avx512_emulated($0, $1, $2, $3, $4, $5) },
            output: { anvil_winograd3_transform_output_avx512_emulated($0, $1, $2, $3, $4, $5, $6) },
            filters: { anvil_winograd3_transform_filters_avx512_emulated($0, $1, $2, $3, $4, $5, $6, $7, $8) },
            taps: { anvil_winograd3_transform_taps_avx512_emulated($0, $1, $2, $3, $4, $5, $6, $7) })

        static func dispatched(_ isa: anvil_isa) -> Body {
            Body(input: { anvil_winograd3_transform_input(isa, $0, $1, $2, $3, $4, $5) },
                 output: { anvil_winograd3_transform_output(isa, $0, $1, $2, $3, $4, $5, $6) },
                 filters: { anvil_winograd3_transform_filters(isa, $0, $1, $2, $3, $4, $5, $6, $7, $8) },
                 taps: { anvil_winograd3_transform_taps(isa, $0, $1, $2, $3, $4, $5, $6, $7) })
        }
    }

    /// What `body`'s taps transform makes of the same weights and scale as `run`'s filter
    /// transform: the scaled taps laid out as `arrangement` says — Anvil's `[i][y][x][o]`
    /// (outputs padded with zeros), or the direct kernel's blocks of 16 outputs `[y][x][i][16]` —
    /// transformed for all outputs in U's layout (`whole`), and for the inputs from `cut` on into
    /// a slot of their own whose positions lie a cache line further apart than they take (`part`).
    static func runTaps(_ c: Case, _ body: Body, seed: Int, arrangement: TapArrangement)
        -> (whole: [Float], part: [Float], cut: Int, partStride: Int) {
        var random = RefRandom(seed: seed)
        _ = random.floats(c.batch * c.height * c.width * c.channels)
        _ = random.floats(c.tiles * c.positions * c.padded)
        _ = random.floats(c.outputs)
        let scale = random.floats(c.outputs, 0.5, 2)
        let weights = random.floats(c.outputs * c.channels * 9)
        // Offsets and strides written out here, independent of WinogradFilterLayout.
        func offset(_ i: Int, _ tap: Int, _ o: Int) -> Int {
            arrangement == .pairs ? (i * 9 + tap) * c.padded + o : ((o / 16 * 9 + tap) * c.channels + i) * 16 + o % 16
        }
        let strides = arrangement == .pairs
            ? anvil_winograd3_tap_strides(input: 9 * c.padded, tap: c.padded, block: 16)
            : anvil_winograd3_tap_strides(input: 16, tap: 16 * c.channels, block: 144 * c.channels)
        var taps = [Float](repeating: 0, count: c.channels * 9 * c.padded)
        for o in 0 ..< c.outputs {
            for i in 0 ..< c.channels {
                for tap in 0 ..< 9 { taps[offset(i, tap, o)] = weights[(o * c.channels + i) * 9 + tap] * scale[o] }
            }
        }
        let cut = c.channels / 3, partStride = (c.channels - cut) * c.padded + 16
        var whole = [Float](repeating: sentinel, count: c.positions * c.channels * c.padded + slack)
        var part = [Float](repeating: sentinel, count: c.positions * partStride + slack)
        taps.withUnsafeBufferPointer { t in
            body.taps(Int32(c.tile), t.baseAddress!, strides, Int32(c.padded), 0, Int32(c.channels), &whole,
                      c.channels * c.padded)
            body.taps(Int32(c.tile), t.baseAddress!, strides, Int32(c.padded), Int32(cut), Int32(c.channels), &part,
                      partStride)
        }
        return (whole, part, cut, partStride)
    }

    /// Checks a body's taps transform against its filter transform `u` (PyTorch layout, scaled):
    /// the same values bit for bit, the part's slot in its own layout.
    static func expectTapsMatch(_ c: Case, _ body: Body, u: [Float], seed: Int) {
        for arrangement in [TapArrangement.pairs, .directBlocks] { expectTapsMatch(c, body, u: u, seed: seed, arrangement: arrangement) }
    }

    /// ``expectTapsMatch(_:_:u:seed:)`` for one arrangement of the taps.
    static func expectTapsMatch(_ c: Case, _ body: Body, u: [Float], seed: Int, arrangement: TapArrangement) {
        let taps = runTaps(c, body, seed: seed, arrangement: arrangement)
        // The filter transform leaves padding lanes alone; the taps' padding lanes transform to zeros.
        func differences(_ values: [Float], stride: Int, inputs: Int, first: Int) -> (differ: Int, padding: Int) {
            var differ = 0, padding = 0
            for p in 0 ..< c.positions {
                for i in 0 ..< inputs {
                    for o in 0 ..< c.padded {
                        let value = values[p * stride + (o / 16 * inputs + i) * 16 + o % 16]
                        let filter = u[p * c.channels * c.padded + (o / 16 * c.channels + first + i) * 16 + o % 16]
                        if o >= c.outputs { padding += value == 0 ? 0 : 1 } else if value.bitPattern != filter.bitPattern { differ += 1 }
                    }
                }
            }
            return (differ, padding)
        }
        let whole = differences(taps.whole, stride: c.channels * c.padded, inputs: c.channels, first: 0)
        #expect(whole.differ == 0 && whole.padding == 0, "\(c), \(arrangement): taps ≠ filters \(whole)")
        let part = differences(taps.part, stride: taps.partStride, inputs: c.channels - taps.cut, first: taps.cut)
        #expect(part.differ == 0 && part.padding == 0, "\(c), \(arrangement): taps of inputs \(taps.cut)… into their own slot \(part)")
        #expect(taps.whole.suffix(slack).allSatisfy { $0 == sentinel }, "\(c), \(arrangement): taps written past U's end")
        #expect(taps.part.suffix(slack).allSatisfy { $0 == sentinel }, "\(c), \(arrangement): taps written past the slot's end")
    }

    /// V, the output and U as `body` makes them from the same random data: the input
    /// transform in two calls (tiles from 0, then the rest from a later `first`), the output
    /// transform likewise, the filters (PyTorch layout, with a scale) in two input ranges.
    static func run(_ c: Case, _ body: Body, seed: Int) -> (v: [Float], output: [Float], u: [Float]) {
        var random = RefRandom(seed: seed)
        let input = random.floats(c.batch * c.height * c.width * c.channels)
        let m = random.floats(c.tiles * c.positions * c.padded)
        let bias = random.floats(c.outputs), scale = random.floats(c.outputs, 0.5, 2)
        let weights = random.floats(c.outputs * c.channels * 9)
        var shape = c.shape
        let cut = c.tiles / 3
        var v = [Float](repeating: sentinel, count: c.tiles * c.positions * c.channels + slack)
        var output = [Float](repeating: sentinel, count: c.batch * c.outputHeight * c.outputWidth * c.outputs + slack)
        var u = [Float](repeating: sentinel, count: c.positions * c.channels * c.padded + slack)
        let strides = anvil_winograd3_filter_strides(output: 9 * c.channels, input: 9, row: 3, column: 1)
        let inputCut = Int32(c.channels / 2)
        withUnsafePointer(to: &shape) { s in
            input.withUnsafeBufferPointer { x in
                v.withUnsafeMutableBufferPointer { v in
                    body.input(s, x.baseAddress!, v.baseAddress!, 0, 0, cut)
                    body.input(s, x.baseAddress!, v.baseAddress! + cut * c.positions * c.channels, cut, 0, c.tiles - cut)
                }
            }
            m.withUnsafeBufferPointer { m in
                bias.withUnsafeBufferPointer { b in
                    output.withUnsafeMutableBufferPointer { y in
                        let biasPointer = c.bias ? b.baseAddress : nil
                        body.output(s, m.baseAddress!, biasPointer, y.baseAddress!, 0, 0, cut)
                        body.output(s, m.baseAddress! + cut * c.positions * c.padded, biasPointer, y.baseAddress!, cut, 0,
                                    c.tiles - cut)
                    }
                }
            }
        }
        weights.withUnsafeBufferPointer { w in
            scale.withUnsafeBufferPointer { k in
                u.withUnsafeMutableBufferPointer { u in
                    body.filters(Int32(c.tile), w.baseAddress!, strides, k.baseAddress, Int32(c.outputs), Int32(c.channels),
                                 u.baseAddress!, 0, inputCut)
                    body.filters(Int32(c.tile), w.baseAddress!, strides, k.baseAddress, Int32(c.outputs), Int32(c.channels),
                                 u.baseAddress!, inputCut, Int32(c.channels))
                }
            }
        }
        return (v, output, u)
    }

    @Test("The 16-lane transforms, emulated, equal the scalar body's bit for bit", arguments: cases.indices)
    func emulatedMatchesScalar(index: Int) {
        let c = Self.cases[index]
        let emulated = Self.run(c, .emulated, seed: 9_100 + index)
        let scalar = Self.run(c, .dispatched(ANVIL_ISA_SCALAR), seed: 9_100 + index)
        #expect(refBitDifferences(emulated.v, scalar.v) == 0, "\(c): input transform")
        #expect(refBitDifferences(emulated.output, scalar.output) == 0, "\(c): output transform")
        #expect(refBitDifferences(emulated.u, scalar.u) == 0, "\(c): filter transform")
        // Every value a call writes was written (no sentinel left inside), none past the end.
        #expect(!emulated.v.dropLast(Self.slack).contains(Self.sentinel), "\(c): V has unwritten values")
        #expect(!emulated.output.dropLast(Self.slack).contains(Self.sentinel), "\(c): output has unwritten pixels")
        #expect(emulated.v.suffix(Self.slack).allSatisfy { $0 == Self.sentinel }, "\(c): V written past its end")
        #expect(emulated.output.suffix(Self.slack).allSatisfy { $0 == Self.sentinel }, "\(c): output written past its end")
        #expect(emulated.u.suffix(Self.slack).allSatisfy { $0 == Self.sentinel }, "\(c): U written past its end")
        Self.expectTapsMatch(c, .emulated, u: emulated.u, seed: 9_100 + index)
    }

    @Test("Every body's taps transform makes its filter transform's values", arguments: cases.indices, refInstructionSets)
    func tapsMatchFilters(index: Int, isa: InstructionSet) throws {
        try refRequireSupported(isa)
        let c = Self.cases[index]
        let body = Body.dispatched(isa.cValue)
        Self.expectTapsMatch(c, body, u: Self.run(c, body, seed: 9_300 + index).u, seed: 9_300 + index)
    }

    @Test("The real AVX-512 transforms equal the emulated ones bit for bit", arguments: cases.indices)
    func realMatchesEmulated(index: Int) throws {
        try refRequireSupported(.avx512)
        let c = Self.cases[index]
        let real = Self.run(c, .dispatched(ANVIL_ISA_AVX512), seed: 9_200 + index)
        let emulated = Self.run(c, .emulated, seed: 9_200 + index)
        #expect(refBitDifferences(real.v, emulated.v) == 0, "\(c): input transform")
        #expect(refBitDifferences(real.output, emulated.output) == 0, "\(c): output transform")
        #expect(refBitDifferences(real.u, emulated.u) == 0, "\(c): filter transform")
    }
}
