import Anvil
import Foundation

/// Locations of committed fixtures and optional external data, and raw float I/O, for every test
/// target. A target with fixtures of its own (`AnvilTests`, `AnvilVisionTests`) reaches them
/// through its own `Bundle.module`; `shared` holds the ones several targets read.
enum Fixtures {
    /// `Tests/AnvilTestSupport/Fixtures` as copied into this target's bundle: `mnist/` (the first
    /// 256 test images, labels and PyTorch's logits) and `zoo/<network>/` (small zoo networks with
    /// PyTorch's outputs), read by the engine, model and command tests alike.
    static var shared: URL { Bundle.module.resourceURL!.appendingPathComponent("Fixtures") }

    /// The repository root, from this file's path (symlinks resolved, so a wrapper package that
    /// links the sources in still finds the real repository).
    static var repository: URL {
        URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent()  // AnvilTestSupport
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // repository root
    }

    /// `../shared/forge-mnist` beside the repository (Forge's weights and test drawings).
    static var forgeMNISTDirectory: URL {
        repository.deletingLastPathComponent().appendingPathComponent("shared/forge-mnist")
    }

    /// ``forgeMNISTDirectory``, if its weights are present.
    static var forgeMNIST: URL? {
        let url = forgeMNISTDirectory
        return FileManager.default.fileExists(atPath: url.appendingPathComponent("conv1_W.bin").path) ? url : nil
    }

    /// `Data/mnist/` in the repository (filled by Scripts/setup/fetch_mnist.sh).
    static var mnistDataDirectory: URL { repository.appendingPathComponent("Data/mnist") }

    /// ``mnistDataDirectory`` with the test set, if fetched.
    static var mnistData: URL? {
        let url = mnistDataDirectory
        return FileManager.default.fileExists(atPath: url.appendingPathComponent("t10k-images-idx3-ubyte").path) ? url : nil
    }

    /// The `anvil` executable built next to the test bundles, if it was built.
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

    static func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }

    /// A fresh directory under the system's temporary directory, named `<prefix>-<UUID>`; the
    /// caller removes it.
    static func temporaryDirectory(prefix: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Writes `tensors` back to back, in this order, into the file at `url` (as the converters
    /// write weights.bin) and returns the index that reads them back (``BlobParameterSource``).
    static func writeBlob(_ tensors: [(name: String, values: [Float])], to url: URL) throws -> [String: BlobParameterSource.Entry] {
        var blob: [Float] = []
        var index: [String: BlobParameterSource.Entry] = [:]
        for (name, values) in tensors {
            index[name] = BlobParameterSource.Entry(offset: blob.count * 4, count: values.count)
            blob += values
        }
        try blob.withUnsafeBytes { try Data($0).write(to: url) }
        return index
    }
}
