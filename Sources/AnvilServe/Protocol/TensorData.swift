/// A tensor's `data` in JSON: numbers, flat or nested row-major (`[[1, 2], [3, 4]]` for a 2 × 2
/// tensor). Decoding keeps the nesting so it can be checked against the declared shape.
public struct TensorData: Codable, Sendable, Equatable {
    /// The numbers in row-major order.
    public var values: [Float]
    /// The element count at each nesting level (`[4]` for a flat list, `[2, 2]` above).
    public var nesting: [Int]

    /// Flat data.
    public init(_ values: [Float]) {
        self.values = values
        nesting = [values.count]
    }

    /// Reads a flat or nested array of numbers; nested arrays must be regular (each sibling the
    /// same length and depth).
    public init(from decoder: any Decoder) throws {
        // An index into the arrays the server's scanner read ahead (TensorDataScanner).
        if let arrays = decoder.userInfo[TensorDataScanner.userInfoKey] as? TensorDataScanner.Arrays,
           let placeholder = try? decoder.singleValueContainer().decode(String.self), let data = arrays.array(for: placeholder) {
            self = data
            return
        }
        var container = try decoder.unkeyedContainer()
        var level = Levels()
        values = []
        try Self.read(&container, depth: 0, values: &values, levels: &level)
        nesting = level.counts
    }

    /// What each nesting level holds, as first seen: its element count and whether its elements
    /// are numbers; every sibling met later must agree.
    private struct Levels {
        var counts: [Int] = []
        var holdsNumbers: [Bool] = []

        /// Records a finished level (or checks it against its siblings).
        mutating func finish(depth: Int, count: Int, numbers: Bool, in container: any UnkeyedDecodingContainer) throws {
            while counts.count <= depth {
                counts.append(-1)
                holdsNumbers.append(false)
            }
            if counts[depth] == -1 {
                counts[depth] = count
                holdsNumbers[depth] = numbers
            } else if counts[depth] != count || holdsNumbers[depth] != numbers {
                throw DecodingError.dataCorruptedError(in: container, debugDescription:
                    "nested data is not regular: \(count) \(numbers ? "numbers" : "arrays") where a sibling has \(counts[depth]) \(holdsNumbers[depth] ? "numbers" : "arrays")")
            }
        }
    }

    /// Reads one level: numbers (the innermost level) or arrays.
    private static func read(_ container: inout any UnkeyedDecodingContainer, depth: Int, values: inout [Float],
                             levels: inout Levels) throws {
        guard depth < 8 else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "data is nested deeper than any tensor Anvil takes")
        }
        var count = 0
        var numbers: Bool?
        if depth == 0, let expected = container.count { values.reserveCapacity(expected) }
        while !container.isAtEnd {
            if numbers != false, let value = try decodeNumber(&container, first: numbers == nil) {
                numbers = true
                values.append(value)
            } else {
                numbers = false
                var nested = try container.nestedUnkeyedContainer()
                try read(&nested, depth: depth + 1, values: &values, levels: &levels)
            }
            count += 1
        }
        // An empty array counts as a level of numbers.
        try levels.finish(depth: depth, count: count, numbers: numbers ?? true, in: container)
    }

    /// The next element as a number; `nil` (nothing consumed) when it is an array and `first`.
    private static func decodeNumber(_ container: inout any UnkeyedDecodingContainer, first: Bool) throws -> Float? {
        let value: Double
        if first {
            do {
                value = try container.decode(Double.self)
            } catch DecodingError.typeMismatch {
                return nil
            }
        } else {
            value = try container.decode(Double.self)
        }
        // Read as a Double so a number beyond FP32 is named here, not reported as invalid JSON.
        guard abs(value) <= Double(Float.greatestFiniteMagnitude) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(value) is beyond the range of FP32")
        }
        return Float(value)
    }

    /// Writes the values as a flat array.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(values)
    }
}
