import ServiceLifecycle

/// A service whose only work is to hear the graceful shutdown first (services stop in reverse
/// order, and it comes after the HTTP server): readiness turns false while in-flight requests
/// finish, so a load balancer stops sending new ones.
struct ReadinessService: Service {
    /// Called once shutdown begins.
    let onShutdown: @Sendable () -> Void

    func run() async throws {
        try? await gracefulShutdown()
        onShutdown()
    }
}
