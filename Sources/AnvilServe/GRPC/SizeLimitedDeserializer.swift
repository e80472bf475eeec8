import GRPCCore
import GRPCProtobuf
import SwiftProtobuf

/// Reads a protobuf request no larger than a limit, and refuses a larger one with
/// RESOURCE_EXHAUSTED naming the limit. (The HTTP/2 transport's own limit resets the stream
/// without a status, so the server's limit is applied here, below the transport's.)
struct SizeLimitedDeserializer<Message: SwiftProtobuf.Message>: MessageDeserializer {
    /// The largest message accepted, in bytes.
    let maximumBytes: Int

    func deserialize<Bytes: GRPCContiguousBytes>(_ serializedMessageBytes: Bytes) throws -> Message {
        let count = serializedMessageBytes.withUnsafeBytes { $0.count }
        guard count <= maximumBytes else {
            throw RPCError(code: .resourceExhausted,
                           message: "the request message is \(count) bytes, larger than the server's limit of \(maximumBytes) bytes (--grpc-max-message-bytes)")
        }
        return try ProtobufDeserializer<Message>().deserialize(serializedMessageBytes)
    }
}
