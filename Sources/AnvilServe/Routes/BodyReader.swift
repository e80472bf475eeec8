import Foundation
import Hummingbird
import NIOCore

/// Reads a request body whole, within a size limit (413) and a time limit (408): a client that
/// sends too much or stops sending gets an answer instead of holding the server's memory or a
/// handler forever.
struct BodyReader: Sendable {
    /// The largest body accepted.
    let maximumBytes: Int
    /// How long the body may take.
    let timeout: Duration

    /// The body of `request`, which came on `channel`.
    func read(_ request: Request, channel: any Channel) async throws -> Data {
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }), declared > maximumBytes {
            throw tooLarge
        }
        let body = request.body
        let limit = maximumBytes
        let tooLarge = self.tooLarge
        return try await withThrowingTaskGroup(of: Data?.self) { group in
            group.addTask {
                var data = Data()
                for try await buffer in body {
                    guard data.count + buffer.readableBytes <= limit else { throw tooLarge }
                    data.append(contentsOf: buffer.readableBytesView)
                }
                return data
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first: Data??
            do {
                first = try await group.next()
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
            guard let first, let data = first else {
                // Reading a body does not end on cancellation: end it by closing the connection's
                // reading side (the answer still goes out on the writing side).
                channel.close(mode: .input, promise: nil)
                throw ProtocolError(.requestTimeout, "the request body did not arrive within \(timeout) (read timeout)")
            }
            return data
        }
    }

    private var tooLarge: ProtocolError {
        ProtocolError(.contentTooLarge, "the request body is larger than the server's limit of \(maximumBytes) bytes (--max-body-bytes)")
    }
}
