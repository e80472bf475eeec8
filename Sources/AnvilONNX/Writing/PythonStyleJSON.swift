import Anvil

/// JSON text exactly as the Python writer formats a model file (writer.py's `format_json`,
/// "nested" style, on `json.dumps`): two-space indentation, arrays of scalars on one line, small
/// objects two levels deep or more on one line, Python's float repr and ASCII escapes. So
/// `anvil convert` writes the same bytes the Python converter wrote, and committed fixtures can
/// be rebuilt byte for byte.
enum PythonStyleJSON {
    /// The document as the Python writer's "nested" layout.
    static func format(_ value: JSONValue, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
        case .object(let members):
            if members.isEmpty { return "{}" }
            let flat = dumps(value)
            let nested = members.contains { _, v in
                if case .object = v { return true }
                if case .array(let items) = v { return items.contains { if case .object = $0 { return true }; if case .array = $0 { return true }; return false } }
                return false
            }
            if indent.count >= 4 && flat.unicodeScalars.count <= 110 && !nested { return flat }
            return "{\n" + members.map { "\(inner)\(quote($0.0)): \(format($0.1, indent: inner))" }.joined(separator: ",\n") + "\n\(indent)}"
        case .array(let items):
            if items.allSatisfy({ if case .object = $0 { return false }; if case .array = $0 { return false }; return true }) {
                return dumps(value)
            }
            return "[\n" + items.map { inner + format($0, indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        default:
            return dumps(value)
        }
    }

    /// Python's `json.dumps` with its default separators.
    static func dumps(_ value: JSONValue) -> String {
        switch value {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return pythonRepr(d)
        case .string(let s): return quote(s)
        case .array(let items): return "[" + items.map(dumps).joined(separator: ", ") + "]"
        case .object(let members): return "{" + members.map { "\(quote($0.0)): \(dumps($0.1))" }.joined(separator: ", ") + "}"
        }
    }

    /// Python's `repr(float)`: the shortest round-tripping digits, exponent form below 1e-4 and
    /// from 1e16, always with a decimal point or exponent.
    static func pythonRepr(_ d: Double) -> String {
        if d.isNaN { return "NaN" }
        if d.isInfinite { return d > 0 ? "Infinity" : "-Infinity" }
        if d == 0 { return d.sign == .minus ? "-0.0" : "0.0" }
        // Swift's description is also the shortest round-trip representation; only the layout differs.
        var text = "\(abs(d))"
        var digits: String, exponent: Int
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            exponent = Int(text[text.index(after: e)...])!
            text = String(text[..<e])
        } else {
            exponent = 0
        }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        let whole = String(parts[0]), fraction = parts.count > 1 ? String(parts[1]) : ""
        digits = whole + fraction
        exponent += whole.count - 1
        // Normalise: strip leading zeros (0.001 → digits "1", exponent -3) and trailing zeros.
        while digits.hasPrefix("0") && digits.count > 1 {
            digits.removeFirst()
            exponent -= 1
        }
        while digits.hasSuffix("0") && digits.count > 1 { digits.removeLast() }
        let sign = d < 0 ? "-" : ""
        if exponent < -4 || exponent >= 16 {
            let mantissa = digits.count == 1 ? digits : "\(digits.first!).\(digits.dropFirst())"
            return "\(sign)\(mantissa)e\(exponent < 0 ? "-" : "+")\(abs(exponent) < 10 ? "0" : "")\(abs(exponent))"
        }
        if exponent < 0 { return "\(sign)0.\(String(repeating: "0", count: -exponent - 1))\(digits)" }
        if digits.count <= exponent + 1 { return "\(sign)\(digits)\(String(repeating: "0", count: exponent + 1 - digits.count)).0" }
        let point = digits.index(digits.startIndex, offsetBy: exponent + 1)
        return "\(sign)\(digits[..<point]).\(digits[point...])"
    }

    /// A JSON string as Python writes it (ensure_ascii).
    static func quote(_ text: String) -> String {
        var result = "\""
        for unit in text.utf16 {
            switch unit {
            case 0x22: result += "\\\""
            case 0x5C: result += "\\\\"
            case 0x0A: result += "\\n"
            case 0x0D: result += "\\r"
            case 0x09: result += "\\t"
            case 0x08: result += "\\b"
            case 0x0C: result += "\\f"
            case 0x20 ..< 0x7F: result.unicodeScalars.append(Unicode.Scalar(unit)!)
            default: result += "\\u" + String(repeating: "0", count: 4 - String(unit, radix: 16).count) + String(unit, radix: 16)
            }
        }
        return result + "\""
    }
}
