import Foundation
import Testing
@testable import AnvilVision

@Suite("ImagePreprocessing presets and pipeline")
struct ImagePreprocessingTests {
    // MARK: Hand computations on a single pixel

    /// One pixel (R, G, B) = (255, 128, 0); a 1 × 1 crop from a 1 × 1 image (no resizing).
    let pixel: Image = try! Image(width: 1, height: 1, channels: 3, pixels: [255, 128, 0], name: "pixel")

    @Test func caffeIsBGRMinusTheMeans() throws {
        let out = try ImagePreprocessing.caffe(size: 1, resizeShorterSide: 1).preprocess(pixel)
        #expect(largestDifference(out, [0 - 103.939, 128 - 116.779, 255 - 123.68]).value < 1e-4)
    }

    @Test func pytorchIsRGBOver255ThenMeanAndStd() throws {
        let out = try ImagePreprocessing.pytorch(size: 1, resizeShorterSide: 1).preprocess(pixel)
        let expected: [Float] = [(1 - 0.485) / 0.229, (128.0 / 255 - 0.456) / 0.224, (0 - 0.406) / 0.225]
        #expect(largestDifference(out, expected).value < 1e-5)
    }

    @Test func inceptionMapsToMinusOneOne() throws {
        let out = try ImagePreprocessing.inception(size: 1, resizeShorterSide: 1).preprocess(pixel)
        #expect(largestDifference(out, [1, 128 / 127.5 - 1, -1]).value < 1e-6)
    }

    @Test func presetDefaults() {
        let p = ImagePreprocessing.pytorch()
        #expect(p.resize == .shorterSide(256) && p.width == 224 && p.height == 224 && p.filter == .bilinear)
        #expect(p.alpha == .compositeOverWhite && p.channelOrder == .rgb)
        #expect(ImagePreprocessing.inception().resize == .shorterSide(342))
        #expect(ImagePreprocessing.inception().width == 299)
        #expect(ImagePreprocessing.caffe().channelOrder == .bgr && ImagePreprocessing.caffe().mean == [103.939, 116.779, 123.68])
        #expect(ImagePreprocessing(preset: .pytorch, size: 128) == .pytorch(size: 128))
        #expect(ImagePreprocessing.pytorch(size: 128).resize == .shorterSide(146))  // 128 / 0.875 = 146.3
        #expect(ImagePreprocessing(preset: .inception) == .inception())
        #expect(ImagePreprocessing.Preset.allCases.map(\.rawValue) == ["caffe", "pytorch", "inception"])
        #expect(p.valuesPerImage == 224 * 224 * 3)
    }

