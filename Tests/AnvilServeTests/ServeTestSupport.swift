import Anvil
import AnvilModels
@testable import AnvilServe
@testable import AnvilTestSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Testing

/// A server started on an ephemeral loopback port for one test, and a real HTTP client for it
/// (Foundation's URLSession, over TCP).
final class TestServer: Sendable {
    let server: InferenceServer
    let port: Int
    /// The gRPC port, when the configuration asked for gRPC.
    let grpcPort: Int?
    private let running: Task<Void, any Error>
    private let session: URLSession

    /// Starts serving `models` (and those of `repository`) with `configuration` (its ports
    /// replaced by 0: gRPC too when `grpc`).
    init(_ models: [ServedModel], configuration: ServeConfiguration = ServeFixtures.patient(), grpc: Bool = false,
         repository: ModelRepository? = nil) async throws {
        var configuration = configuration
        configuration.port = 0
        configuration.grpcPort = grpc ? 0 : nil
        var logger = Logger(label: "anvil.serve.test")
        logger.logLevel = .warning
        let server = try InferenceServer(models: models, repository: repository, configuration: configuration, logger: logger)
        self.server = server
        running = Task { try await server.run(handlingSignals: false) }
        port = try await server.port()
        grpcPort = grpc ? try await server.grpcPort() : nil
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        // Generous: the server's handlers share Swift's cooperative pool with every other test
        // running in parallel, and a busy CI machine can hold them off for a while. Short enough
        // that a request that is never answered fails its test well inside CI's time limit.
        sessionConfiguration.timeoutIntervalForRequest = 600
        // Concurrent clients are concurrent connections (Foundation's default is 6 per host).
        sessionConfiguration.httpMaximumConnectionsPerHost = 128
        session = URLSession(configuration: sessionConfiguration)
    }

    /// A response: status, headers, body.
    struct Reply: Sendable {
        let status: Int
        let headers: [String: String]
        let body: Data

        /// The header `name` (case-insensitive).
        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name.lowercased() }?.value
        }

        /// The body decoded as `type`.
        func decoded<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(type, from: body) }

        /// The protocol error message of an error response.
        var errorMessage: String? { (try? decoded(ErrorResponse.self))?.error }
    }

    /// `GET path`.
    func get(_ path: String) async throws -> Reply {
        try await send(URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!))
    }

    /// `POST path` with `body`.
    func post(_ path: String, body: Data, headers: [String: String] = [:]) async throws -> Reply {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = "POST"
        request.httpBody = body
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return try await send(request)
    }

    /// `POST /v2/models/{model}/infer` with a JSON request.
    func infer(_ model: String, _ request: InferenceRequest) async throws -> Reply {
        try await post("/v2/models/\(model)/infer", body: JSONEncoder().encode(request), headers: ["Content-Type": "application/json"])
    }

    private func send(_ request: URLRequest) async throws -> Reply {
        let (data, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers["\(key)"] = "\(value)" }
        return Reply(status: http.statusCode, headers: headers, body: data)
    }

    /// Shuts the server down gracefully and waits for it to stop.
    func stop() async throws {
        await server.shutdown()
        try await running.value
        session.invalidateAndCancel()
    }
}

/// Models and inputs the serving tests share; the reference for every answer is the model's own
/// `predict` on the same input, called directly.
enum ServeFixtures {
    /// The server's defaults with read and idle timeouts as long as the client's. The handlers run
    /// on Swift's cooperative pool, which the suite's other tests can hold for minutes on a 2-core
    /// machine; a handler starved past the default 30 s read timeout answers 408 to a body that
    /// did arrive, and closes the connection under the client's upload. (Under the sanitizers the
    /// hold was about 1,050 s, so `Scripts/dev/sanitize.sh` runs the serving suites on their own.)
    /// Only the tests of the timeouts themselves set short ones.
    static func patient(maximumBodyBytes: Int = ServeConfiguration().maximumBodyBytes,
                        maximumMessageBytes: Int = ServeConfiguration().maximumMessageBytes) -> ServeConfiguration {
        ServeConfiguration(maximumBodyBytes: maximumBodyBytes, readTimeout: .seconds(600), idleTimeout: .seconds(900),
                           maximumMessageBytes: maximumMessageBytes)
    }

    /// The Deep MNIST network with Anvil's trained weights (Weights/mnist/model.json).
    static func mnist() throws -> Model {
        try ModelFile(contentsOf: Fixtures.repository.appendingPathComponent("Weights/mnist/model.json")).compiledModel()
    }

    /// The batch-invariant network of `refBatchInvariantNetwork` (a request's answer is
    /// bit-identical whatever batch the runner put it in).
    static func convolutional(open: Bool = false) throws -> Model {
        try refBatchInvariantNetwork(open: open, seed: 41).model
    }

    /// Two inputs (an image and a vector), two outputs: names and order matter.
    static func twoInputs() throws -> Model {
        let image = Input(width: 6, height: 4, channels: 2, name: "image")
        let extra = Input(shape: .vector(5), name: "extra")
        let features = image --> Convolution(kernel: (3, 3), channels: 3, name: "conv") --> GlobalAveragePooling(name: "pool")
        let joined = [features, extra --> Dense(neurons: 3, name: "fc")] --> Add(name: "sum")
        let model = try Model(inputs: [image, extra], outputs: [joined, features])
        try model.compile(from: RandomParameterSource(seed: 43))
        return model
    }

    /// `batch` images of `shape` with seeded values in 0 ..< 1.
    static func tensor(batch: Int, shape: Shape, seed: Int) throws -> Tensor {
        var random = RefRandom(seed: seed)
        return try Tensor(batch: batch, shape: shape, values: random.floats(batch * shape.count, 0, 1))
    }

    /// A JSON input for `tensor` under `name` in Anvil's own layout.
    static func input(_ name: String, _ tensor: Tensor) -> InputTensor {
        InputTensor(name: name, shape: [tensor.batch] + tensor.shape.dimensions, data: TensorData(tensor.values))
    }
}
