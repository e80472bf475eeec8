import Foundation
import Testing
@testable import AnvilVision

/// A one-channel canvas to draw synthetic digits on.
struct Canvas {
    var width: Int, height: Int
    var pixels: [Float]

    init(width: Int, height: Int, background: Float) {
        self.width = width
        self.height = height
        pixels = [Float](repeating: background, count: width * height)
    }

    /// Fills columns `xs`, rows `ys` with `value`.
    mutating func fill(x xs: Range<Int>, y ys: Range<Int>, value: Float) {
        for y in ys { for x in xs { pixels[y * width + x] = value } }
    }

    func image(name: String = "canvas") throws -> Image {
        try Image(width: width, height: height, channels: 1, pixels: pixels, name: name)
    }

    /// The canvas as RGBA: `ink` where the canvas is > 0.5, a transparent `clear` colour elsewhere.
    func rgba(ink: Float, clear: Float) throws -> Image {
        let rgba = pixels.flatMap { $0 > 0.5 ? [ink, ink, ink, 255] : [clear, clear, clear, 0] }
        return try Image(width: width, height: height, channels: 4, pixels: rgba)
    }
}

@Suite("MNIST preprocessing")
struct MNISTPreprocessorTests {
    let preprocessor = MNISTPreprocessor()

    /// A 63 × 180 black rectangle drawn off-centre (left, low) on a white 300 × 300 canvas.
    func rectangleDrawing(background: Float = 255, ink: Float = 0) -> Canvas {
        var canvas = Canvas(width: 300, height: 300, background: background)
        canvas.fill(x: 30..<93, y: 100..<280, value: ink)
        return canvas
    }

    /// What the rectangle must become: 180 → 20 rows and 63 → 7 columns of full ink; its centre
    /// of mass (3, 9.5) moved to (14, 14) by whole pixels: columns 11..<18, rows 5..<25
    /// (14 − 9.5 = 4.5 rounds away from zero to 5).
    var expectedRectangleField: [Float] {
        var field = [Float](repeating: 0, count: 28 * 28)
        for y in 5..<25 { for x in 11..<18 { field[y * 28 + x] = 255 } }
        return field
    }

