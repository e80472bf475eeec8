/// Protobuf's wire format read only far enough to find a message's fields by number, without
/// decoding them: how ``ONNXInitializers`` finds each initializer's bytes in a file so that
/// swift-protobuf (which copies every `bytes` field) never parses the weights whole.
enum ProtoWire {
    /// One field of a message: its number and wire type, the bytes of the whole field (tag
    /// included) and of its value (for a length-delimited field, without the length).
    struct Field {
        let number: UInt64
        let wireType: UInt8
        let whole: Range<Int>
        let payload: Range<Int>
    }

    /// The fields of the message in `bytes[range]`, in order; nil when they do not tile it
    /// exactly (a truncated or malformed message, or a deprecated group), which the caller leaves
    /// to swift-protobuf to report.
    static func fields(of bytes: UnsafeRawBufferPointer, in range: Range<Int>) -> [Field]? {
        guard range.lowerBound >= 0, range.upperBound <= bytes.count else { return nil }
        var fields: [Field] = []
        var position = range.lowerBound
        while position < range.upperBound {
            let start = position
            guard let tag = varint(bytes, at: &position, end: range.upperBound), tag >> 3 > 0 else { return nil }
            let wireType = UInt8(tag & 7)
            var payloadStart = position
            switch wireType {
            case 0: guard varint(bytes, at: &position, end: range.upperBound) != nil else { return nil }
            case 1: position += 8
            case 5: position += 4
            case 2:
                guard let length = varint(bytes, at: &position, end: range.upperBound),
                      length <= UInt64(range.upperBound - position) else { return nil }
                payloadStart = position
                position += Int(length)
            default: return nil  // groups (3, 4) and invalid types
            }
            guard position <= range.upperBound else { return nil }
            fields.append(Field(number: tag >> 3, wireType: wireType, whole: start ..< position, payload: payloadStart ..< position))
        }
        return fields
    }

    /// The varint at `position` (advanced past it), or nil when it runs past `end` or 10 bytes.
    static func varint(_ bytes: UnsafeRawBufferPointer, at position: inout Int, end: Int) -> UInt64? {
        var value: UInt64 = 0
        for shift in stride(from: UInt64(0), to: 70, by: 7) {
            guard position < end else { return nil }
            let byte = bytes[position]
            position += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
        }
        return nil
    }

    /// Appends `value` as a varint.
    static func appendVarint(_ value: UInt64, to output: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            output.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        output.append(UInt8(rest))
    }
}
