import Anvil
import Foundation
import NIOConcurrencyHelpers
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization
import UnixSignals

/// `anvil serve`: serves models with the KServe Open Inference Protocol v2 over HTTP — health,
/// metadata and inference (JSON and the binary tensor data extension) — and, given a gRPC port,
/// over gRPC (`inference.GRPCInferenceService`), with Triton's model configuration, statistics
/// and model repository extensions on both; each model's requests batched by its ``Runner``,
/// Prometheus metrics at `/metrics`, a graceful shutdown on SIGTERM or SIGINT (new requests
/// refused, those in flight answered).
///
/// ```swift
/// let mnist = try ServedModel(name: "mnist", model: model, maximumBatch: 16)
/// let server = try InferenceServer(models: [mnist], configuration: ServeConfiguration(port: 0))
/// Task { try await server.run() }
/// print(try await server.port())   // the port picked
/// ```
public final class InferenceServer: Sendable {
    /// The models served now (those given, and the repository's that are loaded), by name.
    public var models: [ServedModel] { registry.models }
    /// Where it listens, and its limits.
    public let configuration: ServeConfiguration
    private let logger: Logger
    private let metrics: ServerMetrics
    private let registry: ModelRegistry
    private let state = NIOLockedValueBox(State())

    private struct State {
        var started = false
        var port: Int?
        var grpcPort: Int?
        var grpcWaiters: [CheckedContinuation<Int, any Error>] = []
        var ended: (any Error)?
        var waiters: [CheckedContinuation<Int, any Error>] = []
        var group: ServiceGroup?
        var ready = false
        var shutdownRequested = false
    }

    /// A server for `models` (unique names) and every model of `repository` (loaded now; one that
    /// does not load is an error); logs one line per request to `logger` (info for inference and
    /// metadata, debug for health probes and scrapes).
    public init(models: [ServedModel], repository: ModelRepository? = nil, configuration: ServeConfiguration = ServeConfiguration(),
                logger: Logger = Logger(label: "anvil.serve")) throws {
        guard !models.isEmpty || repository != nil else { throw AnvilError(.invalidOption, "serve: no model to serve") }
        var names = Set<String>()
        var all = models
        for name in repository?.names() ?? [] {
            do {
                all.append(try repository!.load(name))
            } catch let error as ProtocolError {
                throw AnvilError(.invalidOption, "serve: \(error.message)")
            }
            logger.info("loaded", metadata: ["model": "\(name)", "from": "the model repository"])
        }
        for model in all where !names.insert(model.name).inserted {
            throw AnvilError(.invalidOption, "serve: two models are named '\(model.name)'; give one another --name")
        }
        for port in [configuration.port] + (configuration.grpcPort.map { [$0] } ?? []) where !(0 ... 65535).contains(port) {
            throw AnvilError(.invalidOption, "serve: port \(port) is not between 0 and 65535")
        }
        guard configuration.maximumMessageBytes >= 1 else {
            throw AnvilError(.invalidOption, "serve: the gRPC message limit must be at least 1 byte, got \(configuration.maximumMessageBytes)")
        }
        guard configuration.maximumBodyBytes >= 1 else {
            throw AnvilError(.invalidOption, "serve: the body limit must be at least 1 byte, got \(configuration.maximumBodyBytes)")
        }
        guard configuration.readTimeout > .zero, configuration.idleTimeout >= configuration.readTimeout else {
            throw AnvilError(.invalidOption, "serve: the read timeout (\(configuration.readTimeout)) must be positive and at most the idle timeout (\(configuration.idleTimeout))")
        }
        self.configuration = configuration
        self.logger = logger
        registry = try ModelRegistry(models: all, repository: repository)
        metrics = ServerMetrics(models: registry)
    }

