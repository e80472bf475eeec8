/// One parameter tensor a layer needs: its kind and element count.
public struct ParameterSpec: Hashable, Sendable {
    /// What the tensor holds.
    public var kind: ParameterKind
    /// How many float32 values it has.
    public var count: Int

    /// Creates a specification.
    public init(_ kind: ParameterKind, count: Int) {
        self.kind = kind
        self.count = count
    }
}