    func expectClose(_ a: [Float], _ b: [Float], tolerance: Float = 0.01, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.count == b.count, sourceLocation: sourceLocation)
        for i in 0..<min(a.count, b.count) where abs(a[i] - b[i]) > tolerance {
            Issue.record("pixel (\(i % 28), \(i / 28)): \(a[i]) vs expected \(b[i])", sourceLocation: sourceLocation)
            return
        }
    }

    /// The MNIST-likeness checks every output must pass.
    func expectMNISTLike(_ field: [Float], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(field.count == 784, sourceLocation: sourceLocation)
        #expect(field.allSatisfy { $0 >= 0 && $0 <= 255 }, sourceLocation: sourceLocation)
        #expect((field.max() ?? 0) > 200, "ink should be bright", sourceLocation: sourceLocation)
        let corners = [field[0], field[27], field[27 * 28], field[783]]
        #expect(corners == [0, 0, 0, 0], "background should be black", sourceLocation: sourceLocation)
        let com = centreOfMass(field, width: 28, height: 28)
        #expect(abs(com.x - 14) <= 0.5 + 1e-3 && abs(com.y - 14) <= 0.5 + 1e-3,
                "centre of mass \(com) should be within 0.5 px of (14, 14)", sourceLocation: sourceLocation)
        let extent = inkExtent(field, width: 28, height: 28)
        #expect(max(extent.width, extent.height) <= 20, "ink extent \(extent)", sourceLocation: sourceLocation)
    }

    @Test func offCentreRectangleIsScaledAndCentred() throws {
        let field = try preprocessor.preprocess(rectangleDrawing().image())
        expectMNISTLike(field)
        expectClose(field, expectedRectangleField)
        #expect(inkExtent(field, width: 28, height: 28) == (7, 20))
    }

    @Test func lightOnDarkInputIsNotInverted() throws {
        let field = try preprocessor.preprocess(rectangleDrawing(background: 0, ink: 255).image())
        expectClose(field, expectedRectangleField)
    }

    @Test func greyPaperAndGreyInkAreStretchedToBlackAndWhite() throws {
        // Pencil (90) on grey paper (210): after inversion 45 on 120 → stretched to 0...255.
        let field = try preprocessor.preprocess(rectangleDrawing(background: 210, ink: 90).image())
        expectClose(field, expectedRectangleField, tolerance: 0.05)
    }

    @Test func colourDrawingIsConvertedToGray() throws {
        // Dark blue ink on a pale yellow background, as RGB.
        let gray = rectangleDrawing(background: 1, ink: 0).pixels
        let rgb = gray.flatMap { $0 > 0.5 ? [Float(250), 240, 200] : [Float(20), 30, 120] }
        let field = try preprocessor.preprocess(Image(width: 300, height: 300, channels: 3, pixels: rgb))
        expectClose(field, expectedRectangleField, tolerance: 0.05)
    }

    @Test func transparentCanvasWithDarkOrLightInk() throws {
        let shape = rectangleDrawing(background: 0, ink: 1)
        // Black ink on a transparent canvas whose hidden colour is black: composited on white.
        expectClose(try preprocessor.preprocess(shape.rgba(ink: 0, clear: 0)), expectedRectangleField)
        // White ink on a transparent canvas whose hidden colour is white: composited on black.
        expectClose(try preprocessor.preprocess(shape.rgba(ink: 255, clear: 255)), expectedRectangleField)
    }

    @Test func centringUsesCentreOfMassNotTheBox() throws {
        // A T: a 200 × 20 top bar over a 40-px-wide stem, a 200 × 200 box. The mass sits high
        // in the box, so the box must end up lower than box-centring would put it (rows 4...23).
        var canvas = Canvas(width: 300, height: 300, background: 255)
        canvas.fill(x: 50..<250, y: 60..<80, value: 0)
        canvas.fill(x: 130..<170, y: 80..<260, value: 0)
        let field = try preprocessor.preprocess(canvas.image())
        expectMNISTLike(field)
        var minX = 28, minY = 28
        for y in 0..<28 { for x in 0..<28 where field[y * 28 + x] > 0 { minX = min(minX, x); minY = min(minY, y) } }
        #expect(minX == 4)  // symmetric left-right: the box is centred horizontally
        #expect(minY == 7)  // centre of mass ≈ 7.4 rows down the 20-row box: 14 − 7.4 → shift 7
    }

    @Test func shiftIsClampedSoNothingFallsOff() throws {
        // An L with a 20-px stem and 20-px foot in a 200 × 200 box: its centre of mass is so far
        // left (≈ 5.3 of 20 columns) that centring would push the box 0.7 px past the right edge.
        var canvas = Canvas(width: 300, height: 300, background: 255)
        canvas.fill(x: 50..<70, y: 60..<260, value: 0)
        canvas.fill(x: 50..<250, y: 240..<260, value: 0)
        let field = try preprocessor.preprocess(canvas.image())
        var maxX = -1
        for y in 0..<28 { for x in 0..<28 where field[y * 28 + x] > 0 { maxX = max(maxX, x) } }
        #expect(maxX == 27)
        #expect(inkExtent(field, width: 28, height: 28) == (20, 20))
        let com = centreOfMass(field, width: 28, height: 28)
        #expect(com.x < 13.5)
        #expect(abs(com.y - 14) <= 0.5)
    }

    @Test func smallDigitIsEnlargedWideDigitKeepsItsAspect() throws {
        var small = Canvas(width: 40, height: 40, background: 255)
        small.fill(x: 5..<9, y: 20..<28, value: 0)  // 4 × 8 → 10 × 20
        let s = try preprocessor.preprocess(small.image())
        expectMNISTLike(s)
        #expect(inkExtent(s, width: 28, height: 28, threshold: 127) == (10, 20))

        var wide = Canvas(width: 300, height: 120, background: 255)
        wide.fill(x: 40..<240, y: 30..<70, value: 0)  // 200 × 40 → 20 × 4
        let w = try preprocessor.preprocess(wide.image())
        expectMNISTLike(w)
        #expect(inkExtent(w, width: 28, height: 28, threshold: 127) == (20, 4))
    }

    @Test func antialiasedEdgesWhenShrinkingALot() throws {
        // A 300 × 300 diagonal stroke: shrinking must produce intermediate grey levels,
        // not a jagged black-and-white staircase.
        var canvas = Canvas(width: 300, height: 300, background: 255)
        for y in 20..<280 { canvas.fill(x: y - 10..<(y + 14), y: y..<(y + 1), value: 0) }
        let field = try preprocessor.preprocess(canvas.image())
        expectMNISTLike(field)
        #expect(field.filter { $0 > 10 && $0 < 245 }.count >= 20)
    }

    @Test(arguments: [Float(255), 0, 128])
    func blankImageIsAClearError(level: Float) throws {
        let blank = try Canvas(width: 50, height: 40, background: level).image(name: "blank.png")
        let error = expectVisionError(.blankImage) { try preprocessor.preprocess(blank) }
        #expect(error?.source == "blank.png")
        #expect(error?.message.contains("no digit") == true)
    }

    @Test func faintNoiseIsStillBlank() throws {
        var canvas = Canvas(width: 60, height: 60, background: 240)
        canvas.fill(x: 20..<25, y: 20..<40, value: 225)  // 15 levels: below the 32-level minimum contrast
        expectVisionError(.blankImage) { try preprocessor.preprocess(canvas.image()) }
    }

    @Test func inconsistentSettingsAreErrors() throws {
        let image = try rectangleDrawing().image()
        expectVisionError(.invalidArgument) { try MNISTPreprocessor(fieldSize: 28, digitSize: 30).preprocess(image) }
        expectVisionError(.invalidArgument) { try MNISTPreprocessor(digitSize: 0).preprocess(image) }
        expectVisionError(.invalidArgument) { try MNISTPreprocessor(inkThreshold: 1).preprocess(image) }
        expectVisionError(.invalidArgument) { try MNISTPreprocessor(minimumContrast: 0).preprocess(image) }
        expectVisionError(.invalidArgument) { try MNISTPreprocessor(fieldSize: .max).preprocess(image) }
    }

    @Test func otherFieldSizes() throws {
        let field = try MNISTPreprocessor(fieldSize: 16, digitSize: 12).preprocess(rectangleDrawing().image())
        #expect(field.count == 256)
        #expect(inkExtent(field, width: 16, height: 16) == (4, 12))  // 63 × 180 → 4.2 → 4 × 12
    }

    @Test func asciiArtDrawsEachPixelTwice() {
        var pixels = [Float](repeating: 0, count: 6)
        pixels[1] = 255
        pixels[5] = 127.5
        let art = MNISTPreprocessor.asciiArt(pixels, width: 3, height: 2)
        // 127.5 / 255 × 9 = 4.5 → ramp index 5 ("+"); 0.4 × 9 = 3.6 → 4 ("=").
        #expect(art == "  @@  \n    ++")
        #expect(MNISTPreprocessor.asciiArt([0.4, 1], width: 2, height: 1, maximum: 1) == "==@@")
        let lines = MNISTPreprocessor.asciiArt([Float](repeating: 0, count: 784), width: 28, height: 28).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 28 && lines.allSatisfy { $0.count == 56 })
    }

    @Test(.enabled(if: TestPaths.exists(TestPaths.forgeMNIST.appendingPathComponent("five.png"))
                    && TestPaths.exists(TestPaths.forgeMNIST.appendingPathComponent("three.png")),
                   "../shared/forge-mnist/five.png or three.png not found next to the repository; skipping Forge's drawings"),
          arguments: ["five.png", "three.png"])
    func forgeDrawings(_ file: String) throws {
        let url = TestPaths.forgeMNIST.appendingPathComponent(file)
        let field = try preprocessor.preprocess(contentsOf: url)
        expectMNISTLike(field)
        // A digit, not a blob: a real stroke covers a fair but minor part of the box.
        let inked = field.filter { $0 > 64 }.count
        let art = MNISTPreprocessor.asciiArt(field, width: 28, height: 28)
        #expect(inked > 40 && inked < 250, "\(inked) inked pixels\n\(art)")
    }

    @Test(.enabled(if: TestPaths.exists(TestPaths.mnistData.appendingPathComponent("t10k-images-idx3-ubyte")),
                   "real MNIST not found in Data/mnist (run Scripts/setup/fetch_mnist.sh); skipping"))
    func redrawnMNISTDigitsComeBackAlmostUnchanged() throws {
        // Blow real MNIST digits up 10× as dark ink on white paper, then preprocess them:
        // the result must match the original closely, as MNIST was made the same way.
        let set = try MNISTDataset(directory: TestPaths.mnistData, split: .test)
        for index in [0, 1, 2, 3, 4] {
            let original = try set.image(at: index)
            let big = try original.resized(width: 280, height: 280)
            let paper = try Image(width: 280, height: 280, channels: 1, pixels: big.pixels.map { 255 - $0 })
            let field = try preprocessor.preprocess(paper)
            expectMNISTLike(field)
            let a = original.pixels.map(Double.init), b = field.map(Double.init)
            let ma = a.reduce(0, +) / 784, mb = b.reduce(0, +) / 784
            var sab = 0.0, saa = 0.0, sbb = 0.0
            for i in 0..<784 { sab += (a[i] - ma) * (b[i] - mb); saa += (a[i] - ma) * (a[i] - ma); sbb += (b[i] - mb) * (b[i] - mb) }
            let correlation = sab / (saa * sbb).squareRoot()
            #expect(correlation > 0.9, "digit \(index): correlation \(correlation)")
        }
    }
}
