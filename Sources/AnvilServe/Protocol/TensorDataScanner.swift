import Foundation

/// A fast path for the large part of an inference request: the number arrays under `"data"`.
/// JSONDecoder reads one number at a time through a generic container (about a microsecond
/// each: 0.15 s for one 224 × 224 × 3 image); this scanner finds each `"data": [...]` array in the
/// raw bytes, reads its numbers with `strtod`, and hands JSONDecoder the request with each array
/// replaced by its index (`"data": 0`), which ``TensorData`` looks up. An array it cannot read
/// (strings, truth values, irregular nesting, anything unusual) is left as it was for JSONDecoder,
/// whose errors name the field. Numbers are kept as doubles: an integer input's values are checked
/// exactly, and an FP32 input's rounded once, as JSONDecoder's are.
struct TensorDataScanner {
    /// The `userInfo` key under which the decoder finds the arrays read ahead.
    static let userInfoKey = CodingUserInfoKey(rawValue: "anvil.serve.tensorData")!

    /// The arrays read, in order of appearance (a reference: `userInfo` values are copied).
    final class Arrays: @unchecked Sendable {
        // @unchecked Sendable: filled before decoding starts, only read during it.
        var arrays: [TensorData] = []
        /// Starts every placeholder, so a client cannot send one of its own.
        let nonce = "anvil-tensor-data-" + UUID().uuidString + "-"

        /// The array a placeholder string stands for, if it is one.
        func array(for placeholder: String) -> TensorData? {
            guard placeholder.hasPrefix(nonce), let index = Int(placeholder.dropFirst(nonce.count)),
                  arrays.indices.contains(index) else { return nil }
            return arrays[index]
        }
    }

    /// The request with its number arrays replaced by indices, and the arrays.
    static func scan(_ json: Data) -> (json: Data, arrays: Arrays) {
        let arrays = Arrays()
        var bytes = [UInt8](json)
        bytes.append(0)  // strtod stops at the terminator at worst
        var output = Data()
        output.reserveCapacity(min(json.count, 4096))
        var copiedUpTo = 0
        var index = 0
        let count = bytes.count - 1
        bytes.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            while index < count {
                let byte = base[index]
                guard byte == UInt8(ascii: "\"") else {
                    index += 1
                    continue
                }
                // A string: is it the key "data" followed by ':' and '['?
                let start = index
                index += 1
                while index < count, base[index] != UInt8(ascii: "\"") {
                    index += base[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                index += 1
                guard index - start == 6, memcmp(base + start, "\"data\"", 6) == 0 else { continue }
                var cursor = skipSpace(base, index, count)
                guard cursor < count, base[cursor] == UInt8(ascii: ":") else { continue }
                cursor = skipSpace(base, cursor + 1, count)
                guard cursor < count, base[cursor] == UInt8(ascii: "[") else { continue }
                var values: [Double] = []
                var levels = Levels()
                guard let end = readArray(base, cursor, count, depth: 0, values: &values, levels: &levels) else { continue }
                let nesting = levels.counts
                output.append(buffer[copiedUpTo ..< cursor].withUnsafeBytes { Data($0) })
                output.append(contentsOf: Array("\"\(arrays.nonce)\(arrays.arrays.count)\"".utf8))
                var data = TensorData(.numbers(values))
                data.nesting = nesting
                arrays.arrays.append(data)
                copiedUpTo = end
                index = end
            }
            output.append(buffer[copiedUpTo ..< count].withUnsafeBytes { Data($0) })
        }
        return arrays.arrays.isEmpty ? (json, arrays) : (output, arrays)
    }

    private static func skipSpace(_ base: UnsafePointer<UInt8>, _ start: Int, _ count: Int) -> Int {
        var index = start
        while index < count, base[index] == 0x20 || base[index] == 0x0A || base[index] == 0x0D || base[index] == 0x09 { index += 1 }
        return index
    }

    /// Reads the array at `start` (a `[`); returns the index after its `]`, or nil if it is not a
    /// regular array of JSON numbers within FP32's range.
    private static func readArray(_ base: UnsafePointer<UInt8>, _ start: Int, _ count: Int, depth: Int,
                                  values: inout [Double], levels: inout Levels) -> Int? {
        guard depth < 8 else { return nil }
        var index = skipSpace(base, start + 1, count)
        var elements = 0
        var numbers: Bool?
        if index < count, base[index] == UInt8(ascii: "]") {
            return levels.record(depth: depth, elements: 0, numbers: true) ? index + 1 : nil
        }
        while index < count {
            if base[index] == UInt8(ascii: "[") {
                guard numbers != true else { return nil }
                numbers = false
                guard let end = readArray(base, index, count, depth: depth + 1, values: &values, levels: &levels) else { return nil }
                index = end
            } else {
                guard numbers != false, let (value, end) = readNumber(base, index, count) else { return nil }
                numbers = true
                values.append(value)
                index = end
            }
            elements += 1
            index = skipSpace(base, index, count)
            guard index < count else { return nil }
            if base[index] == UInt8(ascii: ",") {
                index = skipSpace(base, index + 1, count)
            } else if base[index] == UInt8(ascii: "]") {
                return levels.record(depth: depth, elements: elements, numbers: numbers ?? true) ? index + 1 : nil
            } else {
                return nil
            }
        }
        return nil
    }

    /// Each nesting level's length and whether it holds numbers, as its first array says; every
    /// sibling must agree (regular data).
    struct Levels {
        var counts: [Int] = []
        var holdsNumbers: [Bool] = []

        /// Records a finished array at `depth`, or checks it against its siblings.
        mutating func record(depth: Int, elements: Int, numbers: Bool) -> Bool {
            while counts.count <= depth {
                counts.append(-1)
                holdsNumbers.append(false)
            }
            if counts[depth] == -1 {
                counts[depth] = elements
                holdsNumbers[depth] = numbers
                return true
            }
            return counts[depth] == elements && holdsNumbers[depth] == numbers
        }
    }

    /// A JSON number at `start`: its value (within FP32's range, so every datatype's) and the
    /// index after it; nil for anything else (`strtod` also takes `inf`, `nan` and hexadecimal,
    /// which JSON does not).
    private static func readNumber(_ base: UnsafePointer<UInt8>, _ start: Int, _ count: Int) -> (Double, Int)? {
        var index = start
        while index < count {
            let byte = base[index]
            guard (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") else { break }
            index += 1
        }
        guard index > start, base[start] == UInt8(ascii: "-") || (base[start] >= UInt8(ascii: "0") && base[start] <= UInt8(ascii: "9")) else {
            return nil
        }
        var end: UnsafeMutablePointer<CChar>?
        let value = base.withMemoryRebound(to: CChar.self, capacity: count + 1) { strtod($0 + start, &end) }
        guard let end, end.withMemoryRebound(to: UInt8.self, capacity: 1, { UnsafePointer($0) }) == base + index,
              abs(value) <= Double(Float.greatestFiniteMagnitude) else { return nil }
        return (value, index)
    }
}
