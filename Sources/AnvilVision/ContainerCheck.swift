/// Structural checks of PNG and JPEG files that stb_image does not make, so that
/// truncated and corrupted files are refused instead of decoding into garbage.
///
/// - PNG: the chunk sequence is walked from the signature to `IEND`; every chunk must fit
///   in the file and carry a correct CRC-32. (stb_image checks no CRC and accepts a file
///   that ends before `IEND`.)
/// - JPEG: an end-of-image marker (FF D9) must follow the last start-of-scan marker
///   (FF DA). (stb_image pads missing entropy-coded data with zeros and reports success.)
///   Inside entropy-coded data FF is always followed by 00 or a restart marker, so FF D9
///   there can only be the real end marker.
///
/// JPEG marker segments are checked too (ContainerCheck+JPEG.swift); BMP, PNM and TGA files
/// are checked for length (ContainerCheck+Uncompressed.swift); other
/// formats are left to stb_image.
enum ContainerCheck {
    /// A description of what is wrong, or nil if the file passes (or is not PNG/JPEG).
    static func problem(in raw: UnsafeRawBufferPointer) -> String? {
        if raw.count >= 8, Array(raw[0..<8]) == pngSignature { return pngProblem(raw) }
        if raw.count >= 3, raw[0] == 0xFF, raw[1] == 0xD8, raw[2] == 0xFF { return jpegProblem(raw) }
        return uncompressedProblem(in: raw)
    }

    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    private static func pngProblem(_ raw: UnsafeRawBufferPointer) -> String? {
        var offset = 8
        while true {
            guard offset + 8 <= raw.count else {
                return "PNG data is truncated (the file ends at byte \(raw.count) before the IEND chunk)"
            }
            let length = Int(readBE32(raw, offset))
            let typeBytes = Array(raw[(offset + 4)..<(offset + 8)])
            let type = String(decoding: typeBytes, as: UTF8.self)
            let (end, overflow) = (offset + 12).addingReportingOverflow(length)
            guard !overflow, end <= raw.count else {
                return "PNG data is truncated (chunk \(type) at byte \(offset) needs \(length) data bytes; the file ends at byte \(raw.count))"
            }
            let stored = readBE32(raw, offset + 8 + length)
            let computed = crc32(raw, from: offset + 4, count: 4 + length)
            guard stored == computed else {
                return "PNG data is corrupt (CRC mismatch in chunk \(type) at byte \(offset))"
            }
            if type == "IEND" { return nil }
            offset = end
        }
    }

    private static func jpegProblem(_ raw: UnsafeRawBufferPointer) -> String? {
        if let problem = jpegSegmentProblem(raw) { return problem }
        var lastScan = -1
        var i = 2
        while i + 1 < raw.count {
            if raw[i] == 0xFF && raw[i + 1] == 0xDA { lastScan = i }
            i += 1
        }
        guard lastScan >= 0 else { return "JPEG data is truncated (no start-of-scan marker)" }
        i = lastScan + 2
        while i + 1 < raw.count {
            if raw[i] == 0xFF && raw[i + 1] == 0xD9 { return nil }
            i += 1
        }
        return "JPEG data is truncated (no end-of-image marker after the last scan)"
    }

    private static func readBE32(_ raw: UnsafeRawBufferPointer, _ o: Int) -> UInt32 {
        UInt32(raw[o]) << 24 | UInt32(raw[o + 1]) << 16 | UInt32(raw[o + 2]) << 8 | UInt32(raw[o + 3])
    }

    /// CRC-32 (ISO 3309, reflected polynomial 0xEDB88320), as PNG chunks use.
    private static let crcTable: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = (c & 1) != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    private static func crc32(_ raw: UnsafeRawBufferPointer, from start: Int, count: Int) -> UInt32 {
        var c: UInt32 = 0xFFFF_FFFF
        crcTable.withUnsafeBufferPointer { table in
            for i in start..<(start + count) {
                c = table[Int((c ^ UInt32(raw[i])) & 0xFF)] ^ (c >> 8)
            }
        }
        return c ^ 0xFFFF_FFFF
    }
}
