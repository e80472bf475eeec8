import Anvil
import Foundation

/// A raw little-endian float32 file of whole images, read a batch at a time.
final class FloatFileReader {
    let path: String
    /// Images in the file.
    let images: Int
    private let imageFloats: Int
    private let handle: FileHandle

    /// Opens `path`; throws unless it holds a whole number (at least one) of images of `shape`.
    init(path: String, imageFloats: Int, shape: Shape) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CommandFailure("cannot read '\(path)'") }
        let bytes = Int(try handle.seekToEnd())
        try handle.seek(toOffset: 0)
        let floats = bytes / 4
        guard bytes % 4 == 0, floats >= imageFloats, floats % imageFloats == 0 else {
            throw CommandFailure("'\(path)' holds \(bytes) bytes, not a whole number of \(shape) images of float32 (\(imageFloats * 4) bytes each)")
        }
        self.path = path
        self.images = floats / imageFloats
        self.imageFloats = imageFloats
        self.handle = handle
    }

    /// The next `count` images' values.
    func read(images count: Int) throws -> [Float] {
        let wanted = count * imageFloats * 4
        guard let data = try handle.read(upToCount: wanted), data.count == wanted else {
            throw CommandFailure("'\(path)' ended early (it changed while being read)")
        }
        return data.withUnsafeBytes { raw in
            (0 ..< count * imageFloats).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) }
        }
    }

    deinit { try? handle.close() }
}
