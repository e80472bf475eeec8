#if canImport(Glibc)
import Glibc
#endif

/// Idle workspaces kept between predictions: a fixed array of retained references under a
/// mutex. Taking and returning one performs no allocation, even in a debug build (where
/// Swift collections copy on mutation inside closures).
final class WorkspacePool: @unchecked Sendable {
    private let capacity = 64
    private let slots: UnsafeMutablePointer<Unmanaged<CompiledModel.Workspace>?>
    private var count = 0
    private var mutex = pthread_mutex_t()

    init() {
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: nil, count: capacity)
        pthread_mutex_init(&mutex, nil)
    }

    /// An idle workspace for `batch`, if one is kept.
    func take(batch: Int) -> CompiledModel.Workspace? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        var index = count - 1
        while index >= 0 {
            if let slot = slots[index], slot.takeUnretainedValue().batch == batch {
                count -= 1
                slots[index] = slots[count]
                slots[count] = nil
                return slot.takeRetainedValue()
            }
            index -= 1
        }
        return nil
    }

    /// Keeps `workspace` for reuse (or frees it when the pool is full).
    func give(_ workspace: CompiledModel.Workspace) {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        guard count < capacity else { return }
        slots[count] = Unmanaged.passRetained(workspace)
        count += 1
    }

    /// Frees every kept workspace.
    func removeAll() {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        for index in 0 ..< count { slots[index]?.release(); slots[index] = nil }
        count = 0
    }

    deinit {
        removeAll()
        slots.deallocate()
        pthread_mutex_destroy(&mutex)
    }
}
