import Foundation
import Testing
@testable import AnvilVision

/// Bad data files never crash and never decode into a wrong answer: IDX, PNG and JPEG files
/// that are missing, unreadable, directories, devices, empty, truncated at any byte, or
/// corrupted. (Single cases of several are in IDXFileTests and ImageDecodingTests; these go
/// through every byte.)
@Suite("Failure: data files")
struct FailureVisionTests {
    /// Expects a `VisionError` with `code` whose description contains each of `mentioning`.
    @discardableResult
    static func expect<T>(_ code: VisionError.Code, mentioning: [String] = [], _ context: String,
                          sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T) -> VisionError? {
        let error = expectVisionError(code, sourceLocation: sourceLocation, body)
        if let error {
            for text in mentioning {
                #expect(error.description.contains(text), "\(context): '\(error)' does not mention '\(text)'", sourceLocation: sourceLocation)
            }
        }
        return error
    }

    static func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: TestPaths.visionFixtures.appendingPathComponent(name)))
    }

    /// A valid images IDX file: 3 images of 4×5.
    static let idxImages: [UInt8] = [0, 0, 8, 3] + be32(3) + be32(4) + be32(5) + (0 ..< 60).map { UInt8($0 * 4) }

    // MARK: - Files that cannot be read

    @Test("Missing file, a directory, a device: cannotRead naming the path, for IDX files and images")
    func unreadablePaths() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = dir.appendingPathComponent("t10k-images-idx3-ubyte")
        Self.expect(.cannotRead, mentioning: ["t10k-images-idx3-ubyte", "no such file"], "IDX missing") { try IDXFile(contentsOf: missing) }
        Self.expect(.cannotRead, mentioning: ["is a directory"], "IDX directory") { try IDXFile(contentsOf: dir) }
        Self.expect(.cannotRead, mentioning: ["digit.png", "no such file"], "image missing") {
            try Image(contentsOf: dir.appendingPathComponent("digit.png"))
        }
        Self.expect(.cannotRead, mentioning: ["is a directory"], "image directory") { try Image(contentsOf: dir) }
        // /dev/zero never ends: refused before reading.
        Self.expect(.cannotRead, mentioning: ["/dev/zero", "not a regular file"], "IDX device") {
            try IDXFile(contentsOf: URL(fileURLWithPath: "/dev/zero"))
        }
        Self.expect(.cannotRead, mentioning: ["/dev/zero", "not a regular file"], "image device") {
            try Image(contentsOf: URL(fileURLWithPath: "/dev/zero"))
        }
        Self.expect(.cannotRead, mentioning: ["MNIST test file not found"], "MNIST directory without files") {
            try MNISTDataset(directory: dir, split: .test)
        }
    }

    @Test("A named pipe is refused, not waited on")
    func namedPipe() async throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("pipe.png")
        guard mkfifo(fifo.path, 0o644) == 0 else {
            print("namedPipe skipped: mkfifo failed (\(String(cString: strerror(errno))))")
            return
        }
        let path = fifo.path
        // In a child: if the reader blocked on the pipe, only the child would hang (and be killed).
        await #expect(processExitsWith: .success) { [path = path as String] in
            alarm(20)
            do {
                _ = try Image(contentsOf: URL(fileURLWithPath: path))
                exit(2)
            } catch let error as VisionError {
                exit(error.code == .cannotRead ? 0 : 3)
            }
        }
    }

    /// As in AnvilTests' unreadable-file test: a child process drops root so that the mode
    /// bits apply; skipped, with a message, only when the child can still read the file.
    @Test("Unreadable files (chmod 000): cannotRead 'permission' naming the path")
    func permissionDenied() async throws {
        let dir = try makeTemporaryDirectory()
        defer {
            for name in ["a.idx", "a.png"] { chmod(dir.appendingPathComponent(name).path, 0o644) }
            try? FileManager.default.removeItem(at: dir)
        }
        try Data(Self.idxImages).write(to: dir.appendingPathComponent("a.idx"))
        try Data(try Self.fixture("gray_7x5.png")).write(to: dir.appendingPathComponent("a.png"))
        let path = dir.path
        let result = await #expect(processExitsWith: .success, observing: [\.standardOutputContent]) { [path = path as String] in
            Self.readUnreadable(in: path)
        }
        let output = String(decoding: result?.standardOutputContent ?? [], as: UTF8.self)
        guard !output.hasPrefix("SKIP") else {
            print("permissionDenied skipped: \(output)")
            return
        }
        let lines = output.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(output)")
        for line in lines {
            #expect(line.hasPrefix("cannotRead\t") && line.lowercased().contains("permission"), "\(line)")
        }
        print(output)
    }

    static func readUnreadable(in path: String) -> Never {
        let dir = URL(fileURLWithPath: path)
        for name in ["a.idx", "a.png"] { chmod(dir.appendingPathComponent(name).path, 0) }
        if getuid() == 0, setgid(65534) != 0 || setuid(65534) != 0 {
            print("SKIP: running as root and cannot drop privileges, so chmod 000 does not deny reads")
            exit(0)
        }
        guard access(dir.appendingPathComponent("a.idx").path, R_OK) != 0 else {
            print("SKIP: chmod 000 does not deny reads to this process")
            exit(0)
        }
        for body in [{ _ = try IDXFile(contentsOf: dir.appendingPathComponent("a.idx")) },
                     { _ = try Image(contentsOf: dir.appendingPathComponent("a.png")) }] as [() throws -> Void] {
            do {
                try body()
                print("no error")
            } catch let error as VisionError {
                print("\(error.code)\t\(error)")
            } catch {
                print("other\t\(error)")
            }
        }
        exit(0)
    }

    // MARK: - Zero bytes, truncation, corruption

    @Test("Zero-byte IDX, PNG and JPEG files on disk: emptyFile naming the file")
    func zeroByteFiles() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["t10k-labels-idx1-ubyte", "digit.png", "photo.jpg"] {
            let url = dir.appendingPathComponent(name)
            try Data().write(to: url)
            Self.expect(.emptyFile, mentioning: [name, "0 bytes"], "zero-byte \(name)") {
                name.hasSuffix("ubyte") ? try IDXFile(contentsOf: url) as Any : try Image(contentsOf: url) as Any
            }
        }
    }

    @Test("An IDX file cut at every length is an error (truncatedHeader or fileTooShort), never a data set")
    func idxEveryPrefix() throws {
        let bytes = Self.idxImages
        #expect(try IDXFile(data: bytes, name: "ok").dimensions == [3, 4, 5])
        for length in 0 ..< bytes.count {
            let code: VisionError.Code = length == 0 ? .emptyFile : length < 16 ? .truncatedHeader : .fileTooShort
            Self.expect(code, mentioning: ["cut.idx"], "IDX cut at \(length) of \(bytes.count) bytes") {
                try IDXFile(data: Array(bytes.prefix(length)), name: "cut.idx")
            }
        }
        Self.expect(.fileTooLong, mentioning: ["76 bytes", "found 77"], "IDX with a byte appended") {
            try IDXFile(data: bytes + [0], name: "long.idx")
        }
    }

    @Test("An IDX header with any single byte changed is an error or still describes exactly its bytes")
    func idxHeaderCorruption() throws {
        for position in 0 ..< 16 {
            for value: UInt8 in [0x00, 0x01, 0x7F, 0x80, 0xFF] where value != Self.idxImages[position] {
                var bytes = Self.idxImages
                bytes[position] = value
                do {
                    let file = try IDXFile(data: bytes, name: "x")
                    #expect(file.encoded() == bytes, "byte \(position) = \(value): parsed but does not round-trip")
                    #expect(file.dimensions.reduce(1, *) == file.bytes.count)
                } catch is VisionError {}
            }
        }
    }

    /// The images of a data set whose header declares 0 images of an absurd size.
    @Test("Fuzz regression: 0 images of 4177456639 × 4228055297 pixels is sizeOverflow, not a trap")
    func mnistImageSizeOverflow() throws {
        // Found by Scripts/dev/fuzz.sh (idx target): the file is valid (0 elements), but the
        // image size height × width overflowed Int in MNISTDataset.imageSize.
        let bytes: [UInt8] = [0x00, 0x00, 0x08, 0x03, 0x00, 0x00, 0x00, 0x00, 0xF8, 0xFE, 0xED, 0xFF, 0xFC, 0x03, 0x01, 0x01]
        let images = try IDXFile(data: bytes, name: "fuzz.idx")
        #expect(images.dimensions == [0, 4_177_456_639, 4_228_055_297])
        let labels = try IDXFile(dimensions: [0], bytes: [])
        Self.expect(.sizeOverflow, mentioning: ["fuzz.idx", "overflow"], "MNIST image size overflow") {
            try MNISTDataset(images: images, labels: labels)
        }
    }

    @Test("PNG and JPEG files cut at every length: an error, never an image",
          arguments: ["gray_7x5.png", "rgba_5x3.png", "gray16_6x4.png", "palette_5x4.png", "gray_9x7.jpg", "rgb420_15x9.jpg"])
    func imageEveryPrefix(_ name: String) throws {
        let bytes = try Self.fixture(name)
        _ = try Image(data: bytes, name: name)
        for length in 0 ..< bytes.count {
            do {
                let image = try Image(data: Array(bytes.prefix(length)), name: "cut-\(name)")
                Issue.record("\(name) cut to \(length) of \(bytes.count) bytes decoded as \(image.width)×\(image.height)")
            } catch let error as VisionError {
                #expect(error.code == (length == 0 ? .emptyFile : .decodeFailed), "\(name) cut at \(length): \(error)")
            }
        }
    }

    @Test("A PNG with any single byte changed is an error: signature, lengths, types and data are all checked",
          arguments: ["gray_7x5.png", "rgb16_3x2.png"])
    func pngEveryByteCorrupted(_ name: String) throws {
        let bytes = try Self.fixture(name)
        for position in bytes.indices {
            var corrupt = bytes
            corrupt[position] ^= 0x21
            do {
                let image = try Image(data: corrupt, name: "x")
                Issue.record("\(name) with byte \(position) changed decoded as \(image.width)×\(image.height)×\(image.channels)")
            } catch let error as VisionError {
                #expect(error.code == .decodeFailed || error.code == .imageTooLarge, "byte \(position): \(error)")
            }
        }
    }

    /// JPEG has no checksum: a changed byte in the entropy-coded data decodes to different
    /// pixels without any way to notice (a documented limitation). It must still never crash
    /// and always give a well-formed image or an error.
    @Test("A JPEG with any single byte changed: an error or a well-formed image, never a crash",
          arguments: ["gray_9x7.jpg", "rgb444_16x12.jpg"])
    func jpegEveryByteCorrupted(_ name: String) throws {
        let bytes = try Self.fixture(name)
        var decoded = 0
        for position in bytes.indices {
            var corrupt = bytes
            corrupt[position] ^= 0x55
            do {
                let image = try Image(data: corrupt, name: "x")
                decoded += 1
                #expect(image.pixels.count == image.width * image.height * image.channels)
                #expect(image.pixels.allSatisfy { $0 >= 0 && $0 <= 255 })
            } catch is VisionError {}
        }
        print("\(name): \(decoded) of \(bytes.count) single-byte corruptions still decode (JPEG has no checksum)")
    }

    /// Hand-made 3×2 images in the formats whose data size the header fixes.
    static let uncompressed: [(String, [UInt8])] = {
        func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16(v >> 16 & 0xFFFF) }
        let rgb = (0 ..< 18).map { UInt8($0 * 13) }
        let ppm = Array("P6\n# a comment\n3 2\n255\n".utf8) + rgb
        let pgm16 = Array("P5 3 2 65535 ".utf8) + (0 ..< 12).map { UInt8($0 * 20) }
        var bmp: [UInt8] = Array("BM".utf8) + le32(14 + 40 + 24) + le32(0) + le32(54)
        bmp += le32(40) + le32(3) + le32(2) + le16(1) + le16(24) + le32(0) + le32(24) + le32(2835) + le32(2835) + le32(0) + le32(0)
        bmp += Array(rgb[0 ..< 9]) + [0, 0, 0] + Array(rgb[9 ..< 18]) + [0, 0, 0]  // rows padded to 12 bytes
        let tgaHeader: (UInt8) -> [UInt8] = { type in [0, 0, type, 0, 0, 0, 0, 0, 0, 0, 0, 0] + le16(3) + le16(2) + [24, 0] }
        let tga = tgaHeader(2) + rgb
        let tgaRLE = tgaHeader(10) + [0x85, 10, 20, 30]  // one run packet: 6 pixels of one colour
        return [("rgb.ppm", ppm), ("gray16.pgm", pgm16), ("rgb.bmp", bmp), ("rgb.tga", tga), ("rle.tga", tgaRLE)]
    }()

    @Test("BMP, PNM and TGA files cut at every length: an error, never an image with made-up pixels",
          arguments: uncompressed.indices)
    func uncompressedEveryPrefix(_ index: Int) throws {
        let (name, bytes) = Self.uncompressed[index]
        let image = try Image(data: bytes, name: name)
        #expect(image.width == 3 && image.height == 2, "\(name)")
        for length in 0 ..< bytes.count {
            do {
                // Only the padding of a BMP's last row may be missing: the pixels are all there.
                let cut = try Image(data: Array(bytes.prefix(length)), name: name)
                #expect(name.hasSuffix(".bmp") && cut == image, "\(name) cut to \(length) of \(bytes.count) bytes decoded as \(cut.width)×\(cut.height)")
            } catch let error as VisionError {
                #expect(error.code == (length == 0 ? .emptyFile : .decodeFailed), "\(name) cut at \(length): \(error)")
            }
        }
    }

    /// Found by Scripts/dev/fuzz.sh (image target): stb_image reads past the end of a short
    /// uncompressed file as zeros, so 515 bytes decoded as a 65496 × 224 TGA and 154 bytes as a
    /// 1179648 × 5 BMP, both mostly black, both reported as success.
    @Test("Fuzz regression: a truncated TGA or BMP declaring millions of pixels is decodeFailed, not a black image",
          arguments: ["tga-truncated-65496x224", "bmp-truncated-1179648x5"])
    func truncatedUncompressedRegression(_ name: String) throws {
        let url = TestPaths.repositoryRoot.appendingPathComponent("Fuzz/regressions/image/\(name)")
        let bytes = [UInt8](try Data(contentsOf: url))
        Self.expect(.decodeFailed, mentioning: ["truncated", "the header needs"], "fuzz regression \(name)") {
            try Image(data: bytes, name: name)
        }
    }

    /// Found by Scripts/dev/fuzz.sh (image target): progressive JPEGs whose scans decode with a
    /// Huffman table defined only later (or never), among inconsistent table segments.
    /// stb_image then decodes with an uninitialised table: it failed an assertion (which
    /// Debian's libstb keeps on: the process aborted) or read out of bounds (SIGSEGV). Run in
    /// a child process, so that a regression fails this test only.
    @Test("Fuzz regression: a JPEG scan using an undefined Huffman table is decodeFailed, not an abort or a crash",
          arguments: ["jpeg-progressive-huffman-assert", "jpeg-scan-before-its-huffman-table"])
    func jpegHuffmanRegression(_ name: String) async {
        await #expect(processExitsWith: .success) { [name = name as String] in
            let url = TestPaths.repositoryRoot.appendingPathComponent("Fuzz/regressions/image/\(name)")
            do {
                _ = try Image(data: [UInt8](try Data(contentsOf: url)), name: name)
                exit(2)
            } catch let error as VisionError {
                exit(error.code == .decodeFailed && error.message.contains("JPEG data is corrupt") ? 0 : 3)
            }
        }
    }

    /// The segment checks, one broken segment at a time, on a valid baseline JPEG.
    @Test("JPEG marker segments: oversized Huffman tables, bad classes, lengths past the end are decodeFailed")
    func jpegSegments() throws {
        let jpeg = try Self.fixture("gray_9x7.jpg")
        func segment(_ marker: UInt8) -> Int { (0 ..< jpeg.count - 1).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == marker }! }
        let dht = segment(0xC4), sos = segment(0xDA), dqt = segment(0xDB)
        var cases: [(String, [UInt8], String)] = []
        var bytes = jpeg
        bytes[dht + 4] = 0x42  // class 4
        cases.append(("DHT class 4", bytes, "Huffman table class 4"))
        bytes = jpeg
        for length in 5 ... 16 { bytes[dht + 4 + length] = 255 }  // 12 × 255 codes: more than 256 values, not a prefix code
        cases.append(("DHT counts", bytes, "Huffman"))
        bytes = jpeg
        bytes[dht + 2] = 0xFF  // segment length beyond the table
        cases.append(("DHT length", bytes, ""))  // before the first scan stb_image refuses these itself
        bytes = jpeg
        bytes[dqt + 4] = 0x27  // precision 2
        cases.append(("DQT precision", bytes, ""))
        bytes = jpeg
        bytes[sos + 4] = 9  // 9 components
        cases.append(("SOS components", bytes, "scan header of 9 components"))
        // The AC table's definition moved after the scan: the scan would decode with an undefined table.
        bytes = Array(jpeg[0 ..< dht]) + Array(jpeg[sos...])
        cases.append(("scan before its tables", bytes, "before it is defined"))
        for (label, bytes, words) in cases {
            Self.expect(.decodeFailed, mentioning: words.isEmpty ? [] : [words], label) { try Image(data: bytes, name: "x.jpg") }
        }
    }

    @Test("MNIST preprocessing of a blank image: blankImage naming it")
    func blankDrawing() throws {
        let white = try Image(width: 20, height: 20, channels: 1, pixels: [Float](repeating: 255, count: 400), name: "white.png")
        Self.expect(.blankImage, mentioning: ["white.png", "no digit found"], "blank drawing") { try MNISTPreprocessor().preprocess(white) }
    }
}
