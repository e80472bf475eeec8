/// The body of `GET /v2/health/live` (`{"live": true}`) and `/v2/health/ready` (`{"ready": …}`).
public struct HealthResponse: Codable, Sendable, Equatable {
    /// Set for the liveness answer.
    public var live: Bool?
    /// Set for the readiness answer.
    public var ready: Bool?

    /// A health answer.
    public init(live: Bool? = nil, ready: Bool? = nil) {
        self.live = live
        self.ready = ready
    }
}
