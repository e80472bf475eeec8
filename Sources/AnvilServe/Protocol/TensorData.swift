/// A tensor's `data` in JSON: numbers or truth values (`true`/`false`, for BOOL), flat or nested
/// row-major (`[[1, 2], [3, 4]]` for a 2 × 2 tensor). Decoding keeps the nesting so it can be
/// checked against the declared shape; the datatype is checked against the model's later.
public struct TensorData: Codable, Sendable, Equatable {
    /// The elements in row-major order.
    public var elements: Elements
    /// The element count at each nesting level (`[4]` for a flat list, `[2, 2]` above).
    public var nesting: [Int]

    /// Flat FP32 data.
    public init(_ values: [Float]) {
        self.init(.floats(values))
    }

    /// Flat data of `elements`.
    public init(_ elements: Elements) {
        self.elements = elements
        nesting = [elements.count]
    }

    /// Each element as a float32 number (a truth value 1 or 0), as Anvil holds it.
    public var values: [Float] { elements.floatValues }

    /// How many elements.
    public var count: Int { elements.count }

    /// Reads a flat or nested array of numbers, or of truth values; nested arrays must be
    /// regular (each sibling the same length and depth).
    public init(from decoder: any Decoder) throws {
        // An index into the arrays the server's scanner read ahead (TensorDataScanner).
        if let arrays = decoder.userInfo[TensorDataScanner.userInfoKey] as? TensorDataScanner.Arrays,
           let placeholder = try? decoder.singleValueContainer().decode(String.self), let data = arrays.array(for: placeholder) {
            self = data
            return
        }
        var container = try decoder.unkeyedContainer()
        var leaves = Leaves()
        try Self.read(&container, depth: 0, leaves: &leaves)
        elements = leaves.truths.map { .truths($0) } ?? .numbers(leaves.numbers)
        nesting = leaves.levels.counts
    }

    /// What the innermost arrays hold so far: numbers, or truth values once the first is one
    /// (every element must then be one), and the nesting levels met.
    private struct Leaves {
        var numbers: [Double] = []
        var truths: [Bool]?
        var levels = Levels()
    }

    /// What each nesting level holds, as first seen: its element count and whether its elements
    /// are values (not arrays); every sibling met later must agree.
    private struct Levels {
        var counts: [Int] = []
        var holdsValues: [Bool] = []

        /// Records a finished level (or checks it against its siblings).
        mutating func finish(depth: Int, count: Int, values: Bool, in container: any UnkeyedDecodingContainer) throws {
            while counts.count <= depth {
                counts.append(-1)
                holdsValues.append(false)
            }
            if counts[depth] == -1 {
                counts[depth] = count
                holdsValues[depth] = values
            } else if counts[depth] != count || holdsValues[depth] != values {
                throw DecodingError.dataCorruptedError(in: container, debugDescription:
                    "nested data is not regular: \(count) \(values ? "values" : "arrays") where a sibling has \(counts[depth]) \(holdsValues[depth] ? "values" : "arrays")")
            }
        }
    }

    /// Reads one level: values (the innermost level) or arrays.
    private static func read(_ container: inout any UnkeyedDecodingContainer, depth: Int, leaves: inout Leaves) throws {
        guard depth < 8 else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "data is nested deeper than any tensor Anvil takes")
        }
        var count = 0
        var values: Bool?
        if depth == 0, let expected = container.count { leaves.numbers.reserveCapacity(expected) }
        while !container.isAtEnd {
            if values != false, try readValue(&container, first: values == nil, into: &leaves) {
                values = true
            } else {
                values = false
                var nested = try container.nestedUnkeyedContainer()
                try read(&nested, depth: depth + 1, leaves: &leaves)
            }
            count += 1
        }
        // An empty array counts as a level of values.
        try leaves.levels.finish(depth: depth, count: count, values: values ?? true, in: container)
    }

    /// Reads the next element into `leaves` if it is a number or a truth value; false (nothing
    /// consumed) when it is something else and `first` on its level: an array, which the caller reads.
    private static func readValue(_ container: inout any UnkeyedDecodingContainer, first: Bool, into leaves: inout Leaves) throws -> Bool {
        if let value = try attempt(Double.self, &container) {
            guard leaves.truths == nil else { throw mixed(container) }
            // Read as a Double so a number beyond FP32 (beyond every datatype's range) is named
            // here, not reported as invalid JSON.
            guard abs(value) <= Double(Float.greatestFiniteMagnitude) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(value) is beyond the range of FP32")
            }
            leaves.numbers.append(value)
            return true
        }
        if let truth = try attempt(Bool.self, &container) {
            guard leaves.numbers.isEmpty else { throw mixed(container) }
            leaves.truths = leaves.truths ?? []
            leaves.truths?.append(truth)
            return true
        }
        if first { return false }
        throw DecodingError.dataCorruptedError(in: container, debugDescription: "an element is neither a number nor true or false")
    }

    /// The next element as `type`, or nil (nothing consumed) when it is not one.
    private static func attempt<T: Decodable>(_ type: T.Type, _ container: inout any UnkeyedDecodingContainer) throws -> T? {
        do {
            return try container.decode(type)
        } catch DecodingError.typeMismatch {
            return nil
        }
    }

    /// The error for data holding both numbers and truth values.
    private static func mixed(_ container: any UnkeyedDecodingContainer) -> DecodingError {
        DecodingError.dataCorruptedError(in: container, debugDescription: "data mixes numbers and truth values; BOOL data is all true or false, other data all numbers")
    }

    /// Writes the elements as a flat array: numbers, integers, or `true`/`false`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch elements {
        case .numbers(let values): try container.encode(values)
        case .floats(let values): try container.encode(values)
        case .integers(let values): try container.encode(values)
        case .truths(let values): try container.encode(values)
        }
    }
}