    /// Runs until shut down (``shutdown()``, or SIGTERM/SIGINT when `handlingSignals`); in-flight
    /// requests are answered first. Throws if the address cannot be bound. Runs once.
    public func run(handlingSignals: Bool = true) async throws {
        let alreadyStarted = state.withLockedValue { state in
            defer { state.started = true }
            return state.started
        }
        guard !alreadyStarted else { throw AnvilError(.invalidOption, "serve: a server runs once") }
        let routes = InferenceRoutes(registry: registry, metrics: metrics,
                                     bodyReader: BodyReader(maximumBytes: configuration.maximumBodyBytes, timeout: configuration.readTimeout),
                                     isReady: { [self] in isReady })
        let application = Application(
            router: routes.router(),
            server: .http1(configuration: .init(idleTimeout: .nanoseconds(Self.nanoseconds(configuration.idleTimeout)))),
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port), serverName: "anvil"),
            onServerRunning: { [self] channel in
                let port = channel.localAddress?.port ?? 0
                let waiters = state.withLockedValue { state in
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
            state.withLockedValue { $0.ready = false }
            logger.info("shutting down: finishing requests in flight")
        }
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: application)]
        var grpcTransport: HTTP2ServerTransport.Posix?
        if let grpcPort = configuration.grpcPort {
            var transportConfiguration = HTTP2ServerTransport.Posix.Config.defaults
            // Twice the server's limit: a message over the transport's limit has its stream reset
            // without a status, one between the two gets RESOURCE_EXHAUSTED from the server.
            let limit = configuration.maximumMessageBytes
            transportConfiguration.rpc.maxRequestPayloadSize = limit > Int(Int32.max) / 2 ? Int(Int32.max) : max(2 * limit, limit + (1 << 20))
            let transport = HTTP2ServerTransport.Posix(address: .ipv4(host: configuration.host, port: grpcPort),
                                                       transportSecurity: .plaintext, config: transportConfiguration)
            let service = InferenceGRPCService(registry: registry, metrics: metrics, isReady: { [self] in isReady }, logger: logger)
            let limited = LimitedInferenceService(service: service, maximumBytes: limit)
            services.append(.init(service: GRPCServerService(server: GRPCServer(transport: transport, services: [limited]))))
            grpcTransport = transport
        }
        // Last, so it hears the shutdown first (services stop in reverse order).
        services.append(.init(service: readiness))
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: handlingSignals ? [.sigterm, .sigint] : [],
            logger: logger
        ))
        let shutdownFirst = state.withLockedValue { state in
            state.group = group
            return state.shutdownRequested
        }
        if shutdownFirst { await group.triggerGracefulShutdown() }
        // The gRPC port is known once the transport has bound it.
        let grpcAnnouncement = grpcTransport.map { transport in
            Task { [self] in
                guard let port = try? await transport.listeningAddress.ipv4?.port else { return }
                let waiters = state.withLockedValue { state in
                    state.grpcPort = port
                    defer { state.grpcWaiters = [] }
                    return state.grpcWaiters
                }
                logger.info("serving gRPC", metadata: ["port": "\(port)"])
                for waiter in waiters { waiter.resume(returning: port) }
            }
        }
        var failure: (any Error)?
        do {
            try await group.run()
        } catch {
            failure = error
        }
        grpcAnnouncement?.cancel()
        let waiters = state.withLockedValue { state in
            state.ready = false
            state.ended = failure ?? AnvilError(.invalidOption, "serve: the server stopped")
            defer {
                state.waiters = []
                state.grpcWaiters = []
            }
            return state.waiters + state.grpcWaiters
        }
        for waiter in waiters { waiter.resume(throwing: failure ?? AnvilError(.invalidOption, "serve: the server stopped before it listened")) }
        if let failure { throw failure }
        logger.info("stopped")
    }

    /// The port the server listens on, once it does (the one picked, for port 0); throws if the
    /// server stopped or failed to bind first.
    public func port() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLockedValue { state -> Result<Int, any Error>? in
                if let port = state.port { return .success(port) }
                if let ended = state.ended { return .failure(ended) }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// The gRPC port the server listens on, once it does (the one picked, for port 0); throws if
    /// the server serves no gRPC, stopped or failed to bind first.
    public func grpcPort() async throws -> Int {
        guard configuration.grpcPort != nil else { throw AnvilError(.invalidOption, "serve: this server has no gRPC port") }
        return try await withCheckedThrowingContinuation { continuation in
            let ready = state.withLockedValue { state -> Result<Int, any Error>? in
                if let port = state.grpcPort { return .success(port) }
                if let ended = state.ended { return .failure(ended) }
                state.grpcWaiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// Whether `/v2/health/ready` says ready: listening and not shutting down.
    public var isReady: Bool { state.withLockedValue { $0.ready } }

    /// Begins a graceful shutdown: readiness turns false, the listener closes, requests in flight
    /// are answered, then ``run(handlingSignals:)`` returns.
    public func shutdown() async {
        let group = state.withLockedValue { state in
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
