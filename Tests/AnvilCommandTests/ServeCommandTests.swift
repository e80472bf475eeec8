import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import AnvilTestSupport
import Testing

/// `anvil serve` as a process: models and names from the command line, the port it picked
/// printed, answers over HTTP, a clean exit on SIGTERM, and usage mistakes refused.
struct ServeCommandFailure: Error { let message: String }

@Suite("anvil serve")
struct ServeCommandTests {
    /// Starts `anvil serve` with `arguments`; returns the process, the port from its first line,
    /// and its standard error, read as it comes (a full pipe would stop the server).
    static func start(_ arguments: [String]) throws -> (Process, Int, PipeDrain) {
        let process = Process()
        process.executableURL = try #require(AnvilTool.executable, "the anvil executable is not built next to the tests")
        process.arguments = ["serve"] + arguments
        process.currentDirectoryURL = Fixtures.repository
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let errorDrain = PipeDrain(errors)
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let address = text.range(of: "127.0.0.1:"), let port = Int(text[address.upperBound...].prefix { $0.isNumber }) else {
            process.terminate()
            process.waitUntilExit()
            throw ServeCommandFailure(message: "no port in '\(text)'")
        }
        return (process, port, errorDrain)
    }

    static func get(_ port: Int, _ path: String) async throws -> (Int, Data) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    @Test("Two models, one named; metadata of both; SIGTERM ends it with status 0 and a log line per request")
    func serves() async throws {
        let (process, port, errors) = try Self.start(["--model", "Weights/mnist/model.json", "--model", "mnist", "--name", "random",
                                                       "--port", "0", "--max-batch", "4"])
        let (liveStatus, _) = try await Self.get(port, "/v2/health/live")
        #expect(liveStatus == 200)
        let (status, body) = try await Self.get(port, "/v2/models/mnist")
        #expect(status == 200 && String(decoding: body, as: UTF8.self).contains("\"shape\":[-1,28,28,1]"))
        #expect(try await Self.get(port, "/v2/models/random/ready").0 == 200)
        #expect(try await Self.get(port, "/v2/models/model").0 == 404)
        process.terminate()  // SIGTERM
        process.waitUntilExit()
        let log = String(decoding: errors.wait(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(log)")
        #expect(log.contains("path=/v2/models/mnist") && log.contains("status=404") && log.contains("stopped"))
    }

    @Test("--grpc-port and --model-repository: both ports announced, the repository's models served, SIGTERM exits 0")
    func grpcAndRepository() async throws {
        let repository = FileManager.default.temporaryDirectory.appendingPathComponent("anvil-serve-repository-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: repository.appendingPathComponent("digits"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: repository) }
        let weights = Fixtures.repository.appendingPathComponent("Weights/mnist")
        for file in try FileManager.default.contentsOfDirectory(atPath: weights.path) {
            try FileManager.default.copyItem(at: weights.appendingPathComponent(file), to: repository.appendingPathComponent("digits/\(file)"))
        }
        let (process, port, errors) = try Self.start(["--model-repository", repository.path, "--port", "0", "--grpc-port", "0"])
        #expect(try await Self.get(port, "/v2/models/digits").0 == 200)
        #expect(try await Self.get(port, "/v2/models/digits/config").0 == 200)
        process.terminate()
        process.waitUntilExit()
        let log = String(decoding: errors.wait(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(log)")
        #expect(log.contains("serving gRPC") && log.contains("model=digits"), "\(log)")
    }

    @Test("Usage mistakes exit 64; a model that does not load exits 1 with its message")
    func refuses() throws {
        let noModel = try AnvilTool.run(["serve", "--port", "0"])
        #expect(noModel.status == 64 && noModel.errors.contains("--model"))
        let nameFirst = try AnvilTool.run(["serve", "--name", "x", "--model", "mnist"])
        #expect(nameFirst.status == 64 && nameFirst.errors.contains("comes before any --model"))
        let missing = try AnvilTool.run(["serve", "--model", "no/such/model.json", "--port", "0"])
        #expect(missing.status == 1 && missing.errors.contains("no/such/model.json"))
        let grpcPort = try AnvilTool.run(["serve", "--model", "mnist", "--grpc-port", "70000"])
        #expect(grpcPort.status == 64 && grpcPort.errors.contains("--grpc-port"))
        let samePort = try AnvilTool.run(["serve", "--model", "mnist", "--port", "9000", "--grpc-port", "9000"])
        #expect(samePort.status == 64 && samePort.errors.contains("must differ"))
        let noFolder = try AnvilTool.run(["serve", "--model-repository", "no/such/folder", "--port", "0"])
        #expect(noFolder.status == 1 && noFolder.errors.contains("no/such/folder"))
        let twice = try AnvilTool.run(["serve", "--model", "mnist", "--model", "mnist", "--port", "0"])
        #expect(twice.status == 1 && twice.errors.contains("two models are named 'mnist'"))
    }
}
