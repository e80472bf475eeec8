#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which file, in which state: device, inode, size and modification time (to the nanosecond).
/// Two mappings with equal identities hold the same bytes unless the file was rewritten in place
/// within one timestamp tick, which no writer of model files does. Keys a ``WeightCache`` entry
/// to the weights it was made from without reading (or hashing) them.
public struct FileIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The device holding the file.
    public let device: UInt64
    /// The file's inode on that device.
    public let inode: UInt64
    /// The file's size in bytes.
    public let size: Int64
    /// The last modification, in nanoseconds since 1970.
    public let modified: Int64

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        #if canImport(Darwin)
        modified = Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
        #else
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        #endif
    }

    /// `device:inode size@modified`.
    public var description: String { "\(device):\(inode) \(size)@\(modified)" }
}
