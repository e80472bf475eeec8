import Foundation

/// A JSON document as a tree, with ordered objects so written files read naturally.
public enum JSONValue: Equatable, Sendable {
    /// `null`.
    case null
    /// `true` / `false`.
    case bool(Bool)
    /// An integer that fits in `Int`.
    case int(Int)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, keys in order.
    case object([(String, JSONValue)])

    /// Two values are equal when they hold the same data (object key order ignored).
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)): return Double(a) == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && a.allSatisfy { key, value in b.first { $0.0 == key }?.1 == value }
        default: return false
        }
    }

    /// A float written with the fewest digits that read back as the same float (0.2, not 0.20000000298).
    public static func number(_ value: Float) -> JSONValue {
        .double(Double(value.description) ?? Double(value))
    }

    /// The member `key` of an object, or `nil`.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members.first { $0.0 == key }?.1 }
        return nil
    }

    /// Parses JSON text; throws ``AnvilError`` (`invalidFile`) naming `source` when malformed.
    public static func parse(_ data: Data, source: String) throws -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw AnvilError(.invalidFile, "'\(source)' is not valid JSON: \(Self.describe(error))")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context):
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return context.debugDescription + (path.isEmpty ? "" : " at \(path.hasPrefix(".") ? String(path.dropFirst()) : path)")
        default: return "\(error)"
        }
    }

    /// Serialises with two-space indentation; short arrays of scalars stay on one line.
    public func serialized(indent: String = "") -> String {
        switch self {
        case .null: return "null"
        case .bool(let value): return value ? "true" : "false"
        case .int(let value): return String(value)
        case .double(let value):
            return value.isFinite ? (value == value.rounded() && abs(value) < 1e15 ? String(format: "%.1f", value) : "\(value)") : "null"
        case .string(let value): return Self.quote(value)
        case .array(let values):
            if values.allSatisfy({ if case .array = $0 { return false }; if case .object = $0 { return false }; return true }) {
                return "[" + values.map { $0.serialized() }.joined(separator: ", ") + "]"
            }
            let inner = indent + "  "
            return "[\n" + values.map { inner + $0.serialized(indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .object(let members):
            if members.isEmpty { return "{}" }
            let inner = indent + "  "
            return "{\n" + members.map { "\(inner)\(Self.quote($0.0)): \($0.1.serialized(indent: inner))" }
                .joined(separator: ",\n") + "\n\(indent)}"
        }
    }

    private static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            default:
                if scalar.value < 0x20 { result += String(format: "\\u%04x", scalar.value) } else { result.unicodeScalars.append(scalar) }
            }
        }
        return result + "\""
    }
}

extension JSONValue: Codable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes any JSON value.
    public init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: Key.self) {
            self = .object(try object.allKeys.map { ($0.stringValue, try object.decode(JSONValue.self, forKey: $0)) })
            return
        }
        if var array = try? decoder.unkeyedContainer() {
            var values: [JSONValue] = []
            while !array.isAtEnd { values.append(try array.decode(JSONValue.self)) }
            self = .array(values)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null }
        else if let value = try? single.decode(Bool.self) { self = .bool(value) }
        else if let value = try? single.decode(Int.self) { self = .int(value) }
        else if let value = try? single.decode(Double.self) { self = .double(value) }
        else if let value = try? single.decode(String.self) { self = .string(value) }
        else {
            // Only a number beyond Double's range gets here (1e999): say so, instead of the
            // String decoder's "expected to decode String but found number".
            throw DecodingError.dataCorruptedError(in: single, debugDescription: "a number outside the range of a 64-bit float")
        }
    }

    /// Encodes the value.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let values): try container.encode(values)
        case .object:
            try container.encode(Dictionary(uniqueKeysWithValues: objectMembers.map { ($0.0, $0.1) }))
        }
    }

    private var objectMembers: [(String, JSONValue)] {
        if case .object(let members) = self { return members }
        return []
    }
}
