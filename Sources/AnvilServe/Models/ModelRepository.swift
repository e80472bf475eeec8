import Anvil
import Foundation

/// A model repository (Triton's model repository extension, `--model-repository DIR`): a folder
/// with a folder per model, `DIR/NAME/model.json` (an Anvil model file with its parameters) or
/// `DIR/NAME/model.onnx`, served as `NAME`. The server loads every model at start; clients load
/// and unload them while it runs (`POST /v2/repository/models/NAME/load|unload`), a load reading
/// the folder again.
public struct ModelRepository: Sendable {
    /// The repository folder.
    public let directory: URL
    /// The most images one batch of a repository model holds.
    public let maximumBatch: Int
    /// How long the first request of a batch waits for others.
    public let maximumWait: Duration

    /// The files a model folder may hold, in the order they are looked for.
    static let modelFiles = ["model.json", "model.onnx"]

    /// A repository at `directory`; throws unless it is a folder and the batching options are valid.
    public init(directory: URL, maximumBatch: Int = 16, maximumWait: Duration = .milliseconds(2)) throws {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw AnvilError(.invalidOption, "serve: the model repository '\(directory.path)' is not a folder")
        }
        guard maximumBatch >= 1, maximumWait >= .zero else {
            throw AnvilError(.invalidOption, "serve: the repository's batching needs a batch of at least 1 and a wait of at least 0")
        }
        self.directory = directory
        self.maximumBatch = maximumBatch
        self.maximumWait = maximumWait
    }

    /// The names of the models the repository holds now (folders with a model file), sorted.
    public func names() -> [String] {
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return folders.filter { file(for: $0) != nil }.sorted()
    }

    /// The model file of `name`, if the repository holds it.
    func file(for name: String) -> URL? {
        // A name is one folder below the repository, never a path out of it.
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else { return nil }
        let folder = directory.appendingPathComponent(name, isDirectory: true)
        return Self.modelFiles.lazy.map { folder.appendingPathComponent($0) }.first { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// Loads and compiles the model `name` (slow: it reads and compiles the file); throws
    /// ``ProtocolError`` 404 if the repository has no such model, 400 if it does not load.
    func load(_ name: String) throws -> ServedModel {
        guard let file = file(for: name) else {
            throw ProtocolError(.notFound, "the model repository has no model '\(name)' (a folder \(name)/ holding \(Self.modelFiles.joined(separator: " or ")))")
        }
        do {
            let loaded = try ModelLoader.load(file.path)
            return try ServedModel(name: name, model: loaded.model, maximumBatch: maximumBatch, maximumWait: maximumWait, layout: loaded.layout)
        } catch let error as AnvilError {
            throw ProtocolError.badRequest("model '\(name)' did not load from \(file.path): \(error.message)")
        }
    }
}
