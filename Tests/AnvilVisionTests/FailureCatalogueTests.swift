import Foundation
import Testing
@testable import AnvilVision
@testable import AnvilTestSupport

/// The AnvilVision rows of `docs/errors.md`: each catalogued `VisionError` is re-created here
/// and the document must show its code and description (`<source>: <message>`, temporary
/// directories written as `<dir>`). `ANVIL_ERROR_CATALOGUE=<file>` writes the current rows.
@Suite("Failure: data file catalogue")
struct FailureVisionCatalogueTests {
    typealias Entry = (id: String, trigger: @Sendable (URL) throws -> Void)

    static func idx(_ dimensions: [UInt32], _ payload: [UInt8], type: UInt8 = 8) -> [UInt8] {
        [0, 0, type, UInt8(dimensions.count)] + dimensions.flatMap(be32) + payload
    }

    static func png() throws -> [UInt8] {
        [UInt8](try Data(contentsOf: TestPaths.visionFixtures.appendingPathComponent("gray_7x5.png")))
    }

    static func jpeg() throws -> [UInt8] {
        [UInt8](try Data(contentsOf: TestPaths.visionFixtures.appendingPathComponent("gray_9x7.jpg")))
    }

    /// Writes `bytes` to `dir/name` and returns its URL.
    static func file(_ dir: URL, _ name: String, _ bytes: [UInt8]) throws -> URL {
        let url = dir.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    static let entries: [Entry] = [
        ("idx.missing", { dir in _ = try IDXFile(contentsOf: dir.appendingPathComponent("train-images-idx3-ubyte")) }),
        ("idx.directory", { dir in _ = try IDXFile(contentsOf: dir) }),
        ("idx.device", { _ in _ = try IDXFile(contentsOf: URL(fileURLWithPath: "/dev/zero")) }),
        ("idx.empty", { dir in _ = try IDXFile(contentsOf: try file(dir, "labels.idx", [])) }),
        ("idx.header", { _ in _ = try IDXFile(data: [0, 0, 8], name: "labels.idx") }),
        ("idx.header-dimensions", { _ in _ = try IDXFile(data: [0, 0, 8, 3, 0, 0, 0, 1], name: "images.idx") }),
        ("idx.magic", { _ in _ = try IDXFile(data: Array("P5\n28 28\n255\n".utf8), name: "images.idx") }),
        ("idx.gzip", { _ in _ = try IDXFile(data: [0x1F, 0x8B, 8, 0, 0, 0, 0, 0], name: "t10k-images-idx3-ubyte.gz") }),
        ("idx.type", { _ in _ = try IDXFile(data: idx([2], [0, 0, 0, 0, 0, 0, 0, 0], type: 0x0D), name: "floats.idx") }),
        ("idx.rank", { _ in _ = try IDXFile(data: [0, 0, 8, 0], name: "labels.idx") }),
        ("idx.short", { _ in _ = try IDXFile(data: idx([3, 4, 5], [UInt8](repeating: 1, count: 59)), name: "images.idx") }),
        ("idx.long", { _ in _ = try IDXFile(data: idx([3], [1, 2, 3, 4]), name: "labels.idx") }),
        ("idx.overflow", { _ in _ = try IDXFile(data: idx([0xFFFF_FFFF, 0xFFFF_FFFF, 0xFFFF_FFFF], []), name: "images.idx") }),
        ("mnist.missing", { dir in _ = try MNISTDataset(directory: dir, split: .test) }),
        ("mnist.rank", { _ in
            _ = try MNISTDataset(images: IDXFile(dimensions: [2, 4], bytes: [UInt8](repeating: 0, count: 8), name: "images.idx"),
                                 labels: IDXFile(dimensions: [2], bytes: [1, 2], name: "labels.idx"))
        }),
        ("mnist.count", { _ in
            _ = try MNISTDataset(images: IDXFile(dimensions: [2, 2, 2], bytes: [UInt8](repeating: 0, count: 8), name: "images.idx"),
                                 labels: IDXFile(dimensions: [3], bytes: [1, 2, 3], name: "labels.idx"))
        }),
        ("mnist.label", { _ in
            _ = try MNISTDataset(images: IDXFile(dimensions: [2, 2, 2], bytes: [UInt8](repeating: 0, count: 8), name: "images.idx"),
                                 labels: IDXFile(dimensions: [2], bytes: [7, 12], name: "labels.idx"))
        }),
        ("mnist.image-size", { _ in
            _ = try MNISTDataset(images: IDXFile(data: idx([0, 0xF8FE_EDFF, 0xFC03_0101], []), name: "images.idx"),
                                 labels: IDXFile(dimensions: [0], bytes: [], name: "labels.idx"))
        }),
        ("image.missing", { dir in _ = try Image(contentsOf: dir.appendingPathComponent("digit.png")) }),
        ("image.directory", { dir in _ = try Image(contentsOf: dir) }),
        ("image.device", { _ in _ = try Image(contentsOf: URL(fileURLWithPath: "/dev/zero")) }),
        ("image.empty", { dir in _ = try Image(contentsOf: try file(dir, "digit.png", [])) }),
        ("image.png-truncated", { _ in _ = try Image(data: Array(try png().dropLast(20)), name: "digit.png") }),
        ("image.png-corrupt", { _ in
            var bytes = try png()
            bytes[bytes.count - 20] ^= 0x10
            _ = try Image(data: bytes, name: "digit.png")
        }),
        ("image.jpeg-truncated", { _ in _ = try Image(data: Array(try jpeg().dropLast(40)), name: "photo.jpg") }),
        ("image.jpeg-header", { _ in _ = try Image(data: Array(try jpeg().prefix(30)), name: "photo.jpg") }),
        ("image.jpeg-segment", { _ in
            var bytes = try jpeg()
            let dht = (0 ..< bytes.count - 1).first { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC4 }!
            bytes[dht + 4] = 0x42
            _ = try Image(data: bytes, name: "photo.jpg")
        }),
        ("image.bmp-truncated", { _ in
            let (_, bmp) = FailureVisionTests.uncompressed.first { $0.0 == "rgb.bmp" }!
            _ = try Image(data: Array(bmp.dropLast(4)), name: "photo.bmp")
        }),
        ("image.tga-truncated", { _ in
            _ = try Image(data: [UInt8](try Data(contentsOf: TestPaths.repositoryRoot.appendingPathComponent("Fuzz/regressions/image/tga-truncated-65496x224"))),
                          name: "texture.tga")
        }),
        ("image.pnm-truncated", { _ in
            let (_, ppm) = FailureVisionTests.uncompressed.first { $0.0 == "rgb.ppm" }!
            _ = try Image(data: Array(ppm.dropLast(1)), name: "frame.ppm")
        }),
        ("image.unknown-format", { _ in _ = try Image(data: Array("just some text\n".utf8), name: "notes.txt") }),
        ("image.too-large", { _ in
            var bytes = try png()
            bytes[16 ..< 24] = ArraySlice(be32(20_000) + be32(20_000))
            _ = try Image(data: bytes, name: "bomb.png")
        }),
        ("preprocess.blank", { _ in
            _ = try MNISTPreprocessor().preprocess(Image(width: 8, height: 8, channels: 1, pixels: [Float](repeating: 255, count: 64), name: "white.png"))
        }),
    ]

    static func produce(_ entry: Entry) throws -> (String, String) {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        do {
            try entry.trigger(dir)
            return ("nothing thrown", "")
        } catch let error as VisionError {
            return ("VisionError.\(error.code)", error.description.replacingOccurrences(of: dir.path, with: "<dir>"))
        } catch {
            return ("\(type(of: error))", "\(error)")
        }
    }

    @Test("Every catalogued VisionError is produced as docs/errors.md shows it")
    func documentMatchesCode() throws {
        try ErrorCatalogue.expectDocumented(Self.entries, id: { $0.id }, produce: Self.produce)
    }
}
