/// The optional body of `POST /v2/repository/index` (`{"ready"?: bool}`) and of
/// `/v2/repository/models/{name}/load|unload` (`{"parameters"?: {...}}`).
public struct RepositoryRequest: Codable, Sendable, Equatable {
    /// Index: list only the models that are ready.
    public var ready: Bool?
    /// Load and unload parameters: names only (`config` and `file:` overrides are refused;
    /// `unload_dependents` is accepted and has nothing to do).
    public var parameters: [String: AnyParameter]?

    /// A parameter value of any JSON type; only its presence matters.
    public struct AnyParameter: Codable, Sendable, Equatable {
        /// A parameter.
        public init() {}

        /// Accepts any JSON value.
        public init(from decoder: any Decoder) throws { _ = try decoder.singleValueContainer() }

        /// Writes `null`.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        }
    }

    /// A repository request.
    public init(ready: Bool? = nil, parameters: [String: AnyParameter]? = nil) {
        self.ready = ready
        self.parameters = parameters
    }
}
