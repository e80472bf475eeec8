import Foundation

/// All tensors in one raw little-endian float32 file, located by an index of byte offsets.
public struct BlobParameterSource: ParameterSource {
    /// Where one tensor lies in the blob.
    public struct Entry: Hashable, Sendable {
        /// Byte offset from the start of the file (a multiple of 4).
        public var offset: Int
        /// Number of float32 values.
        public var count: Int

        /// Creates an entry.
        public init(offset: Int, count: Int) {
            self.offset = offset
            self.count = count
        }
    }

    /// The mapped blob.
    public let file: MappedFile
    /// Tensor name → location.
    public let index: [String: Entry]
    /// Memory-mapped or copied.
    public let loading: ParameterLoading

    /// Maps `url` and checks every index entry fits inside it and no two overlap.
    public init(url: URL, index: [String: Entry], loading: ParameterLoading = .memoryMapped) throws {
        file = try MappedFile(path: url.path)
        self.index = index
        self.loading = loading
        var ranges: [(Int, Int, String)] = []
        for (name, entry) in index {
            let (bytes, overflow) = entry.count.multipliedReportingOverflow(by: 4)
            let (end, overflow2) = entry.offset.addingReportingOverflow(bytes)
            guard entry.offset >= 0, entry.count >= 0, !overflow, !overflow2, end <= file.bytes.count else {
                throw AnvilError(.invalidFile, "blob index entry '\(name)' (offset \(entry.offset), \(entry.count) floats) lies outside '\(url.path)' (\(file.bytes.count) bytes)")
            }
            guard entry.offset % 4 == 0 else {
                throw AnvilError(.invalidFile, "blob index entry '\(name)' in '\(url.path)' has offset \(entry.offset), not a multiple of 4")
            }
            if entry.count > 0 { ranges.append((entry.offset, end, name)) }
        }
        ranges.sort { $0.0 < $1.0 || ($0.0 == $1.0 && $0.2 < $1.2) }
        for (a, b) in zip(ranges, ranges.dropFirst()) where b.0 < a.1 {
            throw AnvilError(.invalidFile, "blob index entries '\(a.2)' and '\(b.2)' overlap in '\(url.path)'")
        }
    }

    /// The tensor's values; its indexed count must equal `request.count`.
    public func data(for request: ParameterRequest) throws -> ParameterData {
        guard let entry = index[request.tensorName] else {
            throw AnvilError(.missingParameter, "blob '\(file.path)' has no tensor '\(request.tensorName)' for \(request)")
        }
        guard entry.count == request.count else {
            throw AnvilError(.invalidParameter, "blob tensor '\(request.tensorName)' has \(entry.count) values; \(request) needs \(request.count)")
        }
        return loading.finish(try file.floats(offset: entry.offset, count: entry.count, name: request.tensorName))
    }

    /// The index's keys.
    public var tensorNames: [String]? { Array(index.keys) }
}
