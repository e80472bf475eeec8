/// Typed, checked access to the members of a JSON object; every failure names the object
/// (`layer 'conv1'`) and the field.
struct JSONFields {
    let value: JSONValue
    let context: String

    init(_ value: JSONValue, context: String) throws {
        guard case .object = value else { throw AnvilError(.invalidFile, "\(context) must be a JSON object") }
        self.value = value
        self.context = context
    }

    func has(_ key: String) -> Bool { value[key] != nil }

    private func fail(_ key: String, _ expected: String) -> AnvilError {
        AnvilError(.invalidFile, "\(context): field '\(key)' must be \(expected)")
    }

    func string(_ key: String) throws -> String {
        guard let member = value[key] else { throw AnvilError(.invalidFile, "\(context): missing field '\(key)'") }
        guard case .string(let text) = member else { throw fail(key, "a string") }
        return text
    }

    func string(_ key: String, default fallback: String) throws -> String {
        has(key) ? try string(key) : fallback
    }

    func int(_ key: String) throws -> Int {
        guard let member = value[key] else { throw AnvilError(.invalidFile, "\(context): missing field '\(key)'") }
        guard case .int(let number) = member else { throw fail(key, "an integer") }
        return number
    }

    func int(_ key: String, default fallback: Int) throws -> Int {
        has(key) ? try int(key) : fallback
    }

    /// An element type by name (`"float32"`, `"int64"`, ...), or `fallback` when absent.
    func elementType(_ key: String, default fallback: ElementType) throws -> ElementType {
        has(key) ? try choice(key) : fallback
    }

    /// A case of `Choice` by its raw name; the error lists every name.
    func choice<Choice: RawRepresentable & CaseIterable>(_ key: String) throws -> Choice where Choice.RawValue == String {
        let name = try string(key)
        guard let value = Choice(rawValue: name) else {
            let choices = Choice.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw AnvilError(.invalidFile, "\(context): field '\(key)' must be one of \(choices), got \"\(name)\"")
        }
        return value
    }

    /// A number (integer or not), or `fallback` when absent.
    func double(_ key: String, default fallback: Double) throws -> Double {
        guard let member = value[key] else { return fallback }
        switch member {
        case .int(let number): return Double(number)
        case .double(let number): return number
        default: throw fail(key, "a number")
        }
    }

    func float(_ key: String, default fallback: Float) throws -> Float {
        guard let member = value[key] else { return fallback }
        switch member {
        case .int(let number): return Float(number)
        case .double(let number): return Float(number)
        default: throw fail(key, "a number")
        }
    }

    func bool(_ key: String, default fallback: Bool) throws -> Bool {
        guard let member = value[key] else { return fallback }
        guard case .bool(let flag) = member else { throw fail(key, "true or false") }
        return flag
    }

    func array(_ key: String) throws -> [JSONValue] {
        guard let member = value[key] else { throw AnvilError(.invalidFile, "\(context): missing field '\(key)'") }
        guard case .array(let values) = member else { throw fail(key, "an array") }
        return values
    }

    func strings(_ key: String) throws -> [String] {
        try array(key).map { element in
            guard case .string(let text) = element else { throw fail(key, "an array of strings") }
            return text
        }
    }

    func ints(_ key: String, count: Int) throws -> [Int] {
        let values = try array(key)
        guard values.count == count else { throw fail(key, "an array of \(count) integers") }
        return try values.map { element in
            guard case .int(let number) = element else { throw fail(key, "an array of \(count) integers") }
            return number
        }
    }

    /// An array of integers whose length is in `counts`.
    func intArray(_ key: String, counts: ClosedRange<Int>) throws -> [Int] {
        let values = try array(key)
        let what = "an array of \(counts.lowerBound) to \(counts.upperBound) integers"
        guard counts.contains(values.count) else { throw fail(key, what) }
        return try values.map { element in
            guard case .int(let number) = element else { throw fail(key, what) }
            return number
        }
    }

    /// An array of integers whose length is in `counts`; every element but the last may be
    /// `null` (an open dimension: `[null, null, 3]`, `[null, 8]`).
    /// With `lastMayBeOpen`, every element may be `null`.
    func openIntArray(_ key: String, counts: ClosedRange<Int>, lastMayBeOpen: Bool = false) throws -> [Int?] {
        let values = try array(key)
        let what = "an array of \(counts.lowerBound) to \(counts.upperBound) integers (\(lastMayBeOpen ? "any" : "all but the last") may be null)"
        guard counts.contains(values.count) else { throw fail(key, what) }
        return try values.enumerated().map { index, element in
            switch element {
            case .int(let number): return number
            case .null where lastMayBeOpen || index < values.count - 1: return nil
            default: throw fail(key, what)
            }
        }
    }