    @Test func summaries() {
        #expect(ImagePreprocessing.pytorch().summary
                == "shorter side 256 (bilinear), centre crop 224×224, RGB, (x/255 − (0.485, 0.456, 0.406)) / (0.229, 0.224, 0.225)")
        #expect(ImagePreprocessing.caffe().summary == "shorter side 256 (bilinear), centre crop 224×224, BGR, x − (103.939, 116.779, 123.68)")
        #expect(ImagePreprocessing.inception().summary == "shorter side 342 (bilinear), centre crop 299×299, RGB, x/127.5 − (1, 1, 1)")
    }

    // MARK: Against numpy + Pillow, step by step

    @Test(arguments: PreprocessingFixtures.shared.pipelines)
    func matchesTheIndependentPipeline(_ c: PreprocessingFixtures.Pipeline) throws {
        let image = try Image(contentsOf: PreprocessingFixtures.directory.appendingPathComponent(c.file))
        let out = try c.preprocessing.preprocess(image)
        try #require(out.count == c.width * c.height * 3)
        let (worst, index) = largestDifference(out, c.expected)
        // Caffe values are in 0...255 units, the others about 1/100 of that.
        let tolerance: Float = c.preset == "caffe" ? 2e-3 : 2e-5
        #expect(worst <= tolerance, "value \(index): \(out[max(index, 0)]) vs \(c.expected[max(index, 0)])")
    }

    @Test func thePresetsAreTheFixtureSettings() throws {
        // The fixture spells out each preset's constants; the presets must agree.
        for c in PreprocessingFixtures.shared.pipelines {
            let preset = ImagePreprocessing(preset: ImagePreprocessing.Preset(rawValue: c.preset)!)
            #expect(preset.channelOrder == c.preprocessing.channelOrder)
            #expect(abs(preset.scale - c.preprocessing.scale) < 1e-9)
            #expect(preset.mean == c.mean && preset.standardDeviation == c.std)
        }
    }

    // MARK: Against torchvision on a real photo

    @Test(arguments: PreprocessingFixtures.shared.photo)
    func photoMatchesTorchvisionAndPillow(_ reference: PreprocessingFixtures.Photo) throws {
        let preset = ImagePreprocessing.Preset(rawValue: reference.preset)!
        let preprocessing = ImagePreprocessing(preset: preset, size: reference.size)
        #expect(preprocessing.resize == .shorterSide(reference.resizeShorterSide))
        let out = try preprocessing.preprocess(contentsOf: PreprocessingFixtures.photoURL)
        try #require(out.count == reference.count)
        let sampled = stride(from: 0, to: out.count, by: reference.stride).map { out[$0] }
        let (worst, index) = largestDifference(sampled, reference.samples)
        // stb_image and libjpeg decode differently by a few levels, and Pillow rounds to 8 bits
        // after resizing: single samples differ by up to 3.5 levels, 0.6 on average (measured
        // 2.0 and 0.34).
        #expect(worst <= reference.tolerance, "sample \(index * reference.stride): \(worst)")
        let meanDifference = zip(sampled, reference.samples).map { abs($0 - $1) }.reduce(0, +) / Float(sampled.count)
        #expect(meanDifference <= reference.meanTolerance, "mean |difference| \(meanDifference)")
        for c in 0 ..< 3 {
            let mean = stride(from: c, to: out.count, by: 3).map { Double(out[$0]) }.reduce(0, +) / Double(out.count / 3)
            #expect(abs(mean - reference.channelMeans[c]) <= Double(reference.meanTolerance), "channel \(c) mean \(mean) vs \(reference.channelMeans[c])")
        }
    }

    @Test func thePhotoIsWhatTheReadmeSays() throws {
        let photo = try Image(contentsOf: PreprocessingFixtures.photoURL)
        #expect(photo.width == 451 && photo.height == 300 && photo.channels == 3)
        let size = try FileManager.default.attributesOfItem(atPath: PreprocessingFixtures.photoURL.path)[.size] as? Int
        #expect(size == 35_042)
    }

    // MARK: Inputs of every kind

    @Test func grayAnd16BitImagesBecomeThreeEqualChannels() throws {
        for file in ["gray_14x11.png", "gray16_13x9.png"] {
            let image = try Image(contentsOf: PreprocessingFixtures.directory.appendingPathComponent(file))
            #expect(image.channels == 1)
            let out = try ImagePreprocessing.inception(size: 7, resizeShorterSide: 8).preprocess(image)
            #expect(out.count == 7 * 7 * 3)
            for p in 0 ..< 49 { #expect(out[3 * p] == out[3 * p + 1] && out[3 * p] == out[3 * p + 2]) }
        }
        // 16-bit samples keep their precision: 257 · 100 + 128 → 100.498... levels, not 100.
        let deep = try Image(width: 1, height: 1, channels: 1, pixels: [Float(25828) * 255 / 65535])
        let out = try ImagePreprocessing.inception(size: 1, resizeShorterSide: 1).preprocess(deep)
        #expect(abs(out[0] - (Float(25828) * 255 / 65535 / 127.5 - 1)) < 1e-6)
    }

    @Test func transparentPixelsBecomeWhiteByDefault() throws {
        let clear = try Image(width: 1, height: 1, channels: 4, pixels: [0, 0, 0, 0])
        #expect(try ImagePreprocessing.inception(size: 1, resizeShorterSide: 1).preprocess(clear) == [1, 1, 1])
        var dropping = ImagePreprocessing.inception(size: 1, resizeShorterSide: 1)
        dropping.alpha = .drop
        #expect(try dropping.preprocess(clear) == [-1, -1, -1])
    }

    @Test func oddAndExtremeSizes() throws {
        // 1 × 1 enlarged to 256 and cropped; a 1-pixel-high strip; a 2 × 3 image.
        for (w, h) in [(1, 1), (1000, 1), (1, 7), (2, 3), (451, 300)] {
            let pixels = (0 ..< w * h * 3).map { Float(($0 * 37) % 256) }
            let image = try Image(width: w, height: h, channels: 3, pixels: pixels)
            let out = try ImagePreprocessing.pytorch().preprocess(image)
            #expect(out.count == 224 * 224 * 3)
            #expect(out.allSatisfy { $0.isFinite && $0 >= -2.2 && $0 <= 2.7 })
        }
    }

    @Test func aBatchIsTheImagesOneAfterAnother() throws {
        let p = ImagePreprocessing.caffe(size: 1, resizeShorterSide: 1)
        let other = try Image(width: 1, height: 1, channels: 1, pixels: [50])
        let batch = try p.preprocess([pixel, other])
        #expect(batch == (try p.preprocess(pixel)) + (try p.preprocess(other)))
    }

    // MARK: Errors

    @Test func inconsistentSettingsAreErrors() {
        var p = ImagePreprocessing.pytorch()
        p.resize = .shorterSide(200)
        expectVisionError(.invalidArgument) { try p.preprocess(pixel) }
        p = .pytorch(size: 0)
        expectVisionError(.invalidArgument) { try p.preprocess(pixel) }
        p = .pytorch()
        p.mean = [0, 0]
        expectVisionError(.invalidArgument) { try p.preprocess(pixel) }
        p = .pytorch()
        p.standardDeviation = [1, 0, 1]
        expectVisionError(.invalidArgument) { try p.preprocess(pixel) }
        p = .pytorch()
        p.resize = .exact(width: 300, height: 100)
        expectVisionError(.invalidArgument) { try p.preprocess(pixel) }
    }

    @Test func noResizeNeedsALargeEnoughImage() {
        var p = ImagePreprocessing.pytorch(size: 2)
        p.resize = .none
        let e = expectVisionError(.invalidArgument) { try p.preprocess(pixel) }
        #expect(e?.source == "pixel")
    }

    @Test func corruptAndTruncatedFilesAreClearErrors() throws {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let photo = try Data(contentsOf: PreprocessingFixtures.photoURL)
        let truncated = directory.appendingPathComponent("truncated.jpg")
        try photo.prefix(photo.count / 2).write(to: truncated)
        let e = expectVisionError(.decodeFailed) { try ImagePreprocessing.pytorch().preprocess(contentsOf: truncated) }
        #expect(e?.source == truncated.path)
        #expect(e?.message.contains("truncated") == true)
        let text = directory.appendingPathComponent("notes.jpg")
        try Data("not an image".utf8).write(to: text)
        expectVisionError(.decodeFailed) { try ImagePreprocessing.caffe().preprocess(contentsOf: text) }
        expectVisionError(.cannotRead) { try ImagePreprocessing.caffe().preprocess(contentsOf: directory.appendingPathComponent("missing.png")) }
    }
}
