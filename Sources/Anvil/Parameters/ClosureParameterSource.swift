/// A parameter source backed by a closure `(layer name, count, kind) -> ParameterData`,
/// the way Forge's `compile` takes its weights. It cannot list its tensors, so unused
/// tensors are not detected.
public struct ClosureParameterSource: ParameterSource {
    /// The closure.
    public let load: (String, Int, ParameterKind) throws -> ParameterData

    /// Wraps a closure.
    public init(_ load: @escaping (String, Int, ParameterKind) throws -> ParameterData) {
        self.load = load
    }

    /// Calls the closure.
    public func data(for request: ParameterRequest) throws -> ParameterData {
        try load(request.layer, request.count, request.kind)
    }

    /// Unknown.
    public var tensorNames: [String]? { nil }
}