    func pair(_ key: String) throws -> (Int, Int) {
        let values = try ints(key, count: 2)
        return (values[0], values[1])
    }

    func pair(_ key: String, default fallback: (Int, Int)) throws -> (Int, Int) {
        has(key) ? try pair(key) : fallback
    }

    func floatPair(_ key: String) throws -> (Float, Float) {
        let numbers = try floats(key, count: 2)
        return (numbers[0], numbers[1])
    }

    /// An array of exactly `count` numbers.
    func floats(_ key: String, count: Int) throws -> [Float] {
        let values = try array(key)
        let what = "an array of \(count) numbers"
        let numbers: [Float] = try values.map { element in
            switch element {
            case .int(let number): return Float(number)
            case .double(let number): return Float(number)
            default: throw fail(key, what)
            }
        }
        guard numbers.count == count else { throw fail(key, what) }
        return numbers
    }

    func object(_ key: String) throws -> JSONFields {
        guard let member = value[key] else { throw AnvilError(.invalidFile, "\(context): missing field '\(key)'") }
        return try JSONFields(member, context: "\(context), field '\(key)'")
    }

    func padding(_ key: String, default fallback: Padding) throws -> Padding {
        guard let member = value[key] else { return fallback }
        switch member {
        case .string("same"): return .same
        case .string("valid"): return .valid
        case .array:
            let pads = try ints(key, count: 4)
            return .explicit(top: pads[0], left: pads[1], bottom: pads[2], right: pads[3])
        default: throw fail(key, "\"same\", \"valid\" or [top, left, bottom, right]")
        }
    }

    func activation(_ key: String, default fallback: ActivationFunction) throws -> ActivationFunction {
        guard let member = value[key] else { return fallback }
        let name: String
        var constants: JSONFields? = nil
        switch member {
        case .string(let text): name = text
        case .object:
            let fields = try JSONFields(member, context: "\(context), field '\(key)'")
            name = try fields.string("type")
            constants = fields
        default: throw fail(key, "an activation name or object")
        }
        func constant(_ field: String, _ fallback: Float) throws -> Float { try constants?.float(field, default: fallback) ?? fallback }
        switch name {
        case "none": return .none
        case "relu": return .relu
        case "relu6": return .relu6
        case "sigmoid": return .sigmoid
        case "tanh": return .tanh
        case "selu": return .selu
        case "hardSwish": return .hardSwish
        case "silu": return .silu
        case "gelu": return .gelu
        case "geluTanh": return .geluTanh
        case "mish": return .mish
        case "softplus": return .softplus
        case "softsign": return .softsign
        case "negative": return .negative
        case "absolute": return .absolute
        case "squareRoot": return .squareRoot
        case "exponential": return .exponential
        case "logarithm": return .logarithm
        case "reciprocal": return .reciprocal
        case "erf": return .erf
        case "sin": return .sin
        case "cos": return .cos
        case "tan": return .tan
        case "asin": return .asin
        case "acos": return .acos
        case "atan": return .atan
        case "sinh": return .sinh
        case "cosh": return .cosh
        case "asinh": return .asinh
        case "acosh": return .acosh
        case "atanh": return .atanh
        case "floor": return .floor
        case "ceil": return .ceil
        case "round": return .round
        case "sign": return .sign
        case "celu": return .celu(alpha: try constant("alpha", 1))
        case "thresholdedRelu": return .thresholdedRelu(alpha: try constant("alpha", 1))
        case "clip": return .clip(min: try constant("min", -.greatestFiniteMagnitude), max: try constant("max", .greatestFiniteMagnitude))
        case "leakyRelu": return .leakyRelu(alpha: try constant("alpha", 0.01))
        case "elu": return .elu(alpha: try constant("alpha", 1))
        case "hardSigmoid": return .hardSigmoid(alpha: try constant("alpha", 0.2), beta: try constant("beta", 0.5))
        case "linear": return .linear(a: try constant("a", 1), b: try constant("b", 0))
        default: throw AnvilError(.invalidFile, "\(context): unknown activation '\(name)'")
        }
    }
}
