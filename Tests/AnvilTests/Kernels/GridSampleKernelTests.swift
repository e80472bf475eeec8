import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// `GridSample` checked on facts that follow from its definition: a grid of the pixel centres
/// reproduces the image in every mode, each item reads its own image, and points outside the
/// image read what each padding mode says (ONNX's own vectors are in ONNXNodeTests).
@Suite struct GridSampleKernelTests {
    /// The normalised coordinate of pixel `i` of `extent` (its centre).
    static func normalised(_ i: Int, _ extent: Int, alignCorners: Bool) -> Float {
        alignCorners ? Float(2 * i) / Float(extent - 1) - 1 : (2 * Float(i) + 1) / Float(extent) - 1
    }

    @Test("A grid of the pixel centres gives back each item's image, in every mode and padding",
          arguments: GridSampleMode.allCases, [false, true])
    func identityGrid(mode: GridSampleMode, alignCorners: Bool) throws {
        var rng = RefRandom(seed: 16)
        let (h, w, c, batch) = (4, 5, 3, 2)
        let image = rng.floats(batch * h * w * c)
        var grid: [Float] = []
        for _ in 0 ..< batch { for y in 0 ..< h { for x in 0 ..< w {
            grid += [Self.normalised(x, w, alignCorners: alignCorners), Self.normalised(y, h, alignCorners: alignCorners)]
        } } }
        for padding in GridSamplePadding.allCases {
            let output = try runLayerKernel(GridSample(mode: mode, padding: padding, alignCorners: alignCorners), [image, grid], batch: batch,
                                            shapes: [Shape(height: h, width: w, channels: c), Shape(height: h, width: w, channels: 2)])
            #expect(zip(output.values, image).allSatisfy { abs($0 - $1) <= 1e-5 }, "\(mode) \(padding) align \(alignCorners)")
        }
    }

    @Test("Outside the image: zeros read 0, border the edge pixel, reflection the mirrored point; NaN reads 0")
    func outsideTheImage() throws {
        // One row of 3 pixels, one channel: 10, 20, 40. Without aligned corners, x = −1 is the
        // left edge of pixel 0, so pixel coordinate p maps to (2p + 1) / 3 − 1.
        let image: [Float] = [10, 20, 40]
        let at = { (p: Float) in (2 * p + 1) / 3 - 1 }
        let points: [Float] = [at(-1.5), 0, at(3.25), 0, .nan, 0]  // (x, y) pairs; y = 0 is the row's centre
        let shapes = [Shape(height: 1, width: 3, channels: 1), Shape(height: 1, width: 3, channels: 2)]
        func run(_ padding: GridSamplePadding) throws -> [Float] {
            try runLayerKernel(GridSample(mode: .linear, padding: padding), [image, points], batch: 1, shapes: shapes).values
        }
        // Zeros: p = −1.5 lies between the missing pixel −2 and −1: 0. p = 3.25: pixels 3 and 4, missing: 0.
        #expect(try run(.zeros) == [0, 0, 0])
        // Border: the coordinate is clamped to 0 and 2.
        #expect(try run(.border) == [10, 40, 0])
        // Reflection about −0.5 and 2.5: −1.5 → 0.5 (halfway between 10 and 20); 3.25 → 1.75.
        let reflected = try run(.reflection)
        #expect(abs(reflected[0] - 15) < 1e-5 && abs(reflected[1] - (20 + 0.75 * 20)) < 1e-5 && reflected[2] == 0)
    }

    @Test("A grid that is not height × width × 2 is refused")
    func refusesBadGrids() throws {
        let image = Shape(height: 4, width: 4, channels: 3)
        #expect(throws: AnvilError.self) { try GridSample().outputShape(for: [image, Shape(height: 2, width: 2, channels: 3)]) }
        #expect(throws: AnvilError.self) { try GridSample().outputShape(for: [Shape.vector(3), Shape(height: 2, width: 2, channels: 2)]) }
    }
}
