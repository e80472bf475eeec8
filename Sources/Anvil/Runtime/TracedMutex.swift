import Synchronization

/// A `Synchronization.Mutex` whose hand-offs ThreadSanitizer can follow.
///
/// On Linux, `Mutex` takes an uncontended lock with an atomic compare-exchange compiled into
/// the caller, which ThreadSanitizer sees; a contended lock and its unlock go through the
/// kernel (`FUTEX_LOCK_PI`/`FUTEX_UNLOCK_PI`, in the uninstrumented Swift runtime), which it
/// does not, so it reports the protected accesses of two successive holders as a data race.
/// Here each holder, once it has the lock, acquire-loads `handoff`, and release-stores it before
/// unlocking: the mutex orders those accesses, so each holder's load reads its predecessor's
/// store and ThreadSanitizer sees the predecessor's critical section happen before. On x86-64
/// an acquiring load and a releasing store are plain moves: the lock costs what it did.
struct TracedMutex<Value: ~Copyable>: ~Copyable, Sendable {
    private let mutex: Mutex<Value>
    private let handoff = Atomic<Int>(0)

    /// A mutex protecting `value`.
    init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Calls `body` with the value, the lock held.
    @inline(__always)
    borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            let previous = handoff.load(ordering: .acquiring)
            defer { handoff.store(previous &+ 1, ordering: .releasing) }
            return try body(&value)
        }
    }
}
