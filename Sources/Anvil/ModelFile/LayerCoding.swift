/// Converts layers to and from the objects of a model file (`docs/model-format.md`) through
/// ``LayerRegistry``: each layer reads and writes its own options (``ModelFileCodable``).
enum LayerCoding {
    /// Builds the layer described by `fields` (its `type` and options), named `name`.
    static func decode(_ fields: JSONFields, name: String) throws -> any Layer {
        let type = try fields.string("type")
        guard let layerType = LayerRegistry.byFileTypeName[type] else {
            throw AnvilError(.invalidFile, "\(fields.context): unknown layer type '\(type)'")
        }
        return try layerType.init(fields: fields, name: name)
    }

    /// The `type` a model file gives `layer`; throws for custom layers, which model files cannot describe.
    static func fileTypeName(of layer: any Layer, name: String) throws -> String {
        guard let codable = layer as? any ModelFileCodable else {
            throw AnvilError(.invalidOption, "layer '\(name)' has custom type \(layer.typeName), which model files cannot describe")
        }
        return type(of: codable).fileTypeName
    }

    /// The type and options of a built-in layer as model-file members (without name and
    /// inputs); throws for custom layers, which model files cannot describe.
    static func encode(_ layer: any Layer, name: String) throws -> [(String, JSONValue)] {
        let type = try fileTypeName(of: layer, name: name)
        let members = [("type", JSONValue.string(type))] + (try (layer as! any ModelFileCodable).encodeFields())
        // JSON has no NaN or infinity (serialized() would write null, which does not read back).
        if let (key, _) = members.first(where: { $0.1.holdsNonFiniteNumber }) {
            throw AnvilError(.invalidOption, "layer '\(name)': field '\(key)' holds NaN or infinity, which a model file (JSON) cannot store")
        }
        return members
    }
}
