/// How file-based parameter sources bring tensors into memory.
public enum ParameterLoading: Sendable {
    /// Memory-map the files (fast, shares the page cache; the files must not change while in use).
    case memoryMapped
    /// Copy the values into memory owned by Anvil (safe if files are rewritten later).
    case copied

    func finish(_ data: ParameterData) -> ParameterData {
        switch self {
        case .memoryMapped: return data
        case .copied: return ParameterData(data.values)
        }
    }
}
