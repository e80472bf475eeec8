import Foundation

/// One raw little-endian float32 file per tensor in a directory, named
/// `<prefix><layer>_<suffix><fileSuffix>.<extension>` — by default Forge's `conv1_W.bin`, `conv1_b.bin`.
public struct DirectoryParameterSource: ParameterSource {
    /// The directory.
    public let directory: URL
    /// Text before the tensor name.
    public let prefix: String
    /// Text after the tensor name, before the extension.
    public let suffix: String
    /// The file extension, without the dot (empty for none).
    public let fileExtension: String
    /// Memory-mapped or copied.
    public let loading: ParameterLoading

    /// Creates a source; throws if `directory` is not a readable directory.
    public init(directory: URL, prefix: String = "", suffix: String = "", fileExtension: String = "bin",
                loading: ParameterLoading = .memoryMapped) throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw AnvilError(.fileError, "parameter directory '\(directory.path)' does not exist or is not a directory")
        }
        self.directory = directory
        self.prefix = prefix
        self.suffix = suffix
        self.fileExtension = fileExtension
        self.loading = loading
    }

    /// The file that holds the tensor for `request`.
    public func fileURL(for request: ParameterRequest) -> URL {
        directory.appendingPathComponent(fileName(forTensor: request.tensorName))
    }

    /// Maps (or reads) the tensor's file; its size must be exactly `request.count` floats.
    public func data(for request: ParameterRequest) throws -> ParameterData {
        let url = fileURL(for: request)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw AnvilError(.missingParameter, "missing file '\(url.path)' for \(request)")
        }
        let file = try MappedFile(path: url.path)
        guard file.bytes.count == request.count * MemoryLayout<Float>.size else {
            throw AnvilError(.invalidParameter,
                             "file '\(url.path)' has \(file.bytes.count) bytes; \(request) needs \(request.count * 4) bytes")
        }
        return loading.finish(try file.floats(offset: 0, count: request.count, name: request.tensorName))
    }

    /// The file names in the directory that match the naming pattern, as tensor names.
    public var tensorNames: [String]? {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        let ending = fileExtension.isEmpty ? suffix : "\(suffix).\(fileExtension)"
        return files.compactMap { file in
            guard file.hasPrefix(prefix), file.hasSuffix(ending), file.count > prefix.count + ending.count else { return nil }
            return String(file.dropFirst(prefix.count).dropLast(ending.count))
        }
    }

    private func fileName(forTensor name: String) -> String {
        fileExtension.isEmpty ? "\(prefix)\(name)\(suffix)" : "\(prefix)\(name)\(suffix).\(fileExtension)"
    }
}
