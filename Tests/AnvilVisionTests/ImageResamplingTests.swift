import Foundation
import Testing
@testable import AnvilVision

@Suite("Image resampling: Lanczos, shorter side, windows")
struct ImageResamplingTests {
    @Test(arguments: PreprocessingFixtures.shared.lanczos)
    func lanczosMatchesPillow(_ c: PreprocessingFixtures.Resize) throws {
        let image = try Image(width: c.width, height: c.height, channels: 1, pixels: c.pixels)
        let out = try image.resized(width: c.outWidth, height: c.outHeight, filter: .lanczos3)
        #expect(out.width == c.outWidth && out.height == c.outHeight)
        let (worst, index) = largestDifference(out.pixels, c.expected)
        #expect(worst < 2e-3, "sample \(index): \(out.pixels[max(index, 0)]) vs Pillow \(c.expected[max(index, 0)])")
    }

    @Test func lanczosOvershootsAtAnEdgeAndIsNotClamped() throws {
        // A 0 → 255 step enlarged 4×: the negative lobes ring on both sides of the edge.
        let step = try Image(width: 8, height: 1, channels: 1, pixels: [0, 0, 0, 0, 255, 255, 255, 255])
        let out = try step.resized(width: 32, height: 1, filter: .lanczos3)
        #expect(out.pixels.min()! < -1)
        #expect(out.pixels.max()! > 256)
        let bilinear = try step.resized(width: 32, height: 1)
        #expect(bilinear.pixels.min()! >= 0 && bilinear.pixels.max()! <= 255)
    }

    @Test func lanczosFilterValues() {
        // sinc(x)·sinc(x/3) by hand: at 0.5, (sin(π/2)/(π/2))·(sin(π/6)/(π/6)) = (2/π)·(3/π).
        #expect(ResamplingFilter.lanczos3.weight(0) == 1)
        #expect(abs(ResamplingFilter.lanczos3.weight(0.5) - 6 / (Double.pi * Double.pi)) < 1e-12)
        #expect(abs(ResamplingFilter.lanczos3.weight(1)) < 1e-12)
        #expect(ResamplingFilter.lanczos3.weight(3) == 0 && ResamplingFilter.lanczos3.weight(-3.5) == 0)
        #expect(ResamplingFilter.bilinear.weight(0.25) == 0.75 && ResamplingFilter.bilinear.weight(-1) == 0)
    }

    @Test(arguments: [ResamplingFilter.bilinear, .lanczos3])
    func constantImageStaysConstant(filter: ResamplingFilter) throws {
        for (w, h, ow, oh) in [(300, 200, 20, 13), (3, 2, 7, 5), (1, 1, 4, 4), (17, 9, 17, 4)] {
            let pixels = [[Float]](repeating: [17, 200, 255], count: w * h).flatMap { $0 }
            let out = try Image(width: w, height: h, channels: 3, pixels: pixels).resized(width: ow, height: oh, filter: filter)
            let expected = [[Float]](repeating: [17, 200, 255], count: ow * oh).flatMap { $0 }
            #expect(largestDifference(out.pixels, expected).value < 1e-3, "\(w)×\(h) → \(ow)×\(oh)")
        }
    }

    @Test func shorterSideKeepsTheAspectRatioLikeTorchvision() throws {
        // torchvision: the longer side is int(size * long / short).
        func size(_ w: Int, _ h: Int, _ s: Int) throws -> (Int, Int) {
            let pixels = [Float](repeating: 0, count: w * h)
            let out = try Image(width: w, height: h, channels: 1, pixels: pixels).resized(shorterSide: s)
            return (out.width, out.height)
        }
        #expect(try size(500, 375, 256) == (341, 256))  // 256 · 500/375 = 341.33
        #expect(try size(375, 500, 256) == (256, 341))
        #expect(try size(451, 300, 256) == (384, 256))  // 384.85, truncated
        #expect(try size(300, 300, 224) == (224, 224))
        #expect(try size(3, 1000, 10) == (10, 3333))
        #expect(try size(7, 5, 5) == (7, 5))
    }

    @Test func shorterSideErrors() throws {
        let tall = try Image(width: 1, height: 60_000, channels: 1, pixels: [Float](repeating: 1, count: 60_000), name: "tall")
        let e = expectVisionError(.imageTooLarge) { try tall.resized(shorterSide: 2000) }
        #expect(e?.source == "tall")
        expectVisionError(.invalidArgument) { try tall.resized(shorterSide: 0) }
    }

