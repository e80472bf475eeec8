import Anvil
@testable import AnvilServe
@testable import AnvilTestSupport
import Foundation
import Testing

/// Whatever a client can send wrong gets the protocol's `{"error": ...}` with a 4xx status naming
/// what is wrong — and the server goes on answering good requests, checked after every bad one.
@Suite("Serving: bad requests")
struct ErrorTests {
    /// A good request and its expected answer, sent after each bad one.
    struct Probe {
        let model: Model
        let tensor: Tensor
        let expected: Tensor

        init(_ model: Model) throws {
            self.model = model
            tensor = try ServeFixtures.tensor(batch: 1, shape: model.inputShapes[0], seed: 77)
            expected = try model.predict(tensor)
        }

        /// Sends the good request; expects the model's own answer.
        func check(_ server: TestServer, after what: String) async throws {
            let reply = try await server.infer("net", InferenceRequest(inputs: [ServeFixtures.input(model.inputNames[0], tensor)]))
            #expect(reply.status == 200, "not serving after \(what)")
            #expect(try reply.decoded(InferenceResponse.self).outputs[0].data?.values == expected.values, "after \(what)")
        }
    }

    static func start(_ configuration: ServeConfiguration = ServeFixtures.patient()) async throws -> (TestServer, Probe) {
        let model = try ServeFixtures.convolutional()
        let server = try await TestServer([try ServedModel(name: "net", model: model)], configuration: configuration)
        return (server, try Probe(model))
    }

    @Test("Malformed or mismatched bodies: 400 naming the field, input, shape or datatype")
    func badBodies() async throws {
        let (server, probe) = try await Self.start()
        let name = probe.model.inputNames[0]
        let good = Array(repeating: "0.5", count: 360).joined(separator: ",")
        let cases: [(String, String, String)] = [
            ("not JSON", "{\"inputs\": [", "malformed inference request"),
            ("no inputs field", "{\"id\": \"a\"}", "missing field 'inputs'"),
            ("shape of strings", "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [\"1\"], \"datatype\": \"FP32\", \"data\": []}]}", "inputs[0].shape"),
            ("unknown input", "{\"inputs\": [{\"name\": \"pixels\", \"shape\": [1, 10, 12, 3], \"datatype\": \"FP32\", \"data\": [\(good)]}]}", "no input 'pixels'"),
            ("datatype", "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [1, 10, 12, 3], \"datatype\": \"INT8\", \"data\": [\(good)]}]}", "datatype 'INT8'"),
            ("wrong shape", "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [1, 12, 10, 3], \"datatype\": \"FP32\", \"data\": [\(good)]}]}", "[N, 10, 12, 3]"),
            ("wrong rank", "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [360], \"datatype\": \"FP32\", \"data\": [\(good)]}]}", "4 axes"),
            ("zero batch", "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [0, 10, 12, 3], \"datatype\": \"FP32\", \"data\": []}]}", "at least 1"),
            ("huge shape", "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [9223372036854775807, 10, 12, 3], \"datatype\": \"FP32\", \"data\": []}]}", "too many values"),
            ("too few values", "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [1, 10, 12, 3], \"datatype\": \"FP32\", \"data\": [1, 2]}]}", "holds 2"),
            ("a string value", "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [1, 10, 12, 3], \"datatype\": \"FP32\", \"data\": [\"x\"]}]}", "inputs[0].data"),
            ("irregular nesting", "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [1, 10, 12, 3], \"datatype\": \"FP32\", \"data\": [[1, 2], [[3], [4]]]}]}", "not regular"),
            ("nesting against shape", "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [1, 10, 12, 3], \"datatype\": \"FP32\", \"data\": [[\(good)]]}]}", "does not match"),
            ("no data", "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [1, 10, 12, 3], \"datatype\": \"FP32\"}]}", "neither data"),
            ("input twice", "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [1, 10, 12, 3], \"datatype\": \"FP32\", \"data\": [\(good)]}, {\"name\": \"\(name)\", \"shape\": [1, 10, 12, 3], \"datatype\": \"FP32\", \"data\": [\(good)]}]}", "twice"),
            ("unknown output", "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [1, 10, 12, 3], \"datatype\": \"FP32\", \"data\": [\(good)]}], \"outputs\": [{\"name\": \"logits\"}]}", "no output 'logits'"),
            ("value beyond FP32", "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [1, 10, 12, 3], \"datatype\": \"FP32\", \"data\": [1e39\(String(repeating: ",0", count: 359))]}]}", "inputs[0].data"),
        ]
        for (what, body, fragment) in cases {
            let reply = try await server.post("/v2/models/net/infer", body: Data(body.utf8))
            #expect(reply.status == 400, "\(what): \(reply.status)")
            let message = reply.errorMessage ?? "<no error body>"
            #expect(message.contains(fragment), "\(what): \(message)")
            try await probe.check(server, after: what)
        }
        try await server.stop()
    }

