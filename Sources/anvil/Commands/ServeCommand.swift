import Anvil
import AnvilModels
import AnvilServe
import ArgumentParser
import Foundation
import Logging

/// `anvil serve --model <model.json | zoo name> [--name NAME] ... --port 8080 [--grpc-port 8081]
/// [--model-repository DIR]`: serves models with the KServe Open Inference Protocol v2 over HTTP
/// and gRPC, with Triton's configuration, statistics and repository extensions (docs/serving.md).
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve models over HTTP and gRPC (KServe Open Inference Protocol v2).",
        discussion: """
        Each --model is a model file (served with its own parameters) or a zoo name (\(ModelCatalog.names.joined(separator: ", "))), \
        served with seeded random weights, for trying the server and load tests). A --name after a --model names that model \
        (default: the zoo name, or the file name without extension — the directory's for model.json). \
        Tensors on the wire follow the model file's declared layout (NHWC for Anvil model files). \
        Requests are batched per model (--max-batch images arriving within --max-wait-ms). \
        --grpc-port also serves inference.GRPCInferenceService (KServe's convention: REST 8080, gRPC 8081). \
        --model-repository DIR serves every DIR/NAME/model.json or model.onnx as NAME, and lets clients load and unload them. \
        SIGTERM or SIGINT stop the server gracefully: requests in flight are answered. See docs/serving.md.
        """
    )

    @Option(help: "A model file or zoo name to serve (repeat for several).")
    var model: [String] = []

    @Option(help: "The name of the --model before it (in /v2/models/NAME).")
    var name: [String] = []

    @Option(help: "The address to listen on (0.0.0.0 for every interface, e.g. in a container).")
    var host = "127.0.0.1"

    @Option(help: "The TCP port (0: any free port, printed at start).")
    var port = 8080

    @Option(name: .customLong("grpc-port"), help: "Also serve gRPC on this TCP port (0: any free port, printed at start).")
    var grpcPort: Int?

    @Option(name: .customLong("grpc-max-message-bytes"), help: "The largest gRPC request message accepted (RESOURCE_EXHAUSTED above).")
    var maximumMessageBytes = 64 << 20

    @Option(name: .customLong("model-repository"), help: "A folder of models (NAME/model.json or NAME/model.onnx), loaded at start; clients can load and unload them.")
    var modelRepository: String?

    @Option(name: .customLong("max-batch"), help: "The most images one batch holds (1: no dynamic batching).")
    var maximumBatch = 16

    @Option(name: .customLong("max-wait-ms"), help: "How long, in milliseconds, the first request of a batch waits for others.")
    var maximumWaitMilliseconds = 2.0

    @Option(help: "Threads for OpenBLAS and Anvil's loops.")
    var threads: Int?

    @Option(name: .customLong("max-body-bytes"), help: "The largest request body accepted (413 above).")
    var maximumBodyBytes = 64 << 20

    @Option(name: .customLong("read-timeout"), help: "Seconds a request body may take to arrive (408 after).")
    var readTimeout = 30.0

    @Option(name: .customLong("idle-timeout"), help: "Seconds an idle connection is kept open (at least --read-timeout).")
    var idleTimeout = 75.0

    @Option(name: .customLong("log-level"), help: "trace, debug, info (one line per request), notice, warning, error or critical.")
    var logLevel = "info"

    func validate() throws {
        guard !model.isEmpty || modelRepository != nil else { throw ValidationError("give at least one --model or a --model-repository") }
        guard (0 ... 65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        if let grpcPort, !(0 ... 65535).contains(grpcPort) { throw ValidationError("--grpc-port must be between 0 and 65535") }
        if let grpcPort, grpcPort != 0, grpcPort == port { throw ValidationError("--grpc-port must differ from --port") }
        guard maximumMessageBytes >= 1 else { throw ValidationError("--grpc-max-message-bytes must be at least 1") }
        guard maximumBatch >= 1 else { throw ValidationError("--max-batch must be at least 1") }
        guard maximumWaitMilliseconds >= 0 else { throw ValidationError("--max-wait-ms must not be negative") }
        if let threads, threads < 1 { throw ValidationError("--threads must be at least 1") }
        guard maximumBodyBytes >= 1 else { throw ValidationError("--max-body-bytes must be at least 1") }
        guard readTimeout > 0, idleTimeout >= readTimeout else {
            throw ValidationError("--read-timeout must be positive and --idle-timeout at least as long")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("--log-level '\(logLevel)' is not a level") }
        _ = try Self.pairs(in: Array(CommandLine.arguments.dropFirst()), models: model, names: name)
    }

    func run() async throws {
        if let threads { Compute.threadCount = threads }
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "anvil.serve")
        let served: [ServedModel]
        do {
            served = try Self.pairs(in: Array(CommandLine.arguments.dropFirst()), models: model, names: name).map { reference, name in
                let loaded = try ModelLoader.load(reference)
                logger.info("loaded", metadata: ["model": "\(name ?? loaded.defaultName)", "from": "\(loaded.description)"])
                return try ServedModel(name: name ?? loaded.defaultName, model: loaded.model, maximumBatch: maximumBatch,
                                       maximumWait: .microseconds(Int64(maximumWaitMilliseconds * 1000)), layout: loaded.layout)
            }
        } catch let error as AnvilError {
            throw CommandFailure(error.message)
        }
        let configuration = ServeConfiguration(host: host, port: port, maximumBodyBytes: maximumBodyBytes,
                                               readTimeout: .milliseconds(Int64(readTimeout * 1000)),
                                               idleTimeout: .milliseconds(Int64(idleTimeout * 1000)),
                                               grpcPort: grpcPort, maximumMessageBytes: maximumMessageBytes)
        let server: InferenceServer
        do {
            let repository = try modelRepository.map {
                try ModelRepository(directory: URL(fileURLWithPath: $0), maximumBatch: maximumBatch,
                                    maximumWait: .microseconds(Int64(maximumWaitMilliseconds * 1000)))
            }
            server = try InferenceServer(models: served, repository: repository, configuration: configuration, logger: logger)
        } catch let error as AnvilError {
            throw CommandFailure(error.message)
        }
        let announcement = Task {
            guard let port = try? await server.port() else { return }
            var grpc = ""
            if grpcPort != nil {
                guard let bound = try? await server.grpcPort() else { return }
                grpc = " and grpc://\(host):\(bound)"
            }
            // One line on standard output for scripts that started it with --port 0.
            let line = "anvil serve: listening on http://\(host):\(port)\(grpc) (models: \(server.models.map(\.name).joined(separator: ", ")); threads \(Compute.threadCount))\n"
            FileHandle.standardOutput.write(Data(line.utf8))
        }
        do {
            try await server.run()
        } catch {
            throw CommandFailure("serve: \(error)")
        }
        announcement.cancel()
    }

    /// Each `--model` with the `--name` after it (if any), in command-line order. ArgumentParser
    /// keeps the two lists apart, so the order is read back from the raw arguments.
    static func pairs(in arguments: [String], models: [String], names: [String]) throws -> [(model: String, name: String?)] {
        var pairs: [(model: String, name: String?)] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            var option: String?, value: String?
            for candidate in ["--model", "--name"] {
                if argument == candidate, index + 1 < arguments.count {
                    option = candidate
                    value = arguments[index + 1]
                    index += 1
                } else if argument.hasPrefix(candidate + "=") {
                    option = candidate
                    value = String(argument.dropFirst(candidate.count + 1))
                }
            }
            index += 1
            guard let option, let value else { continue }
            if option == "--model" {
                pairs.append((value, nil))
            } else {
                guard let last = pairs.indices.last else { throw ValidationError("--name \(value) comes before any --model; it names the --model before it") }
                guard pairs[last].name == nil else { throw ValidationError("--model \(pairs[last].model) has two --name options") }
                pairs[last].name = value
            }
        }
        // Values that look like options (`--name --model`) are ArgumentParser's business; the two
        // readings must agree.
        guard pairs.map(\.model) == models, pairs.compactMap(\.name) == names else {
            throw ValidationError("could not pair each --name with its --model; write --model PATH --name NAME")
        }
        return pairs
    }
}
