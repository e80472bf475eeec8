/// A one-line message for a request body JSONDecoder refused, naming the field at fault.
extension DecodingError {
    /// E.g. `inputs[0].shape: expected Array<Int>, found a string`.
    var protocolMessage: String {
        func path(_ codingPath: [any CodingKey]) -> String {
            var text = ""
            for key in codingPath {
                if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
            }
            return text.isEmpty ? "the body" : text
        }
        switch self {
        case .keyNotFound(let key, let context):
            let parent = path(context.codingPath)
            return "\(parent == "the body" ? "" : parent + ": ")missing field '\(key.stringValue)'"
        case .typeMismatch(let type, let context):
            return "\(path(context.codingPath)): expected \(type) (\(context.debugDescription))"
        case .valueNotFound(let type, let context):
            return "\(path(context.codingPath)): expected \(type), found null"
        case .dataCorrupted(let context):
            let underlying = context.underlyingError.map { " (\($0))" } ?? ""
            return "\(path(context.codingPath)): \(context.debugDescription)\(underlying)"
        @unknown default:
            return "\(self)"
        }
    }
}
