#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read-only, private memory mapping of a whole file, unmapped when released.
///
/// If the file is truncated while mapped, reading the lost pages raises SIGBUS: load with
/// ``ParameterLoading/copied`` when files may change under a running process.
public final class MappedFile: @unchecked Sendable {
    // @unchecked Sendable: `path` and `bytes` are `let`s; the mapping is read-only (PROT_READ)
    // and unmapped only in deinit, when no thread holds the file; `releasePages` is an
    // madvise call, safe from any thread (the pages come back unchanged on the next read).

    /// The file's path.
    public let path: String
    /// The mapped bytes.
    public let bytes: UnsafeRawBufferPointer
    /// The file's device, inode, size and modification time when it was mapped.
    public let identity: FileIdentity

    /// Maps the file at `path`; throws for a missing file, a directory, or an unreadable file.
    public init(path: String) throws {
        self.path = path
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw AnvilError(.fileError, "cannot read '\(path)': \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw AnvilError(.fileError, "'\(path)' is not a regular file")
        }
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else {
            throw AnvilError(.fileError, "cannot open '\(path)': \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        // The size and identity of the file opened (the path may have been replaced since `stat`).
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw AnvilError(.fileError, "'\(path)' is not a regular file")
        }
        let size = Int(info.st_size)
        identity = FileIdentity(info)
        if size == 0 {
            bytes = UnsafeRawBufferPointer(start: nil, count: 0)
            return
        }
        guard let base = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), base != MAP_FAILED else {
            throw AnvilError(.fileError, "cannot map '\(path)': \(String(cString: strerror(errno)))")
        }
        bytes = UnsafeRawBufferPointer(start: base, count: size)
    }

    /// Float32 values starting at byte `offset`; throws if they do not fit or are misaligned.
    public func floats(offset: Int, count: Int, name: String) throws -> ParameterData {
        let (length, overflow) = count.multipliedReportingOverflow(by: MemoryLayout<Float>.size)
        guard offset >= 0, count >= 0, !overflow, offset <= bytes.count, length <= bytes.count - offset else {
            throw AnvilError(.invalidFile, "tensor '\(name)' at offset \(offset) with \(count) floats does not fit in '\(path)' (\(bytes.count) bytes)")
        }
        guard offset % MemoryLayout<Float>.alignment == 0 else {
            throw AnvilError(.invalidFile, "tensor '\(name)' in '\(path)' starts at offset \(offset), not a multiple of 4")
        }
        guard count > 0, let base = bytes.baseAddress else {
            return ParameterData(buffer: UnsafeBufferPointer(start: nil, count: 0), owner: self)
        }
        let start = (base + offset).assumingMemoryBound(to: Float.self)
        return ParameterData(buffer: UnsafeBufferPointer(start: start, count: count), owner: self)
    }

    /// Takes the whole pages inside `range` (part of this mapping) out of the process's resident
    /// memory (`madvise(MADV_DONTNEED)`). The mapping is private and read-only, so its pages are
    /// never modified: they stay in the page cache and come back, unchanged, on the next read.
    /// For weights the compile step has transformed into a copy and will not read again.
    public func releasePages(_ range: UnsafeRawBufferPointer) {
        guard let start = range.baseAddress, let base = bytes.baseAddress,
              start >= base, start + range.count <= base + bytes.count else { return }
        LargeAllocation.releaseWholePages(range)
    }

    deinit {
        if let base = bytes.baseAddress { munmap(UnsafeMutableRawPointer(mutating: base), bytes.count) }
    }
}
