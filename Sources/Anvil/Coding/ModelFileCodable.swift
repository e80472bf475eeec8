/// A layer that model files (`docs/model-format.md`) can describe: it names its type in the
/// file and reads and writes its own options. Each built-in layer conforms in its own file;
/// ``LayerRegistry/builtIn`` lists them.
///
/// The file type name is declared, never derived from the Swift type name, so renaming a
/// Swift type cannot change the file format.
protocol ModelFileCodable: Layer {
    /// The `type` written in model files, e.g. `"Convolution"`.
    static var fileTypeName: String { get }
    /// Builds the layer from its object in a model file (the `type`, `name` and `inputs`
    /// members are read by the caller); errors name the layer and the field via `fields.context`.
    init(fields: JSONFields, name: String) throws
    /// The layer's options as model-file members, in the order they are written (without
    /// `name`, `type` and `inputs`).
    func encodeFields() throws -> [(String, JSONValue)]
}
