/// Where `anvil serve` listens and what it tolerates from clients.
public struct ServeConfiguration: Sendable {
    /// The address to bind: `"127.0.0.1"` (this machine only) or `"0.0.0.0"` (every interface,
    /// as in a container).
    public var host: String
    /// The TCP port; 0 picks a free one (see ``InferenceServer/port()``).
    public var port: Int
    /// The largest request body accepted (413 above it).
    public var maximumBodyBytes: Int
    /// How long a request's body may take to arrive once its headers have (408 after it).
    public var readTimeout: Duration
    /// How long a connection may sit idle — between requests, or a client that stopped sending —
    /// before the server closes it; at least ``readTimeout`` so a stalled body gets its 408 first.
    public var idleTimeout: Duration
    /// The gRPC port (`inference.GRPCInferenceService` on HTTP/2, same host); 0 picks a free one
    /// (see ``InferenceServer/grpcPort()``); `nil` serves no gRPC.
    public var grpcPort: Int?
    /// The largest gRPC request message accepted (RESOURCE_EXHAUSTED above it).
    public var maximumMessageBytes: Int

    /// A configuration; the defaults suit a server behind a load balancer.
    public init(host: String = "127.0.0.1", port: Int = 8080, maximumBodyBytes: Int = 64 << 20,
                readTimeout: Duration = .seconds(30), idleTimeout: Duration = .seconds(75),
                grpcPort: Int? = nil, maximumMessageBytes: Int = 64 << 20) {
        self.host = host
        self.port = port
        self.maximumBodyBytes = maximumBodyBytes
        self.readTimeout = readTimeout
        self.idleTimeout = idleTimeout
        self.grpcPort = grpcPort
        self.maximumMessageBytes = maximumMessageBytes
    }
}
