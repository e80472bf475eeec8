import Foundation
import Testing
import Anvil

/// Helpers shared by the Failure* suites: temporary files, float files, and checks that an
/// operation throws a given ``AnvilError`` — recording its message for `docs/errors.md`.
enum Failure {
    /// A fresh directory under the system's temporary directory; removed by `cleanUp`.
    static func temporaryDirectory(_ label: String = #function) throws -> URL {
        let stem = label.filter { $0.isLetter || $0.isNumber }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("anvil-failure-\(stem)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func cleanUp(_ url: URL) {
        // chmod 000 files would survive a plain removal as non-root; restore access first.
        if let files = FileManager.default.enumerator(atPath: url.path) {
            for case let file as String in files { chmod(url.appendingPathComponent(file).path, 0o755) }
        }
        try? FileManager.default.removeItem(at: url)
    }

    /// Writes little-endian float32 values.
    static func write(_ values: [Float], to url: URL) throws {
        try values.withUnsafeBufferPointer { Data(buffer: $0) }.write(to: url)
    }

    /// Writes raw bytes.
    static func write(bytes: [UInt8], to url: URL) throws {
        try Data(bytes).write(to: url)
    }

    /// Whether `chmod 000` actually denies this process reads (it does not for root or a
    /// process with CAP_DAC_OVERRIDE, as in many containers).
    static let permissionsAreEnforced: Bool = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("anvil-failure-probe-\(getpid())")
        defer { try? FileManager.default.removeItem(at: url) }
        guard FileManager.default.createFile(atPath: url.path, contents: Data([1, 2, 3, 4])) else { return false }
        chmod(url.path, 0)
        let fd = open(url.path, O_RDONLY)
        if fd >= 0 { close(fd) }
        return fd < 0
    }()

    /// Runs `body`, requires an ``AnvilError`` with `code` whose message contains each of
    /// `mentioning`, and returns it.
    @discardableResult
    static func expect(_ code: AnvilError.Code, mentioning: [String] = [], _ context: String = "",
                       sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> AnvilError? {
        do {
            try body()
            Issue.record("\(context): expected AnvilError .\(code), nothing was thrown", sourceLocation: sourceLocation)
        } catch let error as AnvilError {
            #expect(error.code == code, "\(context): code .\(error.code), expected .\(code): \(error.message)",
                    sourceLocation: sourceLocation)
            for text in mentioning {
                #expect(error.message.contains(text), "\(context): message does not mention '\(text)': \(error.message)",
                        sourceLocation: sourceLocation)
            }
            return error
        } catch {
            Issue.record("\(context): expected AnvilError .\(code), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }

    /// A small network with every kind of stored parameter used by the file tests:
    /// conv (3x3, 2 -> 3, forge layout: borrowed from the source without a copy) --> relu
    /// --> dense `fc` (4x4x3 -> 2). 54 + 3 + 96 + 2 = 155 floats.
    static func model() throws -> Model {
        let input = Input(width: 4, height: 4, channels: 2)
        return try Model(input: input, output: input --> Convolution(kernel: (3, 3), channels: 3, activation: .relu, name: "conv")
            --> Dense(neurons: 2, name: "fc"))
    }

    /// The tensors of ``model()`` (deterministic).
    static let tensors: [(name: String, values: [Float])] = {
        var state: UInt32 = 12345
        func next() -> Float {
            state = state &* 1_103_515_245 &+ 12345
            return Float(Int(state >> 8) % 2001 - 1000) / 1000
        }
        return [("conv_W", (0 ..< 54).map { _ in next() }), ("conv_b", (0 ..< 3).map { _ in next() }),
                ("fc_W", (0 ..< 96).map { _ in next() }), ("fc_b", (0 ..< 2).map { _ in next() })]
    }()

    static var arraySource: ArrayParameterSource {
        ArrayParameterSource(Dictionary(uniqueKeysWithValues: tensors.map { ($0.name, $0.values) }))
    }

    /// Writes ``tensors`` as `<name>.bin` files into `directory`.
    static func writeDirectory(_ directory: URL) throws {
        for (name, values) in tensors { try write(values, to: directory.appendingPathComponent("\(name).bin")) }
    }

    /// Writes ``tensors`` back to back into one blob and returns its index.
    static func writeBlob(_ url: URL) throws -> [String: BlobParameterSource.Entry] {
        try Fixtures.writeBlob(tensors, to: url)
    }

    /// A batch of two inputs for ``model()``.
    static func input() throws -> Tensor {
        try Tensor(batch: 2, shape: Shape(height: 4, width: 4, channels: 2), values: (0 ..< 64).map { Float($0 % 7) / 7 - 0.4 })
    }

    /// Whether this process runs under AddressSanitizer or ThreadSanitizer (which take over
    /// fatal signals).
    static let underSanitizer: Bool = {
        let handle = dlopen(nil, RTLD_NOW)
        return dlsym(handle, "__asan_init") != nil || dlsym(handle, "__tsan_init") != nil
    }()
}
