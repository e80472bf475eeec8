import Foundation

/// Which steps of a batch run a few images at a time, and how many at a time.
///
/// At batch 8, MobileNet v1 and v2's high-resolution layers read and write 26–48 MB per step,
/// more than the last-level cache holds, so every step streams its input from memory. Running
/// those steps on one or two images at a time keeps one step's output in cache for the next.
/// The later, smaller layers run on the whole batch, where their GEMMs are widest and their
/// weights are read once.
///
/// The plan depends only on the model, the batch size and the cache budget, so a model gives
/// the same results at every call: nothing is timed to choose it. ``Model/batchPasses(batch:inputShapes:)``
/// tells how a batch will run.
public struct BatchPasses: Equatable, Sendable, CustomStringConvertible {
    /// Steps `0 ..< stepCount` run in passes; the steps after them on the whole batch.
    public let stepCount: Int
    /// Images per pass; the last pass takes what remains.
    public let size: Int

    /// E.g. `the first 23 steps 3 images at a time`.
    public var description: String { "the first \(stepCount) steps \(size) image\(size == 1 ? "" : "s") at a time" }

    /// The plan for `batch` images, or `nil` when the whole batch runs each step at once.
    ///
    /// - Parameters:
    ///   - footprints: floats per image each step reads and writes (its inputs and its output).
    ///   - parameters: parameter floats of each step (read again by every pass).
    ///   - budgetBytes: the bytes one step's activations may take to stay in cache (0: never).
    ///
    /// The passes cover the steps up to the last one whose activations at the whole batch exceed
    /// the budget, and stop before a step whose weights outweigh its activations at the whole batch
    /// (each pass reads the weights again: more traffic than keeping its activations in cache
    /// saves). A pass is as many images as the largest of those steps fits in the budget. Fewer
    /// than ``minimumSteps`` steps, or passes of more than half the batch, are not worth it: the
    /// copies in and out cost about what they save.
    static func plan(footprints: [Int], parameters: [Int], batch: Int, budgetBytes: Int) -> BatchPasses? {
        guard batch > 1, budgetBytes > 0 else { return nil }
        let bytes = MemoryLayout<Float>.stride
        guard let last = footprints.lastIndex(where: { saturatingProduct($0, bytes, batch) > budgetBytes }) else { return nil }
        let stepCount = (0 ... last).first { parameters[$0] > saturatingProduct(footprints[$0], batch) } ?? last + 1
        guard stepCount >= minimumSteps, let largest = footprints[0 ..< stepCount].max(), largest > 0 else { return nil }
        let size = max(1, budgetBytes / saturatingProduct(largest, bytes))
        guard size * 2 <= batch else { return nil }
        return BatchPasses(stepCount: stepCount, size: size)
    }

    /// The fewest steps worth running in passes. With fewer, copying the inputs in and the results
    /// out costs about what the passes save.
    static let minimumSteps = 4

    /// The number of passes for `batch` images.
    public func count(batch: Int) -> Int { (batch + size - 1) / size }

    /// The cache budget of this process: `ANVIL_PASS_BUDGET_MB` if set (0 turns passes off),
    /// else a quarter of the last-level cache the first CPU reports (8 MiB if it reports none):
    /// the cache is shared with the step's weights and scratch, the other threads and, on a
    /// server, other processes, so a quarter leaves room for them where a half does not.
    static let defaultBudgetBytes: Int = {
        if let megabytes = Settings.current.passBudgetMegabytes {
            return Int(megabytes * 1_048_576)
        }
        return (lastLevelCacheBytes() ?? 32 << 20) / 4
    }()

    /// The budget a workspace is planned with: ``defaultBudgetBytes`` unless a test sets another
    /// for the task it runs in.
    @TaskLocal static var budgetOverride: Int?

    /// The size of the highest cache level of CPU 0 (`/sys/devices/system/cpu/cpu0/cache`), which
    /// unlike `sysconf(_SC_LEVEL3_CACHE_SIZE)` is the slice one core shares, not the chip's total.
    static func lastLevelCacheBytes() -> Int? {
        let directory = "/sys/devices/system/cpu/cpu0/cache"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return nil }
        var best: (level: Int, bytes: Int)?
        for entry in entries where entry.hasPrefix("index") {
            func read(_ name: String) -> String? {
                (try? String(contentsOfFile: "\(directory)/\(entry)/\(name)", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            guard let level = read("level").flatMap({ Int($0) }), read("type") != "Instruction",
                  let size = read("size").flatMap(parseCacheSize), level > (best?.level ?? 0) else { continue }
            best = (level, size)
        }
        return best?.bytes
    }

    /// Parses sysfs's cache sizes: `32768K`, `1M`, or plain bytes.
    static func parseCacheSize(_ text: String) -> Int? {
        let multipliers: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30]
        if let last = text.last, let multiplier = multipliers[last] {
            return Int(text.dropLast()).map { $0 * multiplier }
        }
        return Int(text)
    }
}
