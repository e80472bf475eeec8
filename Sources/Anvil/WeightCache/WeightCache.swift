import Foundation

/// A folder where `compile` keeps the weights it transforms (Winograd filters), so the next
/// compile of the same weights maps them from a file instead of computing them again.
///
/// Transformed filters take 16/9 to 4 times the memory of the weights, and making them is most
/// of a compile: VGG16's 120 MB of filters are fresh pages the kernel zeroes before the transform
/// writes them. From the cache they are a read-only mapping of a file in the page cache: nothing
/// to zero, nothing to compute, pages faulted in by the first prediction that reads them, and
/// under memory pressure the kernel can drop them instead of swapping them out.
///
/// Entries are keyed by what the values depend on: the weights' file (device, inode, size,
/// modification time — ``FileIdentity``), their place in it, the layout, a folded scale, the
/// algorithm and the instruction set whose body made them. Only weights mapped from a file
/// (model files, blob and directory sources, safetensors) are cached; arrays are not (hashing
/// them would cost what the cache saves). A kernel also recomputes a sample of every entry it maps
/// and compares it bit for bit, so an entry made by another build of Anvil, or damaged, is
/// replaced rather than used. Writing is best effort: a folder that cannot be written only
/// means no cache; files are written under a temporary name and renamed, so concurrent processes
/// never see half an entry. Delete the folder to reclaim the space.
///
/// ``ModelFile/compiledModel(validateParameters:weightCache:)`` uses ``standard``;
/// `Model.compile(…, weightCache:, from:)` uses none unless given one.
public final class WeightCache: Sendable {
    /// What happened to the lookups of this cache since it was made.
    public struct Statistics: Sendable, Equatable {
        /// Entries found, checked and used.
        public var hits = 0
        /// Entries not found (then made and written).
        public var misses = 0
        /// Entries found but refused: a wrong header, size or key, or a sample that did not match.
        public var rejected = 0
        /// Entries written.
        public var written = 0
        /// Entries that could not be written (an unwritable folder, a full disk).
        public var writeFailures = 0
    }

    /// The folder holding the entries (created on the first write).
    public let directory: URL
    private let counters = TracedMutex(Statistics())

    /// A cache in `directory`.
    public init(directory: URL) {
        self.directory = directory
    }

    /// The default cache: the folder `ANVIL_WEIGHT_CACHE` names, or `$XDG_CACHE_HOME/anvil`,
    /// or `~/.cache/anvil`; `nil` (no cache) when `ANVIL_WEIGHT_CACHE` is `off`, `0` or `none`,
    /// or no home folder is known. Read once per process.
    public static let standard: WeightCache? = {
        let settings = Settings.current
        if let value = settings.weightCache {
            if ["off", "0", "none"].contains(value.lowercased()) { return nil }
            return WeightCache(directory: URL(fileURLWithPath: value))
        }
        if let base = settings.cacheHome, base.hasPrefix("/") {
            return WeightCache(directory: URL(fileURLWithPath: base).appendingPathComponent("anvil"))
        }
        guard let home = settings.home, home.hasPrefix("/") else { return nil }
        return WeightCache(directory: URL(fileURLWithPath: home).appendingPathComponent(".cache/anvil"))
    }()

    /// The lookups so far.
    public var statistics: Statistics { counters.withLock { $0 } }

    /// Where `data` lies if it is mapped from a file (its identity, byte offset and count), the
    /// part of a key naming the weights; `nil` for weights in memory.
    static func origin(of data: ParameterData) -> String? {
        guard let file = data.owner as? MappedFile, let base = file.bytes.baseAddress,
              let start = data.buffer.baseAddress else { return nil }
        let offset = UnsafeRawPointer(start) - base
        guard offset >= 0, offset + data.count * MemoryLayout<Float>.size <= file.bytes.count else { return nil }
        return "file \(file.identity) offset \(offset) count \(data.count)"
    }

    /// The entry under `key` holding `count` floats, mapped, or `nil` when there is none or it is
    /// not one (counted as a miss or a rejection).
    func entry(key: String, count: Int) -> WeightCacheEntry? {
        let url = directory.appendingPathComponent(WeightCacheEntry.fileName(for: key))
        guard FileManager.default.fileExists(atPath: url.path) else {
            record { $0.misses += 1 }
            return nil
        }
        guard let entry = WeightCacheEntry(url: url, key: key, count: count) else {
            record { $0.rejected += 1 }
            return nil
        }
        return entry
    }

    /// Counts a mapped entry whose sample did not match (the caller makes the values again).
    func reject() { record { $0.rejected += 1 } }

    /// Counts a mapped entry used.
    func hit() { record { $0.hits += 1 } }

    /// Writes `values` under `key`, replacing any entry; failures are counted, not thrown.
    func store(key: String, values: UnsafeBufferPointer<Float>) {
        let written = WeightCacheEntry.save(key: key, values: values, directory: directory)
        record { written ? ($0.written += 1) : ($0.writeFailures += 1) }
    }

    private func record(_ change: (inout Statistics) -> Void) {
        counters.withLock { change(&$0) }
    }
}
