import Foundation
import Testing
@testable import AnvilVision

@Suite("IDXFile")
struct IDXFileTests {
    /// A 2 × 3 × 2 unsigned-byte IDX file, header written out byte by byte.
    let sample: [UInt8] = [0x00, 0x00, 0x08, 0x03,
                           0x00, 0x00, 0x00, 0x02,
                           0x00, 0x00, 0x00, 0x03,
                           0x00, 0x00, 0x00, 0x02]
        + [0, 1, 2, 3, 4, 5, 250, 251, 252, 253, 254, 255]

    @Test func parsesHandBuiltFile() throws {
        let idx = try IDXFile(data: sample, name: "sample")
        #expect(idx.dimensions == [2, 3, 2])
        #expect(idx.bytes == [0, 1, 2, 3, 4, 5, 250, 251, 252, 253, 254, 255])
        #expect(idx.headerSize == 16)
        #expect(idx.name == "sample")
    }

    @Test func parsesLargeBigEndianDimension() throws {
        // 1-D file of 258 elements: the size 0x00000102 is big-endian (little-endian would read 33619968).
        let payload = (0..<258).map { UInt8($0 % 256) }
        let idx = try IDXFile(data: [0, 0, 8, 1, 0x00, 0x00, 0x01, 0x02] + payload, name: "labels")
        #expect(idx.dimensions == [258])
        #expect(idx.bytes == payload)
    }

    @Test func dataAndArrayInitialisersAgree() throws {
        let fromArray = try IDXFile(data: sample, name: "x")
        let fromData = try IDXFile(data: Data(sample), name: "x")
        #expect(fromArray == fromData)
    }

    @Test func roundTripsThroughEncoding() throws {
        let idx = try IDXFile(data: sample, name: "sample")
        #expect(idx.encoded() == sample)
        let built = try IDXFile(dimensions: [2, 3, 2], bytes: [0, 1, 2, 3, 4, 5, 250, 251, 252, 253, 254, 255])
        #expect(built.encoded() == sample)
        #expect(try IDXFile(data: built.encoded(), name: "again").bytes == built.bytes)
    }

    @Test func readsFromDiskAndNamesThePath() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("sample-idx3-ubyte")
        try Data(sample).write(to: url)
        #expect(try IDXFile(contentsOf: url).dimensions == [2, 3, 2])

        let short = dir.appendingPathComponent("short-idx3-ubyte")
        try Data(sample.dropLast()).write(to: short)
        let error = expectVisionError(.fileTooShort) { try IDXFile(contentsOf: short) }
        #expect(error?.source == short.path)
        #expect(error?.description.hasPrefix(short.path + ": ") == true)
    }

    @Test func missingFileIsAnError() throws {
        let url = URL(fileURLWithPath: "/nonexistent/dir/t10k-images-idx3-ubyte")
        let error = expectVisionError(.cannotRead) { try IDXFile(contentsOf: url) }
        #expect(error?.description.contains("/nonexistent/dir/t10k-images-idx3-ubyte") == true)
    }

    @Test func zeroByteFile() {
        let error = expectVisionError(.emptyFile) { try IDXFile(data: [UInt8](), name: "empty.idx") }
        #expect(error?.description.contains("empty.idx") == true)
        #expect(error?.message.contains("0 bytes") == true)
    }

    @Test func headerCutShort() {
        expectVisionError(.truncatedHeader) { try IDXFile(data: [0, 0, 8], name: "x") }
        // Three dimensions need a 16-byte header; only 10 bytes present.
        let error = expectVisionError(.truncatedHeader) { try IDXFile(data: Array(sample.prefix(10)), name: "x") }
        #expect(error?.message.contains("16") == true)
    }

    @Test func badMagic() {
        var bytes = sample
        bytes[0] = 0x01
        let error = expectVisionError(.badMagic) { try IDXFile(data: bytes, name: "x") }
        #expect(error?.message.contains("0x01 0x00") == true)
    }

    @Test func gzipMagicGetsAHint() {
        let error = expectVisionError(.badMagic) { try IDXFile(data: [0x1F, 0x8B, 0x08, 0x00, 1, 2, 3], name: "t10k.gz") }
        #expect(error?.message.contains("gzip") == true)
    }

    @Test(arguments: [(UInt8(0x0D), "32-bit float"), (0x09, "signed byte"), (0x0B, "16-bit integer"),
                      (0x0C, "32-bit integer"), (0x0E, "64-bit float"), (0x05, "unknown")])
    func unsupportedDataTypeIsNamed(type: UInt8, words: String) {
        var bytes = sample
        bytes[2] = type
        let hex = "0x" + (type < 16 ? "0" : "") + String(type, radix: 16, uppercase: true)
        let error = expectVisionError(.unsupportedDataType) { try IDXFile(data: bytes, name: "x") }
        #expect(error?.message.contains(hex) == true)
        #expect(error?.message.contains(words) == true)
    }

    @Test func zeroDimensions() {
        expectVisionError(.badDimensions) { try IDXFile(data: [0, 0, 8, 0, 42], name: "x") }
    }

    @Test func shortFileReportsExpectedAndActualSizes() {
        let error = expectVisionError(.fileTooShort) { try IDXFile(data: Array(sample.dropLast(3)), name: "x") }
        #expect(error?.message.contains("expected 28 bytes") == true)
        #expect(error?.message.contains("found 25") == true)
    }

    @Test func longFileReportsExpectedAndActualSizes() {
        let error = expectVisionError(.fileTooLong) { try IDXFile(data: sample + [9, 9], name: "x") }
        #expect(error?.message.contains("expected 28 bytes") == true)
        #expect(error?.message.contains("found 30") == true)
    }

    @Test func headerOnlyFileIsTooShort() {
        // MNIST test-set header (10000 × 28 × 28) and no pixels.
        let header: [UInt8] = [0, 0, 8, 3] + be32(10_000) + be32(28) + be32(28)
        let error = expectVisionError(.fileTooShort) { try IDXFile(data: header, name: "x") }
        #expect(error?.message.contains("expected 7840016") == true)
        #expect(error?.message.contains("found 16") == true)
    }

    @Test func dimensionProductOverflowIsAnError() {
        // 0xFFFFFFFF³ does not fit in 64 bits.
        let header: [UInt8] = [0, 0, 8, 3] + be32(.max) + be32(.max) + be32(.max) + [1, 2, 3]
        expectVisionError(.sizeOverflow) { try IDXFile(data: header, name: "x") }
        // The product fits exactly (153092023 × 92737 × 649657 = Int.max = 2⁶³ − 1),
        // but adding the 16-byte header does not.
        let product: [UInt8] = [0, 0, 8, 3] + be32(153_092_023) + be32(92_737) + be32(649_657)
        let error = expectVisionError(.sizeOverflow) { try IDXFile(data: product, name: "x") }
        #expect(error?.message.contains("153092023×92737×649657") == true)
    }

    @Test func zeroSizedDimensionIsAnEmptyFileOfData() throws {
        let idx = try IDXFile(data: [0, 0, 8, 2] + be32(0) + be32(28), name: "x")
        #expect(idx.dimensions == [0, 28])
        #expect(idx.bytes.isEmpty)
    }

    @Test func builderValidates() {
        expectVisionError(.countMismatch) { try IDXFile(dimensions: [2, 2], bytes: [1, 2, 3]) }
        expectVisionError(.badDimensions) { try IDXFile(dimensions: [], bytes: []) }
        expectVisionError(.badDimensions) { try IDXFile(dimensions: [-1], bytes: []) }
    }
}
