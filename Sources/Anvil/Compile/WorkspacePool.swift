/// Idle workspaces kept between predictions: a fixed array of retained references under a
/// mutex (a ``TracedMutex``). Taking and returning one performs no allocation, even in a
/// debug build (where Swift collections copy on mutation inside closures).
final class WorkspacePool: Sendable {
    /// The kept workspaces: `slots[0 ..< count]`, each retained once. Reached only inside `idle`'s lock.
    private struct Idle: ~Copyable {
        static let capacity = 64
        let slots: UnsafeMutablePointer<Unmanaged<CompiledModel.Workspace>?>
        var count = 0

        init() {
            slots = .allocate(capacity: Self.capacity)
            slots.initialize(repeating: nil, count: Self.capacity)
        }

        /// Releases every kept workspace.
        mutating func removeAll() {
            for index in 0 ..< count { slots[index]?.release(); slots[index] = nil }
            count = 0
        }

        deinit {
            for index in 0 ..< count { slots[index]?.release() }
            slots.deallocate()
        }
    }

    private let idle = TracedMutex(Idle())

    /// An idle workspace for `batch`, if one is kept.
    func take(batch: Int) -> CompiledModel.Workspace? {
        idle.withLock { idle in
            var index = idle.count - 1
            while index >= 0 {
                if let slot = idle.slots[index], slot.takeUnretainedValue().batch == batch {
                    idle.count -= 1
                    idle.slots[index] = idle.slots[idle.count]
                    idle.slots[idle.count] = nil
                    return slot.takeRetainedValue()
                }
                index -= 1
            }
            return nil
        }
    }

    /// Keeps `workspace` for reuse (or frees it when the pool is full).
    func give(_ workspace: CompiledModel.Workspace) {
        idle.withLock { idle in
            guard idle.count < Idle.capacity else { return }
            idle.slots[idle.count] = Unmanaged.passRetained(workspace)
            idle.count += 1
        }
    }

    /// Frees every kept workspace.
    func removeAll() {
        idle.withLock { $0.removeAll() }
    }
}
