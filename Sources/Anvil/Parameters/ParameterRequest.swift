/// What `compile` asks a parameter source for: one tensor of one layer.
public struct ParameterRequest: Hashable, Sendable, CustomStringConvertible {
    /// The layer's name (given or automatic).
    public var layer: String
    /// The kind of tensor.
    public var kind: ParameterKind
    /// The number of float32 values expected.
    public var count: Int

    /// Creates a request.
    public init(layer: String, kind: ParameterKind, count: Int) {
        self.layer = layer
        self.kind = kind
        self.count = count
    }

    /// The conventional tensor name, `<layer>_<suffix>` (`conv1_W`, `conv1_b`).
    public var tensorName: String { "\(layer)_\(kind.suffix)" }

    /// `conv1_W (weights of conv1, 800 values)`.
    public var description: String { "\(tensorName) (\(kind.rawValue) of layer '\(layer)', \(count) values)" }
}
