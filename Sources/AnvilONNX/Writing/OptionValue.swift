import Anvil

/// A value that can be a model-file layer option (Int, Double, Bool, String, arrays, optionals,
/// JSON); `nil` leaves the option out, as the Python writer does for None.
protocol OptionValue {
    /// The option's JSON, or `nil` to leave it out.
    var optionJSON: JSONValue? { get }
}

extension Int: OptionValue {
    var optionJSON: JSONValue? { .int(self) }
}

extension Double: OptionValue {
    var optionJSON: JSONValue? { .double(self) }
}

extension Bool: OptionValue {
    var optionJSON: JSONValue? { .bool(self) }
}

extension String: OptionValue {
    var optionJSON: JSONValue? { .string(self) }
}

extension JSONValue: OptionValue {
    var optionJSON: JSONValue? { self }
}

extension Optional: OptionValue where Wrapped: OptionValue {
    var optionJSON: JSONValue? {
        switch self {
        case .none: return nil
        case .some(let value): return value.optionJSON
        }
    }
}

extension Array: OptionValue where Element: OptionValue {
    /// An array; `nil` elements are written as null (an open size).
    var optionJSON: JSONValue? { .array(map { $0.optionJSON ?? .null }) }
}

/// An activation for the model file: a plain name, or an object with constants (the Python
/// writer's `activation_json`).
func activationJSON(_ name: String, _ constants: KeyValuePairs<String, Double> = [:]) -> JSONValue {
    if constants.isEmpty { return .string(name) }
    return .object([("type", .string(name))] + constants.map { ($0.key, JSONValue.double($0.value)) })
}
