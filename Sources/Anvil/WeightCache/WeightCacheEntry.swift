#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// One ``WeightCache`` file, mapped read-only: a header, then the floats.
///
/// Layout: the 8 bytes `ANVILWC1`; the key's length in bytes and the float count, each a
/// little-endian UInt64; the key (UTF-8); zeros up to the next 4096-byte boundary; the floats,
/// little-endian. The payload starts on a page boundary, so it is as aligned as any allocation
/// the kernels make; the file's size must be exactly the header's plus the floats'.
final class WeightCacheEntry: @unchecked Sendable {
    // @unchecked Sendable: `file` is a read-only mapping (Sendable) and `pointer` points into it;
    // both are `let`s and nothing writes through them.

    private let file: MappedFile
    /// The cached floats.
    let pointer: UnsafePointer<Float>
    /// How many.
    let count: Int

    static let magic = Array("ANVILWC1".utf8)
    static let pageSize = 4096

    /// The file name of `key`'s entry: its FNV-1a hash in hex (the key itself is in the file).
    static func fileName(for key: String) -> String {
        var hash = FNV1a()
        hash.add(bytes: key.utf8)
        return hash.hex + ".anvilweights"
    }

    /// The payload's offset for a key of `keyBytes` bytes.
    static func payloadOffset(keyBytes: Int) -> Int {
        (magic.count + 16 + keyBytes + pageSize - 1) / pageSize * pageSize
    }

    /// Maps the entry at `url`; `nil` unless it is one, for exactly `key`, of exactly `count` floats.
    init?(url: URL, key: String, count: Int) {
        guard let file = try? MappedFile(path: url.path), let base = file.bytes.baseAddress else { return nil }
        let keyBytes = Array(key.utf8)
        let offset = Self.payloadOffset(keyBytes: keyBytes.count)
        let bytes = file.bytes
        guard bytes.count == offset + count * MemoryLayout<Float>.size,
              Array(bytes[0 ..< Self.magic.count]) == Self.magic,
              Self.readUInt64(bytes, at: Self.magic.count) == UInt64(keyBytes.count),
              Self.readUInt64(bytes, at: Self.magic.count + 8) == UInt64(count),
              Array(bytes[(Self.magic.count + 16) ..< (Self.magic.count + 16 + keyBytes.count)]) == keyBytes
        else { return nil }
        self.file = file
        self.pointer = (base + offset).assumingMemoryBound(to: Float.self)
        self.count = count
    }

    private static func readUInt64(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in (0 ..< 8).reversed() { value = value << 8 | UInt64(bytes[offset + i]) }
        return value
    }

    /// Writes an entry for `key` into `directory` (created if missing) under a temporary name,
    /// then renames it into place; `false` on any failure (nothing is left behind).
    static func save(key: String, values: UnsafeBufferPointer<Float>, directory: URL) -> Bool {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            return false
        }
        let keyBytes = Array(key.utf8)
        var header = [UInt8](repeating: 0, count: payloadOffset(keyBytes: keyBytes.count))
        header.replaceSubrange(0 ..< magic.count, with: magic)
        for (slot, value) in [UInt64(keyBytes.count), UInt64(values.count)].enumerated() {
            for i in 0 ..< 8 { header[magic.count + 8 * slot + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(i))) }
        }
        header.replaceSubrange((magic.count + 16) ..< (magic.count + 16 + keyBytes.count), with: keyBytes)
        let final = directory.appendingPathComponent(fileName(for: key)).path
        let temporary = final + ".\(getpid()).\(UInt32.random(in: 0 ... .max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL, 0o644)
        guard fd >= 0 else { return false }
        let complete = header.withUnsafeBytes { writeAll(fd, $0) } && writeAll(fd, UnsafeRawBufferPointer(values))
        let closed = close(fd) == 0
        guard complete, closed, rename(temporary, final) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }
}