    @Test("Unknown model or path: 404; a model route with another method: an error body too")
    func notFound() async throws {
        let (server, probe) = try await Self.start()
        for path in ["/v2/models/resnet/infer", "/v2/models/resnet", "/v2/models/resnet/ready", "/v3", "/v2/models/net/versions/1"] {
            let reply = path.hasSuffix("infer") ? try await server.post(path, body: Data("{}".utf8)) : try await server.get(path)
            #expect(reply.status == 404, "\(path): \(reply.status)")
            #expect(reply.errorMessage != nil, "\(path)")
            if path.contains("resnet") { #expect(reply.errorMessage?.contains("unknown model 'resnet'") == true) }
            try await probe.check(server, after: path)
        }
        let get = try await server.get("/v2/models/net/infer")
        #expect((400 ..< 500).contains(get.status) && get.errorMessage != nil)
        try await server.stop()
    }

    @Test("A body over the limit: 413, declared or streamed without a length")
    func tooLarge() async throws {
        let (server, probe) = try await Self.start(ServeFixtures.patient(maximumBodyBytes: 4096))
        let big = Data(("{\"inputs\": [{\"data\": [" + Array(repeating: "0.25", count: 2000).joined(separator: ",") + "]}]}").utf8)
        let reply = try await server.post("/v2/models/net/infer", body: big)
        #expect(reply.status == 413 && reply.errorMessage?.contains("4096") == true)
        try await probe.check(server, after: "a declared body over the limit")
        // Chunked: no Content-Length, the limit is met while reading.
        let connection = try RawConnection(port: server.port)
        connection.send("POST /v2/models/net/infer HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n")
        for _ in 0 ..< 3 { connection.send(String(format: "%x\r\n", 2000) + String(repeating: " ", count: 2000) + "\r\n") }
        connection.send("0\r\n\r\n")
        let answer = await connection.response()
        #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer)")
        #expect(answer.contains("{\"error\":"))
        try await probe.check(server, after: "a streamed body over the limit")
        try await server.stop()
    }

    /// The idle timeout (which closes a connection without an answer) is far longer than the
    /// read timeout: on a machine busy with other tests the server's timer may fire late, but
    /// the 408 still comes first.
    @Test("A client that stalls mid-body: 408 after the read timeout; one that hangs up: nothing breaks")
    func stallAndHangUp() async throws {
        let (server, probe) = try await Self.start(ServeConfiguration(readTimeout: .milliseconds(300), idleTimeout: .seconds(300)))
        let stalled = try RawConnection(port: server.port)
        stalled.send("POST /v2/models/net/infer HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n{\"inputs\": [")
        // Others are served while it stalls.
        try await probe.check(server, after: "a stalled client arrived")
        let answer = await stalled.response()
        #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer)")
        #expect(answer.contains("read timeout"))
        try await probe.check(server, after: "a stalled client")

        let gone = try RawConnection(port: server.port)
        gone.send("POST /v2/models/net/infer HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1000\r\n\r\n{\"inputs\": [")
        gone.hangUp()
        try await probe.check(server, after: "a client hung up mid-body")
        // Hanging up while the request is being computed: its answer has nowhere to go.
        let request = try JSONEncoder().encode(InferenceRequest(inputs: [ServeFixtures.input(probe.model.inputNames[0], probe.tensor)]))
        let impatient = try RawConnection(port: server.port)
        impatient.send("POST /v2/models/net/infer HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(request.count)\r\n\r\n")
        impatient.send(request)
        impatient.hangUp()
        try await probe.check(server, after: "a client hung up awaiting its answer")
        try await server.stop()
    }

    @Test("Binary data that does not add up: 400")
    func badBinary() async throws {
        let (server, probe) = try await Self.start()
        let name = probe.model.inputNames[0]
        let bytes = Data(count: 360 * 4)
        func body(_ size: Int, extra: Int = 0) -> Data {
            var body = Data("{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [1, 10, 12, 3], \"datatype\": \"FP32\", \"parameters\": {\"binary_data_size\": \(size)}}]}".utf8)
            body.append(bytes)
            body.append(Data(count: extra))
            return body
        }
        func headerLength(_ size: Int) -> Int {
            "{\"inputs\": [{\"name\": \"\(name)\", \"shape\": [1, 10, 12, 3], \"datatype\": \"FP32\", \"parameters\": {\"binary_data_size\": \(size)}}]}".utf8.count
        }
        let cases: [(String, Data, String, String)] = [
            ("size past the end", body(360 * 4 + 4), String(headerLength(360 * 4 + 4)), "runs past"),
            ("bytes left over", body(360 * 4, extra: 8), String(headerLength(360 * 4)), "add up to"),
            ("size not the shape's", body(100), String(headerLength(100)), "binary_data_size is 100"),
            ("header length not a number", body(360 * 4), "many", "Inference-Header-Content-Length"),
            ("header length past the body", body(360 * 4), "999999", "Inference-Header-Content-Length"),
        ]
        for (what, data, length, fragment) in cases {
            let reply = try await server.post("/v2/models/net/infer", body: data,
                                              headers: [BinaryTensorData.headerLengthField: length, "Content-Type": "application/octet-stream"])
            #expect(reply.status == 400, "\(what): \(reply.status)")
            #expect(reply.errorMessage?.contains(fragment) == true, "\(what): \(reply.errorMessage ?? "-")")
            try await probe.check(server, after: what)
        }
        try await server.stop()
    }
}
