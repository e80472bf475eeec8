/// One element of `POST /v2/repository/index`'s answer: `{"name", "version"?, "state", "reason"}`.
public struct RepositoryIndexEntry: Codable, Sendable, Equatable {
    /// The model's name (its folder in the repository).
    public var name: String
    /// `"READY"` (served) or `"UNAVAILABLE"`.
    public var state: String
    /// Why it is unavailable: `"unloaded"`, `"not loaded"`, or its load error; `""` when ready.
    public var reason: String

    /// An index entry.
    public init(name: String, state: String, reason: String) {
        self.name = name
        self.state = state
        self.reason = reason
    }
}
