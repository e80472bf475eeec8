/// The body of `GET /v2/models/{name}/ready`: `{"name": …, "ready": …}`.
public struct ModelReadyResponse: Codable, Sendable, Equatable {
    /// The model's name.
    public var name: String
    /// Whether it takes inference requests.
    public var ready: Bool

    /// A readiness answer.
    public init(name: String, ready: Bool) {
        self.name = name
        self.ready = ready
    }
}
