import Foundation
import Testing
@testable import AnvilVision

@Suite("Image resizing")
struct ImageResizeTests {
    func expectClose(_ a: [Float], _ b: [Float], tolerance: Float, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.count == b.count, sourceLocation: sourceLocation)
        for i in 0..<min(a.count, b.count) where abs(a[i] - b[i]) > tolerance {
            Issue.record("sample \(i): \(a[i]) vs expected \(b[i])", sourceLocation: sourceLocation)
            return
        }
    }

    @Test(arguments: [(300, 300, 20, 20), (3, 2, 7, 5), (7, 5, 3, 11), (1, 1, 4, 4), (640, 480, 1, 1)])
    func constantImageStaysConstant(w: Int, h: Int, ow: Int, oh: Int) throws {
        // Three channels with different constants: channels must not mix.
        let triple: [Float] = [17, 200, 255]
        let pixels = [[Float]](repeating: triple, count: w * h).flatMap { $0 }
        let image = try Image(width: w, height: h, channels: 3, pixels: pixels)
        let out = try image.resized(width: ow, height: oh)
        #expect(out.width == ow && out.height == oh && out.channels == 3)
        expectClose(out.pixels, [[Float]](repeating: triple, count: ow * oh).flatMap { $0 }, tolerance: 1e-3)
    }

    @Test func enlargingARampInterpolatesBetweenCentres() throws {
        // 4 → 8: output centres fall at source positions −0.25, 0.25, 0.75, … 3.25 (in
        // pixel-centre units); outside [0, 3] the edge pixel is repeated.
        let ramp = try Image(width: 4, height: 1, channels: 1, pixels: [0, 10, 20, 30])
        let out = try ramp.resized(width: 8, height: 1)
        expectClose(out.pixels, [0, 2.5, 7.5, 12.5, 17.5, 22.5, 27.5, 30], tolerance: 1e-4)
    }

    @Test func shrinkingARampAveragesWithAWidenedTent() throws {
        // 8 → 4 (factor 2): output 0 is centred on the edge between pixels 0 and 1 and sees
        // pixels 0, 1, 2 with tent weights 0.75, 0.75, 0.25 → (0·0.75 + 10·0.75 + 20·0.25) / 1.75;
        // output 1 sees pixels 1…4 with weights 0.25, 0.75, 0.75, 0.25 → 25 (the ramp's value there).
        let ramp = try Image(width: 8, height: 1, channels: 1, pixels: [0, 10, 20, 30, 40, 50, 60, 70])
        let out = try ramp.resized(width: 4, height: 1)
        expectClose(out.pixels, [12.5 / 1.75, 25, 45, 70 - 12.5 / 1.75], tolerance: 1e-4)
    }

    @Test func verticalRampResizesAlongColumns() throws {
        // The same 4 → 8 ramp as a column of a 2-wide image.
        let column = try Image(width: 2, height: 4, channels: 1, pixels: [0, 0, 10, 10, 20, 20, 30, 30])
        let out = try column.resized(width: 2, height: 8)
        let expected: [Float] = [0, 2.5, 7.5, 12.5, 17.5, 22.5, 27.5, 30].flatMap { [$0, $0] }
        expectClose(out.pixels, expected, tolerance: 1e-4)
    }

    @Test func shrinkingAThinLineSpreadsItInsteadOfDroppingIt() throws {
        // A 1-pixel vertical line in a 300-wide image shrunk to 20: plain bilinear sampling
        // would miss it entirely or keep it at full strength; the prefilter keeps its mass.
        var pixels = [Float](repeating: 0, count: 300)
        pixels[150] = 255  // centre 150.5, between the centres of outputs 9 (142.5) and 10 (157.5)
        let line = try Image(width: 300, height: 1, channels: 1, pixels: pixels)
        let out = try line.resized(width: 20, height: 1)
        let total = out.pixels.reduce(0, +)
        // Mass is preserved up to the 300/20 = 15 scale: 255 / 15 = 17.
        #expect(abs(total - 17) < 0.5)
        #expect(out.pixels.max()! < 20)
        // Tent weights 1 − 8/15 and 1 − 7/15, each over a weight sum of 15.
        #expect(abs(out.pixels[9] - 255 * (7.0 / 15) / 15) < 0.01)
        #expect(abs(out.pixels[10] - 255 * (8.0 / 15) / 15) < 0.01)
    }

    @Test(arguments: VisionFixtures.shared.resize)
    func matchesPillowBilinear(_ c: VisionFixtures.Resize) throws {
        let image = try Image(width: c.width, height: c.height, channels: 1, pixels: c.pixels)
        let out = try image.resized(width: c.outWidth, height: c.outHeight)
        expectClose(out.pixels, c.expected, tolerance: 1e-3)
    }

    @Test func sameSizeIsIdentity() throws {
        let image = try Image(width: 3, height: 2, channels: 1, pixels: [1, 2, 3, 4, 5, 6])
        #expect(try image.resized(width: 3, height: 2) == image)
    }

    @Test func invalidSizesAreErrors() throws {
        let image = try Image(width: 3, height: 2, channels: 1, pixels: [1, 2, 3, 4, 5, 6], name: "tiny")
        let error = expectVisionError(.invalidArgument) { try image.resized(width: 0, height: 5) }
        #expect(error?.source == "tiny")
        expectVisionError(.invalidArgument) { try image.resized(width: 5, height: -1) }
        expectVisionError(.imageTooLarge) { try image.resized(width: 1 << 20, height: 1 << 20) }
    }
}

