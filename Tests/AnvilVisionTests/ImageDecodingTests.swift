import Foundation
import Testing
@testable import AnvilVision

/// `Fixtures/vision/expected.json`, written by Scripts/fixtures/make_vision_fixtures.py from Pillow.
struct VisionFixtures: Decodable {
    struct Entry: Decodable, CustomTestStringConvertible {
        let file: String
        let width: Int
        let height: Int
        let channels: Int
        let tolerance: Float
        let note: String
        let pixels: [Float]
        var testDescription: String { file }
    }
    struct Resize: Decodable, CustomTestStringConvertible {
        let width: Int
        let height: Int
        let outWidth: Int
        let outHeight: Int
        let pixels: [Float]
        let expected: [Float]
        var testDescription: String { "\(width)×\(height) → \(outWidth)×\(outHeight)" }
    }
    let images: [Entry]
    let resize: [Resize]

    static let shared: VisionFixtures = {
        let url = TestPaths.visionFixtures.appendingPathComponent("expected.json")
        // A missing or malformed fixture file fails every test that uses it, loudly.
        let data = try! Data(contentsOf: url)
        return try! JSONDecoder().decode(VisionFixtures.self, from: data)
    }()
}

@Suite("Image decoding")
struct ImageDecodingTests {
    @Test func fixturesCoverEveryLayout() {
        let files = Set(VisionFixtures.shared.images.map(\.file))
        #expect(files.count == 10)
        #expect(files.contains("gray16_6x4.png") && files.contains("rgb420_15x9.jpg"))
    }

