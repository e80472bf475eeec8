import Foundation

/// Reads whole files for the decoders, turning Foundation's errors into ``VisionError``.
enum FileReading {
    /// The contents of the file at `url` (memory-mapped when safe), or a `.cannotRead`
    /// error naming the path.
    static func data(of url: URL) throws -> Data {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw VisionError(.cannotRead, source: url.path, message: "no such file")
        }
        if isDirectory.boolValue {
            throw VisionError(.cannotRead, source: url.path, message: "is a directory, not a file")
        }
        // A device or FIFO (/dev/zero, a named pipe) would be read forever or block.
        var info = stat()
        if stat(url.path, &info) == 0, (info.st_mode & S_IFMT) != S_IFREG {
            throw VisionError(.cannotRead, source: url.path, message: "is not a regular file (a device, FIFO or socket)")
        }
        do {
            return try Data(contentsOf: url, options: .mappedIfSafe)
        } catch {
            throw VisionError(.cannotRead, source: url.path, message: "cannot read file: \(error.localizedDescription)")
        }
    }
}
