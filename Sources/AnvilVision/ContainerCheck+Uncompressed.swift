/// Length checks for the formats whose pixel data has a size fixed by the header, so that a
/// truncated file is refused: stb_image reads past the end of its buffer as zeros and
/// reports success, turning a cut BMP, TGA or PNM into an image with a black (or garbage)
/// part — found by the image fuzz target (a 515-byte TGA declaring 65496 × 224 pixels).
///
/// - BMP (uncompressed, the only kind stb_image reads): the pixel array at `bfOffBits` needs
///   `|height| − 1` padded rows plus one unpadded row.
/// - PNM (binary P5/P6): width × height × channels samples of 1 or 2 bytes after the header.
/// - TGA: uncompressed, width × height pixels after the header, ID and colour map; run-length
///   encoded, at least one packet (a byte and a pixel) per 128 pixels.
///
/// GIF, PSD, PIC and HDR data are compressed without a size that a short check could verify;
/// they are left to stb_image (see docs/errors.md).
extension ContainerCheck {
    /// A description of a truncated BMP, PNM or TGA file, or nil.
    static func uncompressedProblem(in raw: UnsafeRawBufferPointer) -> String? {
        guard raw.count >= 2 else { return nil }
        if raw[0] == UInt8(ascii: "B"), raw[1] == UInt8(ascii: "M") { return bmpProblem(raw) }
        if raw[0] == UInt8(ascii: "P"), raw[1] == UInt8(ascii: "5") || raw[1] == UInt8(ascii: "6") { return pnmProblem(raw) }
        if isTGA(raw) { return tgaProblem(raw) }
        return nil
    }

    private static func le16(_ raw: UnsafeRawBufferPointer, _ o: Int) -> Int {
        Int(raw[o]) | Int(raw[o + 1]) << 8
    }

    private static func le32(_ raw: UnsafeRawBufferPointer, _ o: Int) -> Int {
        Int(Int32(bitPattern: UInt32(raw[o]) | UInt32(raw[o + 1]) << 8 | UInt32(raw[o + 2]) << 16 | UInt32(raw[o + 3]) << 24))
    }

    private static func truncated(_ format: String, needs: Int, has: Int) -> String {
        "\(format) data is truncated (the header needs \(needs) bytes; the file has \(has))"
    }

    private static func bmpProblem(_ raw: UnsafeRawBufferPointer) -> String? {
        guard raw.count >= 26 else { return nil }  // stb_image refuses it itself
        let offset = le32(raw, 10)
        let headerSize = le32(raw, 14)
        let width: Int, height: Int, bitsPerPixel: Int
        if headerSize == 12 {
            width = le16(raw, 18); height = le16(raw, 20); bitsPerPixel = le16(raw, 24)
        } else {
            guard raw.count >= 30 else { return nil }
            width = le32(raw, 18); height = abs(le32(raw, 22)); bitsPerPixel = le16(raw, 28)
        }
        guard width > 0, height > 0, bitsPerPixel > 0, offset > 0 else { return nil }
        let rowBits = width * bitsPerPixel  // at most 2^31 × 2^16: no overflow
        let paddedRow = (rowBits + 31) / 32 * 4
        let (rows, overflow1) = paddedRow.multipliedReportingOverflow(by: height - 1)
        let (pixels, overflow2) = rows.addingReportingOverflow((rowBits + 7) / 8)
        let (needed, overflow3) = pixels.addingReportingOverflow(offset)
        if overflow1 || overflow2 || overflow3 || needed > raw.count {
            return truncated("BMP", needs: overflow1 || overflow2 || overflow3 ? Int.max : needed, has: raw.count)
        }
        return nil
    }

    private static func pnmProblem(_ raw: UnsafeRawBufferPointer) -> String? {
        // "P5"/"P6", then width, height and maximum value separated by whitespace (and
        // comments from '#' to the end of the line), then one whitespace byte, then the samples.
        var i = 2
        var numbers: [Int] = []
        while numbers.count < 3 {
            while i < raw.count {
                if raw[i] == UInt8(ascii: "#") {
                    while i < raw.count, raw[i] != UInt8(ascii: "\n"), raw[i] != UInt8(ascii: "\r") { i += 1 }
                } else if [0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D].contains(raw[i]) {
                    i += 1
                } else {
                    break
                }
            }
            var value = 0
            let start = i
            while i < raw.count, raw[i] >= UInt8(ascii: "0"), raw[i] <= UInt8(ascii: "9") {
                value = min(value * 10 + Int(raw[i] - UInt8(ascii: "0")), 1 << 32)
                i += 1
            }
            // stb_image accepted the header, reading past the end as zeros: it is cut short.
            guard i > start else { return "PNM data is truncated (the file ends inside the header)" }
            numbers.append(value)
        }
        let channels = raw[1] == UInt8(ascii: "6") ? 3 : 1
        let sampleBytes = numbers[2] > 255 ? 2 : 1
        let (samples, overflow1) = (numbers[0] * numbers[1]).multipliedReportingOverflow(by: channels * sampleBytes)
        let (needed, overflow2) = samples.addingReportingOverflow(i + 1)
        if overflow1 || overflow2 || needed > raw.count {
            return truncated("PNM", needs: overflow1 || overflow2 ? Int.max : needed, has: raw.count)
        }
        return nil
    }

    /// TGA has no signature; stb_image tries it last. A file that reached this check was
    /// accepted by stb_image's header probe, so it is TGA unless another format's magic matches.
    private static func isTGA(_ raw: UnsafeRawBufferPointer) -> Bool {
        guard raw.count >= 3 else { return false }
        let head = Array(raw[0 ..< min(raw.count, 11)])
        let others: [[UInt8]] = [pngSignature, [0xFF, 0xD8, 0xFF], Array("GIF8".utf8), Array("8BPS".utf8),
                                 [0x53, 0x80, 0xF6, 0x34], Array("#?".utf8), Array("BM".utf8), Array("P5".utf8), Array("P6".utf8)]
        if others.contains(where: { head.starts(with: $0) }) { return false }
        return [1, 2, 3, 9, 10, 11].contains(raw[2])
    }

    private static func tgaProblem(_ raw: UnsafeRawBufferPointer) -> String? {
        guard raw.count >= 18 else { return truncated("TGA", needs: 18, has: raw.count) }
        let idLength = Int(raw[0])
        let hasColorMap = raw[1] == 1
        let type = Int(raw[2])
        let mapLength = le16(raw, 5)
        let mapBytes = hasColorMap ? mapLength * ((Int(raw[7]) + 7) / 8) : 0
        let width = le16(raw, 12), height = le16(raw, 14)
        let pixelBytes = (Int(raw[16]) + 7) / 8
        guard width > 0, height > 0, pixelBytes > 0 else { return nil }
        let header = 18 + idLength + mapBytes
        let pixels = width * height  // 16-bit sizes: no overflow
        let data = type >= 9 ? (pixels + 127) / 128 * (1 + pixelBytes) : pixels * pixelBytes
        if header + data > raw.count {
            return truncated(type >= 9 ? "TGA (run-length encoded)" : "TGA", needs: header + data, has: raw.count)
        }
        return nil
    }
}
