@testable import AnvilServe
import Foundation
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import GRPCProtobuf
import SwiftProtobuf

/// grpc-swift's own client, over HTTP/2 on loopback, for the server under test: `run` opens a
/// connection, hands the generated `inference.GRPCInferenceService` stub to `body`, and closes
/// it. Every call has a deadline, so a call that is never answered fails its test instead of
/// hanging the suite.
enum GRPCTestClient {
    /// Generous, like the REST client's: the suite's other tests can hold the cooperative pool.
    static let options: CallOptions = {
        var options = CallOptions.defaults
        options.timeout = .seconds(600)
        return options
    }()

    /// Runs `body` with a client of the server listening on `port`.
    static func run<Result: Sendable>(port: Int, maximumResponseBytes: Int = 64 << 20,
                                      _ body: (Inference_GRPCInferenceService.Client<HTTP2ClientTransport.Posix>, GRPCClient<HTTP2ClientTransport.Posix>) async throws -> Result) async throws -> Result {
        var config = HTTP2ClientTransport.Posix.Config.defaults
        config.http2.maxFrameSize = 1 << 20
        let transport = try HTTP2ClientTransport.Posix(target: .ipv4(address: "127.0.0.1", port: port), transportSecurity: .plaintext, config: config)
        return try await withGRPCClient(transport: transport) { client in
            try await body(Inference_GRPCInferenceService.Client(wrapping: client), client)
        }
    }

    /// The status code of the error `body` throws (nil if it throws none, or not an RPCError).
    static func code(_ body: () async throws -> Void) async -> RPCError.Code? {
        do {
            try await body()
            return nil
        } catch let error as RPCError {
            return error.code
        } catch {
            return nil
        }
    }

    /// The RPCError `body` throws, if it does.
    static func error(_ body: () async throws -> Void) async -> RPCError? {
        do {
            try await body()
            return nil
        } catch let error as RPCError {
            return error
        } catch {
            return nil
        }
    }

    /// Sends `bytes` as the message of `ModelInfer`, whatever they are (malformed protobuf), and
    /// returns the answer's status.
    static func sendRaw(_ bytes: [UInt8], client: GRPCClient<HTTP2ClientTransport.Posix>) async throws -> RPCError.Code? {
        await code {
            _ = try await client.unary(request: ClientRequest(message: bytes),
                                       descriptor: Inference_GRPCInferenceService.Method.ModelInfer.descriptor,
                                       serializer: RawSerializer(), deserializer: ProtobufDeserializer<Inference_ModelInferResponse>(),
                                       options: options) { try $0.message }
        }
    }

    /// Sends bytes as they are.
    struct RawSerializer: MessageSerializer {
        func serialize<Bytes: GRPCContiguousBytes>(_ message: [UInt8]) throws -> Bytes { Bytes(message) }
    }

    /// A `ModelInfer` request for `tensor` as input `name` of `model`, its values in
    /// `raw_input_contents` (`raw`) or in `contents.fp32_contents`.
    static func inferRequest(_ model: String, input name: String, shape: [Int], values: [Float], raw: Bool,
                             outputs: [String] = [], id: String = "") -> Inference_ModelInferRequest {
        .with { request in
            request.modelName = model
            request.id = id
            request.inputs = [.with {
                $0.name = name
                $0.datatype = "FP32"
                $0.shape = shape.map(Int64.init)
                if !raw { $0.contents = .with { $0.fp32Contents = values } }
            }]
            if raw { request.rawInputContents = [values.withUnsafeBytes { Data($0) }] }
            request.outputs = outputs.map { output in .with { $0.name = output } }
        }
    }

    /// The float32 values of one `raw_output_contents` entry.
    static func floats(_ bytes: Data) -> [Float] {
        BinaryTensorData.floats(bytes, count: bytes.count / 4)
    }
}
