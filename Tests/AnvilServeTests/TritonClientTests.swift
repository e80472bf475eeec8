import Anvil
@testable import AnvilServe
@testable import AnvilTestSupport
import Foundation
import Testing

/// Triton's own Python clients, tritonclient.http and tritonclient.grpc (from the project venv:
/// `python3` on PATH), against a server on loopback with both ports and a model repository:
/// Clients/triton_client_check.py runs every check (methods, bad requests, over-large messages,
/// concurrent clients, statistics, load and unload; INT64 and BOOL tensors both ways) and the
/// outputs it compares against are the models' own `predict`, written here.
@Suite("Serving: Triton's clients")
struct TritonClientTests {
    /// Whether tritonclient can be imported; without it the test is skipped, unless
    /// ANVIL_REQUIRE_TRITONCLIENT is set (Scripts/test.sh sets it, so CI fails instead).
    static let runs: Bool = ProcessInfo.processInfo.environment["ANVIL_REQUIRE_TRITONCLIENT"] != nil
        || (try? python(["-c", "import tritonclient.grpc, tritonclient.http"]).status) == 0

    /// Runs `python3 arguments` to its end; standard error goes with standard output.
    static func python(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3"] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let drain = PipeDrain(output)
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: drain.wait(), as: UTF8.self))
    }

    @Test("tritonclient.http and tritonclient.grpc pass every check against anvil serve",
          .enabled(if: runs, "tritonclient is not importable by python3 (pip install 'tritonclient[http,grpc]' in .venv; set ANVIL_REQUIRE_TRITONCLIENT to fail instead)"))
    func tritonClients() async throws {
        let folder = try Fixtures.temporaryDirectory(prefix: "anvil-triton")
        defer { try? FileManager.default.removeItem(at: folder) }
        let weights = Fixtures.repository.appendingPathComponent("Weights/mnist")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("repository/digits"), withIntermediateDirectories: true)
        for file in try FileManager.default.contentsOfDirectory(atPath: weights.path) {
            try FileManager.default.copyItem(at: weights.appendingPathComponent(file), to: folder.appendingPathComponent("repository/digits/\(file)"))
        }
        // Four real digits and the model's own answer to them.
        let model = try ServeFixtures.mnist()
        let digits = try Data(contentsOf: weights.appendingPathComponent("sample-digits.f32")).prefix(4 * 784 * 4)
        let images = try Tensor(batch: 4, shape: model.inputShapes[0], values: BinaryTensorData.floats(digits, count: 4 * 784))
        var expected = Data()
        BinaryTensorData.append(try model.predict(images).values, to: &expected)
        try digits.write(to: folder.appendingPathComponent("inputs.f32"))
        try expected.write(to: folder.appendingPathComponent("expected.f32"))
        // INT64 and BOOL tensors both ways: the token model's inputs and its own outputs.
        let typed = try ServeFixtures.tokens()
        let (tokens, keep) = try TypedTensorServingTests.tokenInputs()
        let typedOutputs = try typed.predict([tokens, keep])
        for (file, tensor) in [("tokens.i64", tokens), ("keep.bool", keep), ("ids.i64", typedOutputs[0]), ("mask.bool", typedOutputs[1])] {
            try TypedWire.bytes(tensor).write(to: folder.appendingPathComponent(file))
        }

        let messageLimit = 1 << 20
        let repository = try ModelRepository(directory: folder.appendingPathComponent("repository"), maximumBatch: 8)
        let server = try await TestServer([try ServedModel(name: "mnist", model: model, maximumBatch: 8), try ServedModel(name: "tokens", model: typed)],
                                          configuration: ServeFixtures.patient(maximumMessageBytes: messageLimit), grpc: true, repository: repository)
        let script = Fixtures.repository.appendingPathComponent("Tests/AnvilServeTests/Clients/triton_client_check.py").path
        let arguments = [script, "--http-port", String(server.port), "--grpc-port", String(try #require(server.grpcPort)),
                         "--model", "mnist", "--repository-model", "digits", "--max-message-bytes", String(messageLimit),
                         "--inputs", folder.appendingPathComponent("inputs.f32").path, "--expected", folder.appendingPathComponent("expected.f32").path,
                         "--typed-model", "tokens", "--typed-dir", folder.path]
        // Off the cooperative pool: the server's handlers need it while the client runs.
        let (status, output) = try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try Self.python(arguments) }) }.start()
        }
        #expect(status == 0, "\(output)")
        #expect(output.contains("tritonclient checks:") && output.contains(" 0 failed"), "\(output)")
        try await server.stop()
    }
}
