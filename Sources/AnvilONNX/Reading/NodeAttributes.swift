/// A node's attributes by name, read with the type each one must have (`onnx.helper.get_attribute_value`):
/// a wrong type or a missing required attribute is an ``ImportFailure`` naming it.
struct NodeAttributes {
    private let byName: [String: Onnx_AttributeProto]

    /// The attributes of `node`.
    init(_ node: Onnx_NodeProto) {
        var byName: [String: Onnx_AttributeProto] = [:]
        for attribute in node.attribute { byName[attribute.name] = attribute }
        self.byName = byName
    }

    /// Whether attribute `name` is present.
    func has(_ name: String) -> Bool { byName[name] != nil }

    private func typed(_ name: String, _ type: Onnx_AttributeProto.AttributeType, _ label: String) throws -> Onnx_AttributeProto? {
        guard let attribute = byName[name] else { return nil }
        // Older files leave the type unset: accept the field that holds a value.
        if attribute.type != type && attribute.type != .undefined {
            throw ImportFailure("attribute '\(name)' must be \(label), not \(attribute.type)")
        }
        return attribute
    }

    /// An INT attribute.
    func int(_ name: String) throws -> Int? {
        try typed(name, .int, "an int").map { Int($0.i) }
    }

    /// An INT attribute or `fallback`.
    func int(_ name: String, _ fallback: Int) throws -> Int { try int(name) ?? fallback }

    /// A FLOAT attribute (widened to Double like Python's float).
    func float(_ name: String) throws -> Double? {
        try typed(name, .float, "a float").map { Double($0.f) }
    }

    /// A FLOAT attribute or `fallback`.
    func float(_ name: String, _ fallback: Double) throws -> Double { try float(name) ?? fallback }

    /// A STRING attribute (UTF-8).
    func string(_ name: String) throws -> String? {
        try typed(name, .string, "a string").map { String(decoding: $0.s, as: UTF8.self) }
    }

    /// A STRING attribute or `fallback`.
    func string(_ name: String, _ fallback: String) throws -> String { try string(name) ?? fallback }

    /// An INTS attribute.
    func ints(_ name: String) throws -> [Int]? {
        try typed(name, .ints, "a list of ints").map { $0.ints.map { Int(clamping: $0) } }
    }

    /// A FLOATS attribute.
    func floats(_ name: String) throws -> [Double]? {
        try typed(name, .floats, "a list of floats").map { $0.floats.map { Double($0) } }
    }

    /// A TENSOR attribute.
    func tensor(_ name: String) throws -> Onnx_TensorProto? {
        try typed(name, .tensor, "a tensor").map(\.t)
    }

    /// The names of the attributes present, sorted.
    var names: [String] { byName.keys.sorted() }
}
