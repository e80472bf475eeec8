import Prometheus

/// The server's Prometheus metrics, in a registry of its own (several servers in one process,
/// as in tests, never mix their counts), written out by `GET /metrics`:
///
/// - `anvil_requests_total{model, route, status}`: REST requests answered (`model` is `""` off
///   the model routes and for unknown models);
/// - `anvil_grpc_requests_total{model, method, code}`: gRPC calls answered, by method and status
///   code name (`OK`, `INVALID_ARGUMENT`, ...);
/// - `anvil_request_duration_seconds{model}`: inference latency over either protocol, from the
///   request's arrival to its answer;
/// - `anvil_batch_size{model}`: images per batch the runner ran;
/// - `anvil_queue_depth{model}`: requests waiting for a batch, read at each scrape;
/// - `anvil_requests_in_flight`: requests being handled, over either protocol.
final class ServerMetrics: Sendable {
    /// The registry `/metrics` writes out.
    let registry = PrometheusCollectorRegistry()
    private let inFlight: Gauge
    private let models: ModelRegistry

    /// Latency buckets, in seconds: 1 ms to 10 s.
    static let latencyBuckets: [Duration] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10].map {
        Duration.nanoseconds(Int64($0 * 1e9))
    }
    /// Batch-size buckets, in images.
    static let batchBuckets: [Double] = [1, 2, 4, 8, 16, 32, 64, 128, 256]

    private static var requests: MetricNameDescriptor {
        MetricNameDescriptor(namespace: "anvil", metricName: "requests", unitName: "total", helpText: "Requests answered, by model, route and status")
    }
    private static var latency: MetricNameDescriptor {
        MetricNameDescriptor(namespace: "anvil", metricName: "request_duration", unitName: "seconds", helpText: "Inference latency, arrival to answer")
    }
    private static var batchSize: MetricNameDescriptor {
        MetricNameDescriptor(namespace: "anvil", metricName: "batch_size", unitName: "", helpText: "Images per batch the runner ran")
    }
    private static var queueDepth: MetricNameDescriptor {
        MetricNameDescriptor(namespace: "anvil", metricName: "queue_depth", unitName: "", helpText: "Requests waiting for a batch")
    }
    private static var grpcRequests: MetricNameDescriptor {
        MetricNameDescriptor(namespace: "anvil", metricName: "grpc_requests", unitName: "total", helpText: "gRPC calls answered, by model, method and status code")
    }
    private static var inFlightRequests: MetricNameDescriptor {
        MetricNameDescriptor(namespace: "anvil", metricName: "requests_in_flight", unitName: "", helpText: "Requests being handled")
    }

    /// Metrics for the models of `models`, now and as they are loaded; listens to their runners' batches.
    init(models: ModelRegistry) {
        self.models = models
        inFlight = registry.makeGauge(descriptor: Self.inFlightRequests)
        models.onServe { [registry] model in
            let histogram = registry.makeValueHistogram(descriptor: Self.batchSize, labels: [("model", model.name)], buckets: Self.batchBuckets)
            model.listenToBatches { histogram.record(Double($0)) }
            _ = registry.makeGauge(descriptor: Self.queueDepth, labels: [("model", model.name)])
            _ = registry.makeDurationHistogram(descriptor: Self.latency, labels: [("model", model.name)], buckets: Self.latencyBuckets)
        }
    }

    /// A request started.
    func started() { inFlight.increment() }

    /// A request was answered with `status` after `duration`; `model` is a served model's name or "".
    func finished(model: String, route: String, status: Int, duration: Duration) {
        inFlight.decrement()
        registry.makeCounter(descriptor: Self.requests, labels: [("model", model), ("route", route), ("status", String(status))]).increment()
        if route == "infer", !model.isEmpty {
            registry.makeDurationHistogram(descriptor: Self.latency, labels: [("model", model)], buckets: Self.latencyBuckets).record(duration)
        }
    }

    /// A gRPC call of `method` was answered with `code` after `duration`; `model` is a served
    /// model's name or "".
    func finishedCall(model: String, method: String, code: String, duration: Duration) {
        inFlight.decrement()
        registry.makeCounter(descriptor: Self.grpcRequests, labels: [("model", model), ("method", method), ("code", code)]).increment()
        if method == "ModelInfer", !model.isEmpty {
            registry.makeDurationHistogram(descriptor: Self.latency, labels: [("model", model)], buckets: Self.latencyBuckets).record(duration)
        }
    }

    /// The Prometheus text exposition, queue depths read now.
    func exposition() -> [UInt8] {
        for model in models.models {
            registry.makeGauge(descriptor: Self.queueDepth, labels: [("model", model.name)]).set(Double(model.runner.statistics.waiting))
        }
        return registry.emitToBuffer()
    }
}