    @Test(arguments: [ResamplingFilter.bilinear, .lanczos3])
    func aWindowIsTheCropOfTheFullResize(filter: ResamplingFilter) throws {
        var pixels = [Float]()
        for i in 0 ..< 31 * 23 * 3 { pixels.append(Float((i * 7919) % 256)) }
        let image = try Image(width: 31, height: 23, channels: 3, pixels: pixels)
        for (w, h, x, y, cw, ch) in [(14, 10, 3, 2, 8, 5), (50, 40, 10, 0, 30, 40), (31, 23, 1, 1, 29, 21)] {
            let full = try image.resized(width: w, height: h, filter: filter).cropped(x: x, y: y, width: cw, height: ch)
            let window = image.resampled(width: w, height: h, filter: filter, columns: x ..< x + cw, rows: y ..< y + ch)
            #expect(window.width == cw && window.height == ch)
            #expect(largestDifference(window.pixels, full.pixels).value < 1e-3)
        }
    }
}

@Suite("Image cropping and RGB conversion")
struct ImageCropTests {
    let ramp: Image = try! Image(width: 5, height: 4, channels: 1, pixels: (0 ..< 20).map(Float.init), name: "ramp")

    @Test func cropTakesTheRegion() throws {
        let c = try ramp.cropped(x: 1, y: 2, width: 3, height: 2)
        #expect(c.width == 3 && c.height == 2 && c.name == "ramp")
        #expect(c.pixels == [11, 12, 13, 16, 17, 18])
        #expect(try ramp.cropped(x: 0, y: 0, width: 5, height: 4) == ramp)
    }

    @Test func cropOutsideIsAnError() {
        expectVisionError(.invalidArgument) { try ramp.cropped(x: 3, y: 0, width: 3, height: 1) }
        expectVisionError(.invalidArgument) { try ramp.cropped(x: -1, y: 0, width: 1, height: 1) }
        expectVisionError(.invalidArgument) { try ramp.cropped(x: 0, y: 0, width: 0, height: 1) }
        expectVisionError(.invalidArgument) { try ramp.centerCropped(width: 6, height: 1) }
    }

    @Test func centreCropRoundsHalvesToEvenLikeTorchvision() throws {
        // (5 − 2) / 2 = 1.5 → 2; (4 − 1) / 2 = 1.5 → 2; (5 − 4) / 2 = 0.5 → 0; (4 − 3) / 2 = 0.5 → 0.
        #expect(try ramp.centerCropped(width: 2, height: 1).pixels == [12, 13])
        #expect(try ramp.centerCropped(width: 4, height: 3).pixels == [0, 1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13])
        #expect(try ramp.centerCropped(width: 3, height: 2).pixels == [6, 7, 8, 11, 12, 13])
        #expect(try Image.centeredOrigin(crop: (224, 224), in: (255, 257), name: "") == (16, 16))
        #expect(try Image.centeredOrigin(crop: (224, 224), in: (384, 256), name: "") == (80, 16))
    }

    @Test func grayIsReplicated() throws {
        let g = try Image(width: 2, height: 1, channels: 1, pixels: [10, 200])
        #expect(g.rgb().pixels == [10, 10, 10, 200, 200, 200])
    }

    @Test func rgbaIsCompositedOrDropped() throws {
        // Opaque, transparent and half-transparent (alpha 51 = 0.2) pixels.
        let rgba = try Image(width: 3, height: 1, channels: 4,
                             pixels: [10, 20, 30, 255, 10, 20, 30, 0, 100, 0, 200, 51])
        let white = rgba.rgb()
        let expectedWhite: [Float] = [10, 20, 30, 255, 255, 255, 100 * 0.2 + 255 * 0.8, 255 * 0.8, 200 * 0.2 + 255 * 0.8]
        #expect(largestDifference(white.pixels, expectedWhite).value < 1e-4)
        let black = rgba.rgb(alpha: .composite(background: 0))
        #expect(largestDifference(black.pixels, [10, 20, 30, 0, 0, 0, 20, 0, 40]).value < 1e-4)
        #expect(rgba.rgb(alpha: .drop).pixels == [10, 20, 30, 10, 20, 30, 100, 0, 200])
        #expect(white.channels == 3)
    }
}
