import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A bare TCP connection to the server, for what a well-behaved HTTP client never does: stall
/// halfway through a body, hang up mid-request, stream a body with no length.
final class RawConnection: @unchecked Sendable {
    // @unchecked Sendable: one test uses a connection at a time; the socket is only read on the
    // thread `response()` starts.
    private let socket: Int32

    /// Connects to 127.0.0.1:`port`; reads give up after `timeout` seconds.
    init(port: Int, timeout: Int = 300) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(socket)
            throw POSIXError(.ECONNREFUSED)
        }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(socket) }

    /// Sends `text` (UTF-8).
    func send(_ text: String) { send(Data(text.utf8)) }

    /// Sends `data`.
    func send(_ data: Data) {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let sent = Glibc.send(socket, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if sent <= 0 { return }
                offset += sent
            }
        }
    }

    /// The server's answer (until it closes the connection or sends one whole response), read
    /// on a thread of its own: a blocking read on one of the few threads of Swift's cooperative
    /// pool could starve the server under test, whose handlers run there too.
    func response() async -> String {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: self.readAll()) }.start()
        }
    }

    /// Everything the server sends until it closes the connection, sends one whole response, or
    /// `timeout` passes.
    private func readAll() -> String {
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0 ..< count])
            // One response is enough: stop once its body (Content-Length) is complete.
            if let text = String(data: received, encoding: .utf8), let end = text.range(of: "\r\n\r\n"),
               let lengthLine = text[..<end.lowerBound].split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
               let length = Int(lengthLine.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)),
               text.utf8.count - text.utf8.distance(from: text.utf8.startIndex, to: end.upperBound) >= length {
                break
            }
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Closes the connection now (a client that hangs up).
    func hangUp() { shutdown(socket, Int32(SHUT_RDWR)) }
}
