/// Idle workspaces kept between predictions: a fixed array of retained references under a
/// mutex (a ``TracedMutex``). Taking and returning one performs no allocation, even in a
/// debug build (where Swift collections copy on mutation inside closures).
///
/// The pool is bounded twice: at most ``capacity`` workspaces, and at most ``budgetFactor``
/// times the bytes of the largest workspace it has been given. Beyond either, the workspace
/// returned longest ago is freed. (Unbounded by bytes, a server batching requests dynamically
/// would keep up to 64 workspaces of every batch size from 1 to its maximum.) A workload that
/// reuses a few batch sizes keeps them all; one that cycles through many allocates a workspace
/// now and then.
final class WorkspacePool: Sendable {
    /// The most workspaces kept.
    static let capacity = 64
    /// Idle workspaces may take this many times the bytes of the largest one given so far.
    static let budgetFactor = 4

    /// The kept workspaces: `slots[0 ..< count]`, oldest first, each retained once. Reached
    /// only inside `idle`'s lock.
    private struct Idle: ~Copyable {
        let slots: UnsafeMutablePointer<Unmanaged<CompiledModel.Workspace>?>
        var count = 0
        /// The bytes of the kept workspaces.
        var bytes = 0
        /// The bytes of the largest workspace given so far.
        var largest = 0

        init() {
            slots = .allocate(capacity: WorkspacePool.capacity)
            slots.initialize(repeating: nil, count: WorkspacePool.capacity)
        }

        /// Takes slot `index` out, keeping the others in order; the caller owns its retain.
        mutating func remove(at index: Int) -> Unmanaged<CompiledModel.Workspace> {
            let slot = slots[index]!
            for next in index ..< count - 1 { slots[next] = slots[next + 1] }
            count -= 1
            slots[count] = nil
            bytes -= slot.takeUnretainedValue().byteCount
            return slot
        }

        /// Releases every kept workspace.
        mutating func removeAll() {
            for index in 0 ..< count { slots[index]?.release(); slots[index] = nil }
            count = 0
            bytes = 0
        }

        deinit {
            for index in 0 ..< count { slots[index]?.release() }
            slots.deallocate()
        }
    }

    private let idle = TracedMutex(Idle())

    /// An idle workspace for `batch`, if one is kept (the most recently returned).
    func take(batch: Int) -> CompiledModel.Workspace? {
        idle.withLock { idle in
            var index = idle.count - 1
            while index >= 0 {
                if let slot = idle.slots[index], slot.takeUnretainedValue().batch == batch {
                    return idle.remove(at: index).takeRetainedValue()
                }
                index -= 1
            }
            return nil
        }
    }

    /// Keeps `workspace` for reuse, then frees the oldest kept ones while the pool is over
    /// either bound (which may free `workspace` itself when it alone is over).
    func give(_ workspace: CompiledModel.Workspace) {
        idle.withLock { idle in
            idle.largest = max(idle.largest, workspace.byteCount)
            if idle.count == Self.capacity { idle.remove(at: 0).release() }
            idle.slots[idle.count] = Unmanaged.passRetained(workspace)
            idle.count += 1
            idle.bytes += workspace.byteCount
            let budget = idle.largest.multipliedReportingOverflow(by: Self.budgetFactor)
            while idle.count > 0, !budget.overflow, idle.bytes > budget.partialValue {
                idle.remove(at: 0).release()
            }
        }
    }

    /// The number of idle workspaces and their bytes (for tests).
    var contents: (count: Int, bytes: Int) {
        idle.withLock { ($0.count, $0.bytes) }
    }

    /// Frees every kept workspace.
    func removeAll() {
        idle.withLock { $0.removeAll() }
    }
}
