import Foundation

/// A raw little-endian float32 file written a batch at a time.
final class FloatFileWriter {
    private let path: String
    private let handle: FileHandle

    /// Creates (or empties) `path`.
    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw CommandFailure("cannot write '\(path)'")
        }
        self.path = path
        self.handle = handle
    }

    /// Appends `values`.
    func write(_ values: [Float]) throws {
        do {
            try handle.write(contentsOf: values.withUnsafeBufferPointer { Data(buffer: $0) })
        } catch {
            throw CommandFailure("cannot write '\(path)': \(error.localizedDescription)")
        }
    }

    deinit { try? handle.close() }
}
