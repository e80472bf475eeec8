import Foundation

/// A file in the IDX format, the container of the MNIST data set, holding unsigned bytes.
///
/// Layout (all integers big-endian):
///
/// | offset | size | content |
/// |---|---|---|
/// | 0 | 2 | `0x00 0x00` |
/// | 2 | 1 | element type; only `0x08` (unsigned byte) is supported |
/// | 3 | 1 | number of dimensions *d* (at least 1) |
/// | 4 | 4·*d* | the size of each dimension, `UInt32` |
/// | 4 + 4·*d* | product of the sizes | the elements, last dimension varying fastest |
///
/// The reader checks everything and throws a ``VisionError`` naming the file: bad magic
/// (with a hint when the file is still gzip-compressed), other element types (named),
/// a header cut short, sizes whose product overflows, and a file length that differs
/// from header + data (with both sizes in the message).
public struct IDXFile: Equatable, Sendable {
    /// The file path, or the name given for an in-memory buffer; used in error messages.
    public let name: String
    /// The size of each dimension, outermost first (MNIST images: `[count, 28, 28]`).
    public let dimensions: [Int]
    /// The elements after the header, row-major; `bytes.count` is the product of ``dimensions``.
    public let bytes: [UInt8]

    /// The IDX element type code of unsigned bytes, the only type this reader accepts.
    public static let unsignedByteType: UInt8 = 0x08

    /// Reads and validates the IDX file at `url`.
    ///
    /// - Throws: ``VisionError`` naming the path if the file cannot be read or is not a
    ///   valid unsigned-byte IDX file.
    public init(contentsOf url: URL) throws {
        let data = try FileReading.data(of: url)
        try self.init(data: data, name: url.path)
    }

    /// Parses and validates IDX bytes; `name` is used in error messages.
    public init(data: Data, name: String) throws {
        let parsed = try data.withUnsafeBytes { try IDXFile.parse($0, name: name) }
        self.init(name: name, dimensions: parsed.dimensions, bytes: parsed.payload)
    }

    /// Parses and validates IDX bytes; `name` is used in error messages.
    public init(data: [UInt8], name: String) throws {
        let parsed = try data.withUnsafeBytes { try IDXFile.parse($0, name: name) }
        self.init(name: name, dimensions: parsed.dimensions, bytes: parsed.payload)
    }

    /// Builds an IDX file in memory from its dimensions and elements (to write with ``encoded()``).
    ///
    /// - Throws: ``VisionError`` (`.badDimensions`, `.sizeOverflow`, `.countMismatch`) if
    ///   there are no dimensions or more than 255, a size is negative or does not fit in
    ///   32 bits, or `bytes.count` differs from the product of the sizes.
    public init(dimensions: [Int], bytes: [UInt8], name: String = "<IDX in memory>") throws {
        guard !dimensions.isEmpty, dimensions.count <= 255 else {
            throw VisionError(.badDimensions, source: name,
                              message: "an IDX file needs 1 to 255 dimensions, got \(dimensions.count)")
        }
        if let bad = dimensions.first(where: { $0 < 0 || UInt64($0) > UInt64(UInt32.max) }) {
            throw VisionError(.badDimensions, source: name,
                              message: "dimension size \(bad) is outside 0...\(UInt32.max)")
        }
        let count = try IDXFile.elementCount(dimensions, name: name)
        guard count == bytes.count else {
            throw VisionError(.countMismatch, source: name,
                              message: "dimensions \(IDXFile.format(dimensions)) need \(count) bytes, got \(bytes.count)")
        }
        self.init(name: name, dimensions: dimensions, bytes: bytes)
    }

    private init(name: String, dimensions: [Int], bytes: [UInt8]) {
        self.name = name
        self.dimensions = dimensions
        self.bytes = bytes
    }

    /// The size in bytes of the header: 4 + 4 × the number of dimensions.
    public var headerSize: Int { 4 + 4 * dimensions.count }

