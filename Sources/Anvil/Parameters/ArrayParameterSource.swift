/// Parameter tensors held in memory, keyed by tensor name (`conv1_W`, `conv1_b`, ...).
public struct ArrayParameterSource: ParameterSource {
    /// The tensors.
    public var tensors: [String: [Float]]

    /// Creates a source from named arrays.
    public init(_ tensors: [String: [Float]]) {
        self.tensors = tensors
    }

    /// Returns the named array.
    public func data(for request: ParameterRequest) throws -> ParameterData {
        guard let values = tensors[request.tensorName] else {
            throw AnvilError(.missingParameter, "no tensor '\(request.tensorName)' for \(request)")
        }
        return ParameterData(values)
    }

    /// The keys.
    public var tensorNames: [String]? { Array(tensors.keys) }
}