    @Test(arguments: VisionFixtures.shared.images)
    func decodesLikePillow(_ entry: VisionFixtures.Entry) throws {
        let url = TestPaths.visionFixtures.appendingPathComponent(entry.file)
        let image = try Image(contentsOf: url)
        #expect(image.width == entry.width)
        #expect(image.height == entry.height)
        #expect(image.channels == entry.channels)
        #expect(image.name == url.path)
        try #require(image.pixels.count == entry.pixels.count)
        var worst: Float = 0
        var worstIndex = 0
        for i in image.pixels.indices {
            let d = abs(image.pixels[i] - entry.pixels[i])
            if d > worst { worst = d; worstIndex = i }
        }
        #expect(worst <= entry.tolerance,
                "\(entry.file): sample \(worstIndex) is \(image.pixels[worstIndex]), Pillow says \(entry.pixels[worstIndex])")
    }

    @Test func sixteenBitKeepsPrecision() throws {
        // The fixture's third sample is 257 × 100 + 128 = 25828; an 8-bit decode would give 100.
        let image = try Image(contentsOf: TestPaths.visionFixtures.appendingPathComponent("gray16_6x4.png"))
        #expect(image.pixels[0] == 0)
        #expect(abs(image.pixels[1] - 255) < 1e-4)
        #expect(abs(image.pixels[2] - 25828 * 255 / 65535.0) < 1e-4)
        #expect(image.pixels[2] != 100)
    }

    @Test func inMemoryDecodingMatchesFile() throws {
        let url = TestPaths.visionFixtures.appendingPathComponent("rgb_7x5.png")
        let bytes = [UInt8](try Data(contentsOf: url))
        let fromBytes = try Image(data: bytes, name: "rgb")
        let fromData = try Image(data: Data(bytes), name: "rgb")
        #expect(fromBytes == fromData)
        #expect(fromBytes.pixels == (try Image(contentsOf: url)).pixels)
        #expect(fromBytes.pixel(x: 6, y: 4, channel: 2) == fromBytes.pixels[(4 * 7 + 6) * 3 + 2])
    }

    @Test func zeroByteFile() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("empty.png")
        try Data().write(to: url)
        let error = expectVisionError(.emptyFile) { try Image(contentsOf: url) }
        #expect(error?.description.contains("empty.png") == true)
        expectVisionError(.emptyFile) { try Image(data: [UInt8](), name: "x") }
        expectVisionError(.emptyFile) { try Image(data: Data(), name: "x") }
    }

    @Test func missingFile() {
        let error = expectVisionError(.cannotRead) { try Image(contentsOf: URL(fileURLWithPath: "/no/such/digit.png")) }
        #expect(error?.description.contains("/no/such/digit.png") == true)
    }

    @Test(arguments: ["rgb_7x5.png", "gray16_6x4.png", "rgb444_16x12.jpg", "rgb420_15x9.jpg", "gray_9x7.jpg"])
    func truncatedFilesAreErrors(_ file: String) throws {
        let bytes = [UInt8](try Data(contentsOf: TestPaths.visionFixtures.appendingPathComponent(file)))
        for keep in [bytes.count / 4, bytes.count / 2, bytes.count - 12, bytes.count - 2] {
            let error = expectVisionError(.decodeFailed) { try Image(data: Array(bytes.prefix(keep)), name: "cut-\(file)") }
            #expect(error?.source == "cut-\(file)")
        }
    }

    @Test func garbageIsAnErrorWithTheDecodersReason() throws {
        let text = Array("this is not an image, just some text\n".utf8)
        let error = expectVisionError(.decodeFailed) { try Image(data: text, name: "notes.txt") }
        #expect(error?.description.hasPrefix("notes.txt: cannot decode image: ") == true)
        // stb_image's reason for unknown formats.
        #expect(error?.message.contains("unknown image type") == true)

        // A JPEG whose frame header is cut: the reason comes from the JPEG decoder.
        let jpeg = [UInt8](try Data(contentsOf: TestPaths.visionFixtures.appendingPathComponent("gray_9x7.jpg")))
        let cut = expectVisionError(.decodeFailed) { try Image(data: Array(jpeg.prefix(30)), name: "cut.jpg") }
        #expect(cut?.message.contains("unknown image type") == false)
    }

    @Test func corruptPNGChunkIsAnError() throws {
        // Flip one bit inside the image data: the chunk's CRC no longer matches.
        let original = [UInt8](try Data(contentsOf: TestPaths.visionFixtures.appendingPathComponent("rgb_7x5.png")))
        var bytes = original
        bytes[bytes.count - 20] ^= 0x10
        let error = expectVisionError(.decodeFailed) { try Image(data: bytes, name: "x") }
        #expect(error?.message.contains("CRC") == true)
    }

    @Test func corruptHeaderIsAnError() throws {
        var bytes = [UInt8](try Data(contentsOf: TestPaths.visionFixtures.appendingPathComponent("rgb_7x5.png")))
        bytes[1] = UInt8(ascii: "X")  // "\x89XNG": signature broken
        expectVisionError(.decodeFailed) { try Image(data: bytes, name: "x") }

        var zeroWidth = [UInt8](try Data(contentsOf: TestPaths.visionFixtures.appendingPathComponent("gray_7x5.png")))
        zeroWidth[16 ..< 20] = [0, 0, 0, 0]  // IHDR width = 0 (CRC now wrong too; stb refuses it first)
        expectVisionError(.decodeFailed) { try Image(data: zeroWidth, name: "x") }
    }

    @Test func hugeDeclaredSizeIsRefusedBeforeDecoding() throws {
        // A valid-looking PNG header claiming 20000 × 20000 pixels (400 M, over the 64 M limit
        // but under stb_image's own 1 GB one), with 35 pixels of data behind it.
        var bytes = [UInt8](try Data(contentsOf: TestPaths.visionFixtures.appendingPathComponent("gray_7x5.png")))
        bytes[16 ..< 24] = ArraySlice(be32(20_000) + be32(20_000))
        let error = expectVisionError(.imageTooLarge) { try Image(data: bytes, name: "bomb.png") }
        #expect(error?.message.contains("20000×20000") == true)
    }

    @Test func memberwiseInitialiserValidates() throws {
        #expect(try Image(width: 2, height: 1, channels: 3, pixels: [1, 2, 3, 4, 5, 6]).pixel(x: 1, y: 0, channel: 0) == 4)
        expectVisionError(.invalidArgument) { try Image(width: 2, height: 1, channels: 3, pixels: [1, 2, 3]) }
        expectVisionError(.invalidArgument) { try Image(width: 0, height: 1, channels: 1, pixels: []) }
        expectVisionError(.invalidArgument) { try Image(width: 1, height: 1, channels: 2, pixels: [1, 2]) }
        expectVisionError(.imageTooLarge) { try Image(width: 1 << 20, height: 1 << 20, channels: 1, pixels: []) }
        expectVisionError(.invalidArgument) { try Image(width: 2, height: 1, channels: 1, pixels: [1, .nan]) }
        expectVisionError(.invalidArgument) { try Image(width: 2, height: 1, channels: 1, pixels: [.infinity, 1]) }
    }
}