@Suite("Image grayscale")
struct ImageGrayscaleTests {
    @Test func rgbUsesBT601Luma() throws {
        let rgb = try Image(width: 4, height: 1, channels: 3,
                            pixels: [255, 0, 0, 0, 255, 0, 0, 0, 255, 100, 100, 100])
        let gray = rgb.grayscale()
        #expect(gray.channels == 1 && gray.width == 4 && gray.height == 1)
        let expected: [Float] = [76.245, 149.685, 29.07, 100]
        for i in 0..<4 { #expect(abs(gray.pixels[i] - expected[i]) < 1e-3) }
    }

    @Test func rgbaIsCompositedOverTheBackground() throws {
        // Black at alpha 0, 128, 255 and white at alpha 51.
        let rgba = try Image(width: 4, height: 1, channels: 4,
                             pixels: [0, 0, 0, 0, 0, 0, 0, 128, 0, 0, 0, 255, 255, 255, 255, 51])
        let onWhite = rgba.grayscale()
        let white: [Float] = [255, 255 * (1 - 128.0 / 255), 0, 255]
        for i in 0..<4 { #expect(abs(onWhite.pixels[i] - white[i]) < 1e-3) }
        let onBlack = rgba.grayscale(background: 0)
        let black: [Float] = [0, 0, 0, 51]
        for i in 0..<4 { #expect(abs(onBlack.pixels[i] - black[i]) < 1e-3) }
    }

    @Test func grayIsUnchanged() throws {
        let gray = try Image(width: 2, height: 1, channels: 1, pixels: [3, 250])
        #expect(gray.grayscale() == gray)
    }

    @Test func decodedGrayAlphaFixtureComposites() throws {
        let image = try Image(contentsOf: TestPaths.visionFixtures.appendingPathComponent("gray_alpha_4x3.png"))
        #expect(image.channels == 4)
        #expect(image.hasTransparency)
        let gray = image.grayscale(background: 0)
        // Gray replicated into R, G, B: luma equals the gray value; over black it is g × a / 255.
        for p in 0..<12 {
            let g = image.pixels[4 * p], a = image.pixels[4 * p + 3]
            #expect(abs(gray.pixels[p] - g * a / 255) < 1e-3)
        }
    }
}
