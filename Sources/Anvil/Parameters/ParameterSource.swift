/// Where `compile` gets parameter tensors from.
///
/// Anvil ships sources for arrays in memory (``ArrayParameterSource``), a directory with one
/// file per tensor (``DirectoryParameterSource``), and one blob with an index of offsets
/// (``BlobParameterSource``); any closure works too (``ClosureParameterSource``).
public protocol ParameterSource {
    /// Returns the tensor for `request`; throws when it is missing or cannot be read.
    func data(for request: ParameterRequest) throws -> ParameterData
    /// Every tensor name the source holds, so `compile` can reject tensors no layer used;
    /// `nil` when the source cannot list them.
    var tensorNames: [String]? { get }
    /// The name under which the source holds the tensor for `request` (default: `request.tensorName`).
    func tensorName(for request: ParameterRequest) -> String
}

extension ParameterSource {
    /// `request.tensorName`.
    public func tensorName(for request: ParameterRequest) -> String { request.tensorName }
}
