/// The marker segments of a JPEG file, checked before stb_image sees them. stb_image trusts
/// a Huffman table's code counts (up to 4080 values into arrays of 256) and, once the first
/// scan has started, ignores a marker segment it cannot parse and carries on with whatever
/// it half-read; crafted tables then reach an assertion in its Huffman decoder, and the
/// Debian build keeps assertions on: the process aborts (found by the image fuzz target,
/// `Fuzz/regressions/image/jpeg-progressive-huffman-assert`). So every segment must fit its
/// declared length and the file, and the tables must be well-formed:
///
/// - DHT: class 0 or 1, id 0-3, at most 256 values, code counts that form a prefix code
///   (Kraft), tables filling the segment exactly;
/// - DQT: precision 0 or 1, id 0-3, 64 entries of 1 or 2 bytes, filling the segment exactly;
/// - SOF: precision 8 (or 12/16 for stb_image to refuse by itself), 1-4 components;
/// - SOS: 1-4 components, table ids 0-3, length 6 + 2 × components, and the Huffman tables
///   it decodes with defined before it;
/// - DRI: length 4.
///
/// Entropy-coded data runs from a scan header to the next marker other than RST0-7.
extension ContainerCheck {
    /// A description of a malformed JPEG segment, or nil (including when the walk reaches
    /// the end of the file: truncation is reported by the end-of-image check).
    static func jpegSegmentProblem(_ raw: UnsafeRawBufferPointer) -> String? {
        var defined = Set<UInt8>()  // Huffman tables seen so far: class << 4 | id
        var i = 2  // after SOI
        while i < raw.count {
            // Fill bytes: any number of 0xFF before a marker code.
            guard raw[i] == 0xFF else { return "JPEG data is corrupt (expected a marker at byte \(i))" }
            while i < raw.count, raw[i] == 0xFF { i += 1 }
            guard i < raw.count else { return nil }
            let marker = raw[i]
            let at = i - 1
            i += 1
            switch marker {
            case 0xD9:  // EOI
                return nil
            case 0x01, 0xD0 ... 0xD7:  // TEM, RSTn: no segment
                continue
            case 0x00:
                return "JPEG data is corrupt (a stuffed zero byte outside entropy-coded data at byte \(at))"
            default:
                break
            }
            guard i + 2 <= raw.count else { return nil }
            let length = Int(raw[i]) << 8 | Int(raw[i + 1])
            guard length >= 2 else { return "JPEG data is corrupt (marker \(hex(marker)) at byte \(at) has length \(length))" }
            guard i + length <= raw.count else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: raw[(i + 2) ..< (i + length)])
            if let problem = segmentProblem(marker, body) ?? tableProblem(marker, body, defined: &defined) {
                return "JPEG data is corrupt (\(problem) in the \(hex(marker)) segment at byte \(at))"
            }
            i += length
            if marker == 0xDA {
                // Entropy-coded data: up to a marker that is not a stuffed zero or a restart.
                while i + 1 < raw.count {
                    if raw[i] == 0xFF, raw[i + 1] != 0x00, !(0xD0 ... 0xD7).contains(raw[i + 1]), raw[i + 1] != 0xFF { break }
                    i += 1
                }
                guard i + 1 < raw.count else { return nil }
            }
        }
        return nil
    }

    /// Records the Huffman tables a DHT defines; for a scan, requires the tables it decodes
    /// with to be defined already (stb_image would read an uninitialised table: found by the
    /// image fuzz target, `Fuzz/regressions/image/jpeg-scan-before-its-huffman-table`).
    /// A progressive first DC scan needs its DC tables, an AC scan its AC tables, a baseline
    /// scan both; a DC refinement scan reads raw bits and needs none.
    private static func tableProblem(_ marker: UInt8, _ body: UnsafeRawBufferPointer, defined: inout Set<UInt8>) -> String? {
        if marker == 0xC4 {
            var o = 0
            while o + 17 <= body.count {
                defined.insert(body[o])
                o += 17 + (1 ... 16).reduce(0) { $0 + Int(body[o + $1]) }
            }
        } else if marker == 0xDA {
            let components = Int(body[0])
            let spectralStart = body[1 + 2 * components], spectralEnd = body[2 + 2 * components]
            let approximationHigh = body[3 + 2 * components] >> 4
            for c in 0 ..< components {
                let tables = body[2 + 2 * c]
                if spectralStart == 0, approximationHigh == 0, !defined.contains(tables >> 4) {
                    return "a scan decoding with DC Huffman table \(tables >> 4) before it is defined"
                }
                if spectralEnd > 0, !defined.contains(0x10 | tables & 15) {
                    return "a scan decoding with AC Huffman table \(tables & 15) before it is defined"
                }
            }
        }
        return nil
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return "0xFF" + (digits.count == 1 ? "0" + digits : digits)
    }

    private static func segmentProblem(_ marker: UInt8, _ body: UnsafeRawBufferPointer) -> String? {
        switch marker {
        case 0xC4:  // DHT
            var o = 0
            while o < body.count {
                guard o + 17 <= body.count else { return "a Huffman table header cut short" }
                let tableClass = body[o] >> 4, id = body[o] & 15
                guard tableClass <= 1, id <= 3 else { return "Huffman table class \(tableClass), id \(id)" }
                var values = 0, codes = 0
                for length in 1 ... 16 {
                    let count = Int(body[o + length])
                    values += count
                    codes = (codes << 1) + count  // codes of this length, in units of 2^-length
                    guard codes <= 1 << length else { return "Huffman code lengths that overflow a prefix code" }
                }
                guard values <= 256 else { return "a Huffman table of \(values) values" }
                o += 17 + values
                guard o <= body.count else { return "a Huffman table longer than its segment" }
            }
        case 0xDB:  // DQT
            var o = 0
            while o < body.count {
                let precision = body[o] >> 4, id = body[o] & 15
                guard precision <= 1, id <= 3 else { return "quantization table precision \(precision), id \(id)" }
                o += 1 + 64 * (precision == 0 ? 1 : 2)
                guard o <= body.count else { return "a quantization table longer than its segment" }
            }
        case 0xC0 ... 0xC3, 0xC5 ... 0xC7, 0xC9 ... 0xCB, 0xCD ... 0xCF:  // SOFn
            guard body.count >= 6 else { return "a frame header cut short" }
            let components = Int(body[5])
            guard (1 ... 4).contains(components), body.count == 6 + 3 * components else {
                return "a frame header of \(components) components in \(body.count + 2) bytes"
            }
        case 0xDA:  // SOS
            guard body.count >= 1 else { return "a scan header cut short" }
            let components = Int(body[0])
            guard (1 ... 4).contains(components), body.count == 4 + 2 * components else {
                return "a scan header of \(components) components in \(body.count + 2) bytes"
            }
            for c in 0 ..< components where body[2 + 2 * c] >> 4 > 3 || body[2 + 2 * c] & 15 > 3 {
                return "a scan using Huffman table \(body[2 + 2 * c] >> 4)/\(body[2 + 2 * c] & 15)"
            }
        case 0xDD:  // DRI
            guard body.count == 2 else { return "a restart interval of \(body.count) bytes" }
        default:
            break  // APPn, COM, DNL, ...: opaque
        }
        return nil
    }
}
