/// How the option types layers share are written in model files (read back by ``JSONFields``).
extension JSONValue {
    /// A `(height, width)` pair as `[height, width]`.
    static func pair(_ pair: (Int, Int)) -> JSONValue { .array([.int(pair.0), .int(pair.1)]) }

    /// A pair of floats as `[height, width]`.
    static func pair(_ pair: (Float, Float)) -> JSONValue { .array([.number(pair.0), .number(pair.1)]) }

    /// Padding as `"same"`, `"valid"` or `[top, left, bottom, right]`.
    static func padding(_ padding: Padding) -> JSONValue {
        switch padding {
        case .same: return .string("same")
        case .valid: return .string("valid")
        case .explicit(let top, let left, let bottom, let right): return .array([.int(top), .int(left), .int(bottom), .int(right)])
        }
    }

    /// An activation as a name, or an object with its constants.
    static func activation(_ function: ActivationFunction) -> JSONValue {
        func object(_ type: String, _ constants: [(String, Float)]) -> JSONValue {
            .object([("type", .string(type))] + constants.map { ($0.0, .number($0.1)) })
        }
        switch function {
        case .clip(let lo, let hi): return object("clip", [("min", lo), ("max", hi)])
        case .leakyRelu(let alpha): return object("leakyRelu", [("alpha", alpha)])
        case .elu(let alpha): return object("elu", [("alpha", alpha)])
        case .hardSigmoid(let alpha, let beta): return object("hardSigmoid", [("alpha", alpha), ("beta", beta)])
        case .linear(let a, let b): return object("linear", [("a", a), ("b", b)])
        case .celu(let alpha): return object("celu", [("alpha", alpha)])
        case .thresholdedRelu(let alpha): return object("thresholdedRelu", [("alpha", alpha)])
        default: return .string(function.description)
        }
    }

    /// Whether a NaN or infinite number occurs anywhere in the value.
    var holdsNonFiniteNumber: Bool {
        switch self {
        case .double(let value): return !value.isFinite
        case .array(let values): return values.contains { $0.holdsNonFiniteNumber }
        case .object(let members): return members.contains { $0.1.holdsNonFiniteNumber }
        default: return false
        }
    }
}
