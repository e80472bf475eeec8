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

    /// Token ids in, indices and a mask out — a model whose inputs and outputs are not FP32:
    /// `tokens` (INT64, any length) read through an `Embedding` of 16 rows of 8, and `keep` (BOOL,
    /// the same length); outputs `ids` (INT64: the ArgMax of each token's row) and `mask` (BOOL:
    /// `ids < tokens` and `keep`).
    static func tokens() throws -> Model {
        let tokens = Input(shape: OpenShape(dimensions: [nil], elementType: .int64), name: "tokens")
        let keep = Input(shape: OpenShape(dimensions: [nil], elementType: .bool), name: "keep")
        let ids = tokens --> Embedding(table: [16, 8], name: "embedding")
            --> ArgReduce(.argMax, axis: -1, keepDimensions: false, name: "argmax") --> Cast(to: .int64, name: "ids")
        let mask = [[ids, tokens] --> Elementwise(.less, name: "below"), keep] --> Elementwise(.and, name: "mask")
        let model = try Model(inputs: [tokens, keep], outputs: [ids, mask])
        try model.compile(from: RandomParameterSource(seed: 44))
        return model
    }

    /// The datatypes a served model's inputs and outputs can have, in the order of
    /// ``everyDatatype()``'s inputs and outputs.
    static let datatypes: [ElementType] = [.int8, .int16, .int32, .int64, .uint8, .uint16, .uint32, .uint64, .bool, .float32]

    /// One input `x_TYPE` of 3 values per datatype, each returned as output `y_TYPE` of its own
    /// type (a cast to the type it has): every datatype through the protocols both ways.
    static func everyDatatype() throws -> Model {
        let inputs = datatypes.map { Input(shape: OpenShape(dimensions: [3], elementType: $0), name: "x_\($0)") }
        let outputs = zip(inputs, datatypes).map { input, type in input --> Cast(to: type, name: "y_\(type)") }
        let model = try Model(inputs: inputs, outputs: outputs)
        try model.compile(from: RandomParameterSource(seed: 45))
        return model
    }

    /// Values of each of ``datatypes`` for ``everyDatatype()``, its extremes among them (for a
    /// 64-bit or 32-bit type, ±2^24: the largest Anvil holds exactly).
    static let extremeValues: [ElementType: [Double]] = [
        .int8: [-128, 127, -1], .int16: [-32768, 32767, 5], .int32: [-16_777_216, 16_777_216, -7], .int64: [-16_777_216, 16_777_216, 3],
        .uint8: [0, 255, 9], .uint16: [0, 65535, 2], .uint32: [0, 16_777_216, 11], .uint64: [0, 16_777_216, 1],
        .bool: [1, 0, 1], .float32: [0.1, -3.4e38, 6],
    ]

    /// A tensor of `type` holding `values` (batch 1, shape `[values.count]`).
    static func typedTensor(_ type: ElementType, _ values: [Double]) throws -> Tensor {
        let shape = try Shape(dimensions: [values.count], elementType: type)
        switch type {
        case .float32: return try Tensor(batch: 1, shape: shape, values: values.map(Float.init))
        case .bool: return try Tensor(batch: 1, shape: shape, truths: values.map { $0 != 0 })
        default: return try Tensor(batch: 1, shape: shape, integers: values.map { Int64($0) })
        }
    }

    /// `tensor`'s values as JSON data holds them in its own datatype: floats, integers or truth values.
    static func elements(_ tensor: Tensor) -> TensorData.Elements {
        switch tensor.elementType {
        case .float32, .bfloat16: .floats(tensor.values)
        case .bool: .truths(tensor.truths)
        default: .integers(tensor.integers)
        }
    }

    /// A JSON input for `tensor` under `name` in Anvil's own layout, of its own datatype.
    static func input(_ name: String, _ tensor: Tensor) -> InputTensor {
        InputTensor(name: name, shape: [tensor.batch] + tensor.shape.dimensions, datatype: TensorDatatype(tensor.elementType).rawValue,
                    data: TensorData(elements(tensor)))
    }
}