    /// The file's bytes: header followed by ``bytes``.
    public func encoded() -> [UInt8] {
        var out: [UInt8] = [0, 0, IDXFile.unsignedByteType, UInt8(dimensions.count)]
        out.reserveCapacity(headerSize + bytes.count)
        for size in dimensions {
            let v = UInt32(size)
            out += [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
        }
        out += bytes
        return out
    }

    // MARK: - Parsing

    private static func parse(_ raw: UnsafeRawBufferPointer, name: String) throws -> (dimensions: [Int], payload: [UInt8]) {
        let length = raw.count
        guard length > 0 else {
            throw VisionError(.emptyFile, source: name, message: "file is empty (0 bytes); an IDX file starts with a 4-byte magic number")
        }
        guard length >= 4 else {
            throw VisionError(.truncatedHeader, source: name,
                              message: "file is too short for an IDX header: \(length) bytes, the magic number alone needs 4")
        }
        if raw[0] != 0 || raw[1] != 0 {
            var message = "not an IDX file: it starts with \(hex(raw[0])) \(hex(raw[1])), expected 0x00 0x00"
            if raw[0] == 0x1F && raw[1] == 0x8B {
                message += " (this is a gzip-compressed file; decompress it first, e.g. with gunzip)"
            }
            throw VisionError(.badMagic, source: name, message: message)
        }
        let type = raw[2]
        guard type == unsignedByteType else {
            let known: [UInt8: String] = [0x09: "signed byte", 0x0B: "16-bit integer", 0x0C: "32-bit integer",
                                          0x0D: "32-bit float", 0x0E: "64-bit float"]
            let what = known[type].map { "data type \(hex(type)) (\($0))" } ?? "unknown data type \(hex(type))"
            throw VisionError(.unsupportedDataType, source: name,
                              message: "\(what) is not supported; only \(hex(unsignedByteType)) (unsigned byte) is")
        }
        let rank = Int(raw[3])
        guard rank > 0 else {
            throw VisionError(.badDimensions, source: name, message: "the header declares 0 dimensions; at least 1 is needed")
        }
        let headerSize = 4 + 4 * rank
        guard length >= headerSize else {
            throw VisionError(.truncatedHeader, source: name,
                              message: "file ends inside the header: \(rank) dimensions need a \(headerSize)-byte header, the file has \(length) bytes")
        }
        var dimensions: [Int] = []
        dimensions.reserveCapacity(rank)
        for i in 0..<rank {
            let o = 4 + 4 * i
            let v = UInt32(raw[o]) << 24 | UInt32(raw[o + 1]) << 16 | UInt32(raw[o + 2]) << 8 | UInt32(raw[o + 3])
            guard let size = Int(exactly: v) else {
                throw VisionError(.sizeOverflow, source: name, message: "dimension size \(v) does not fit in Int")
            }
            dimensions.append(size)
        }
        let count = try elementCount(dimensions, name: name)
        let (expected, overflow) = headerSize.addingReportingOverflow(count)
        guard !overflow else {
            throw VisionError(.sizeOverflow, source: name,
                              message: "dimensions \(format(dimensions)) overflow: the file size cannot be represented")
        }
        let sizes = "\(expected) bytes (\(headerSize)-byte header + \(format(dimensions)) data bytes)"
        if length < expected {
            throw VisionError(.fileTooShort, source: name,
                              message: "file is too short: expected \(sizes), found \(length)")
        }
        if length > expected {
            throw VisionError(.fileTooLong, source: name,
                              message: "file is too long: expected \(sizes), found \(length)")
        }
        let payload = [UInt8](UnsafeRawBufferPointer(rebasing: raw[headerSize...]))
        return (dimensions, payload)
    }

    /// The product of `dimensions`, or a `.sizeOverflow` error.
    private static func elementCount(_ dimensions: [Int], name: String) throws -> Int {
        var count = 1
        for size in dimensions {
            let (product, overflow) = count.multipliedReportingOverflow(by: size)
            guard !overflow else {
                throw VisionError(.sizeOverflow, source: name,
                                  message: "dimensions \(format(dimensions)) overflow: their product does not fit in Int")
            }
            count = product
        }
        return count
    }

    static func format(_ dimensions: [Int]) -> String {
        dimensions.map(String.init).joined(separator: "×")
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return "0x" + (digits.count == 1 ? "0" + digits : digits)
    }
}
