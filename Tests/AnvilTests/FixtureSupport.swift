import Foundation

/// Locations of committed fixtures and optional external data, and raw float I/O.
enum Fixtures {
    /// `Tests/AnvilTests/Fixtures` as copied into the test bundle.
    static var root: URL { Bundle.module.resourceURL!.appendingPathComponent("Fixtures") }

    /// The repository root (from this file's path).
    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// `../shared/forge-mnist` beside the repository, if present.
    static var forgeMNIST: URL? {
        let url = repository.deletingLastPathComponent().appendingPathComponent("shared/forge-mnist")
        return FileManager.default.fileExists(atPath: url.appendingPathComponent("conv1_W.bin").path) ? url : nil
    }

    /// `Data/mnist` with the test set, if fetched.
    static var mnistData: URL? {
        let url = repository.appendingPathComponent("Data/mnist")
        return FileManager.default.fileExists(atPath: url.appendingPathComponent("t10k-images-idx3-ubyte").path) ? url : nil
    }

    /// The `anvil` executable built next to the test bundle, if it was built.
    static var anvilTool: URL? {
        var directory = Bundle.module.bundleURL.deletingLastPathComponent()
        for _ in 0 ..< 3 {
            let candidate = directory.appendingPathComponent("anvil")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }

    /// Reads raw little-endian float32 values.
    static func floats(_ url: URL) throws -> [Float] {
        let data = try Data(contentsOf: url)
        return data.withUnsafeBytes { raw in (0 ..< data.count / 4).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) } }
    }

    /// Reads raw bytes.
    static func bytes(_ url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }
}
