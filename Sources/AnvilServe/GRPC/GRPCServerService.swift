import GRPCCore
import GRPCNIOTransportHTTP2Posix
import ServiceLifecycle

/// The gRPC server as a service of the server's `ServiceGroup`: it serves until the group's
/// graceful shutdown, then stops taking new calls (HTTP/2 GOAWAY) and returns once the calls in
/// flight are answered.
struct GRPCServerService: Service {
    /// The server, over HTTP/2 on a TCP port.
    let server: GRPCServer<HTTP2ServerTransport.Posix>

    func run() async throws {
        try await withGracefulShutdownHandler {
            try await server.serve()
        } onGracefulShutdown: {
            server.beginGracefulShutdown()
        }
    }
}
