import Foundation

/// Gives freed heap memory back to the system (glibc's `malloc_trim`, looked up at run time;
/// nothing where the C library has none).
///
/// Large temporaries freed before and during a compile (a converter's arrays, reordered copies)
/// can sit in malloc's heap rather than in mappings of their own (see ``LargeAllocation``), and
/// freed heap pages stay resident until trimmed.
enum FreedHeapMemory {
    private typealias Trim = @convention(c) (Int) -> Int32

    private static let trim: Trim? = {
        #if os(Linux)
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: Trim.self)
        #else
        return nil
        #endif
    }()

    /// Returns the free pages of the heap to the system.
    static func release() {
        _ = trim?(0)
    }
}
