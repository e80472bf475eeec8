import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// `Col2Im` against a naive float64 scatter written here (each block's cells added where they
/// land, as PyTorch's `fold` defines it; the kernel gathers instead), over strides, dilations
/// and pads.
@Suite struct Col2ImKernelTests {
    /// ONNX Col2Im of `columns` [C·kh·kw][L] (one item) into [C][H][W].
    static func naive(_ columns: [Double], channels: Int, image: (Int, Int), block: (Int, Int), stride: (Int, Int), dilation: (Int, Int),
                      pads: (Int, Int, Int, Int)) -> [Double] {
        let bh = (image.0 + pads.0 + pads.2 - (dilation.0 * (block.0 - 1) + 1)) / stride.0 + 1
        let bw = (image.1 + pads.1 + pads.3 - (dilation.1 * (block.1 - 1) + 1)) / stride.1 + 1
        var out = [Double](repeating: 0, count: channels * image.0 * image.1)
        for by in 0 ..< bh { for bx in 0 ..< bw { for c in 0 ..< channels { for ky in 0 ..< block.0 { for kx in 0 ..< block.1 {
            let y = by * stride.0 - pads.0 + ky * dilation.0, x = bx * stride.1 - pads.1 + kx * dilation.1
            guard y >= 0, y < image.0, x >= 0, x < image.1 else { continue }
            let row = (c * block.0 + ky) * block.1 + kx
            out[(c * image.0 + y) * image.1 + x] += columns[row * (bh * bw) + by * bw + bx]
        } } } } }
        return out
    }

    @Test("Matches the naive scatter", arguments: [((5, 5), (1, 5), (1, 1), (1, 1), (0, 0, 0, 0)), ((6, 7), (2, 3), (2, 1), (1, 2), (1, 0, 0, 2)),
                                                   ((7, 6), (3, 3), (2, 2), (2, 1), (2, 1, 1, 0)), ((4, 4), (2, 2), (3, 3), (1, 1), (1, 1, 1, 1))])
    func matchesNaive(image: (Int, Int), block: (Int, Int), stride: (Int, Int), dilation: (Int, Int), pads: (Int, Int, Int, Int)) throws {
        var rng = RefRandom(seed: 7)
        let (channels, batch) = (3, 2)
        let layer = Col2Im(imageSize: image, block: block, stride: stride, dilation: dilation,
                           padding: .explicit(top: pads.0, left: pads.1, bottom: pads.2, right: pads.3))
        let bh = (image.0 + pads.0 + pads.2 - (dilation.0 * (block.0 - 1) + 1)) / stride.0 + 1
        let bw = (image.1 + pads.1 + pads.3 - (dilation.1 * (block.1 - 1) + 1)) / stride.1 + 1
        let rows = channels * block.0 * block.1, blocks = bh * bw
        var input: [Float] = [], expected: [Float] = []
        for _ in 0 ..< batch {
            let columns = rng.floats(rows * blocks)
            // [rows][L] → channels-last [L][rows].
            for l in 0 ..< blocks { for r in 0 ..< rows { input.append(columns[r * blocks + l]) } }
            let reference = Self.naive(columns.map(Double.init), channels: channels, image: image, block: block, stride: stride, dilation: dilation, pads: pads)
            for y in 0 ..< image.0 { for x in 0 ..< image.1 { for c in 0 ..< channels {
                expected.append(Float(reference[(c * image.0 + y) * image.1 + x]))
            } } }
        }
        let output = try runLayerKernel(layer, [input], batch: batch, shapes: [Shape.sequence(length: blocks, channels: rows)])
        #expect(output.shape == Shape(height: image.0, width: image.1, channels: channels))
        for (k, (got, want)) in zip(output.values, expected).enumerated() { #expect(abs(got - want) <= 1e-5, "value \(k): \(got) vs \(want)") }
    }

    @Test("Block counts and sizes that do not fit are refused")
    func refusals() throws {
        #expect(throws: AnvilError.self) { try Col2Im(imageSize: (5, 5), block: (1, 5)).outputShape(for: [Shape.sequence(length: 4, channels: 5)]) }
        #expect(throws: AnvilError.self) { try Col2Im(imageSize: (5, 5), block: (2, 2)).outputShape(for: [Shape.sequence(length: 16, channels: 6)]) }
        #expect(throws: AnvilError.self) { try Col2Im(imageSize: (0, 5), block: (1, 1)).outputShape(for: [Shape.sequence(length: 0, channels: 1)]) }
        #expect(throws: AnvilError.self) { try Col2Im(imageSize: (2, 2), block: (3, 3)).outputShape(for: [Shape.sequence(length: 1, channels: 9)]) }
        #expect(throws: AnvilError.self) { try Col2Im(imageSize: (5, 5), block: (1, 5)).outputShape(for: [Shape(height: 5, width: 1, channels: 5)]) }
    }
}
