import Anvil
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// `anvil serve`: serves models over HTTP with the KServe Open Inference Protocol v2 — health,
/// metadata and inference (JSON and the binary tensor data extension) — each model's requests
/// batched by its ``Runner``, Prometheus metrics at `/metrics`, a graceful shutdown on SIGTERM
/// or SIGINT (new requests refused, those in flight answered).
///
/// ```swift
/// let mnist = try ServedModel(name: "mnist", model: model, maximumBatch: 16)
/// let server = try InferenceServer(models: [mnist], configuration: ServeConfiguration(port: 0))
/// Task { try await server.run() }
/// print(try await server.port())   // the port picked
/// ```
public final class InferenceServer: Sendable {
    /// The models served, by name.
    public let models: [ServedModel]
    /// Where it listens, and its limits.
    public let configuration: ServeConfiguration
    private let logger: Logger
    private let metrics: ServerMetrics
    private let state = Mutex(State())

    private struct State {
        var started = false
        var port: Int?
        var ended: (any Error)?
        var waiters: [CheckedContinuation<Int, any Error>] = []
        var group: ServiceGroup?
        var ready = false
        var shutdownRequested = false
    }

    /// A server for `models` (unique names); logs one line per request to `logger` (info for
    /// inference and metadata, debug for health probes and scrapes).
    public init(models: [ServedModel], configuration: ServeConfiguration = ServeConfiguration(),
                logger: Logger = Logger(label: "anvil.serve")) throws {
        guard !models.isEmpty else { throw AnvilError(.invalidOption, "serve: no model to serve") }
        var names = Set<String>()
        for model in models where !names.insert(model.name).inserted {
            throw AnvilError(.invalidOption, "serve: two models are named '\(model.name)'; give one another --name")
        }
        guard (0 ... 65535).contains(configuration.port) else {
            throw AnvilError(.invalidOption, "serve: port \(configuration.port) is not between 0 and 65535")
        }
        guard configuration.maximumBodyBytes >= 1 else {
            throw AnvilError(.invalidOption, "serve: the body limit must be at least 1 byte, got \(configuration.maximumBodyBytes)")
        }
        guard configuration.readTimeout > .zero, configuration.idleTimeout >= configuration.readTimeout else {
            throw AnvilError(.invalidOption, "serve: the read timeout (\(configuration.readTimeout)) must be positive and at most the idle timeout (\(configuration.idleTimeout))")
        }
        self.models = models
        self.configuration = configuration
        self.logger = logger
        metrics = ServerMetrics(models: models)
    }

    /// Runs until shut down (``shutdown()``, or SIGTERM/SIGINT when `handlingSignals`); in-flight
    /// requests are answered first. Throws if the address cannot be bound. Runs once.
    public func run(handlingSignals: Bool = true) async throws {
        let alreadyStarted = state.withLock { state in
            defer { state.started = true }
            return state.started
        }
        guard !alreadyStarted else { throw AnvilError(.invalidOption, "serve: a server runs once") }
        let routes = InferenceRoutes(models: Dictionary(uniqueKeysWithValues: models.map { ($0.name, $0) }), metrics: metrics,
                                     bodyReader: BodyReader(maximumBytes: configuration.maximumBodyBytes, timeout: configuration.readTimeout),
                                     isReady: { [self] in isReady })
        let application = Application(
            router: routes.router(),
            server: .http1(configuration: .init(idleTimeout: .nanoseconds(Self.nanoseconds(configuration.idleTimeout)))),
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port), serverName: "anvil"),
            onServerRunning: { [self] channel in
                let port = channel.localAddress?.port ?? 0
                let waiters = state.withLock { state in
                    state.port = port
                    state.ready = !state.shutdownRequested
                    defer { state.waiters = [] }
                    return state.waiters
                }
                logger.info("serving", metadata: ["port": "\(port)", "models": "\(models.map(\.name).joined(separator: ","))"])
                for waiter in waiters { waiter.resume(returning: port) }
            },
            logger: logger
        )
        let readiness = ReadinessService { [self] in
            state.withLock { $0.ready = false }
            logger.info("shutting down: finishing requests in flight")
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: application), .init(service: readiness)],
            gracefulShutdownSignals: handlingSignals ? [.sigterm, .sigint] : [],
            logger: logger
        ))
        let shutdownFirst = state.withLock { state in
            state.group = group
            return state.shutdownRequested
        }
        if shutdownFirst { await group.triggerGracefulShutdown() }
        var failure: (any Error)?
        do {
            try await group.run()
        } catch {
            failure = error
        }
        let waiters = state.withLock { state in
            state.ready = false
            state.ended = failure ?? AnvilError(.invalidOption, "serve: the server stopped")
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(throwing: failure ?? AnvilError(.invalidOption, "serve: the server stopped before it listened")) }
        if let failure { throw failure }
        logger.info("stopped")
    }

    /// The port the server listens on, once it does (the one picked, for port 0); throws if the
    /// server stopped or failed to bind first.
    public func port() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLock { state -> Result<Int, any Error>? in
                if let port = state.port { return .success(port) }
                if let ended = state.ended { return .failure(ended) }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// Whether `/v2/health/ready` says ready: listening and not shutting down.
    public var isReady: Bool { state.withLock { $0.ready } }

    /// Begins a graceful shutdown: readiness turns false, the listener closes, requests in flight
    /// are answered, then ``run(handlingSignals:)`` returns.
    public func shutdown() async {
        let group = state.withLock { state in
            state.shutdownRequested = true
            return state.group
        }
        await group?.triggerGracefulShutdown()
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
