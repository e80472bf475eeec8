import Foundation

/// Gives freed heap memory back to the system (glibc's `malloc_trim`, looked up at run time;
/// nothing where the C library has none).
///
/// Large temporaries freed before and during a compile (a converter's arrays, reordered copies)
/// can sit in malloc's heap rather than in mappings of their own (see ``LargeAllocation``), and
/// freed heap pages stay resident until trimmed.
enum FreedHeapMemory {
    private typealias Trim = @convention(c) (Int) -> Int32

    /// glibc's `malloc_trim`, except under a sanitizer: AddressSanitizer replaces `malloc` and
    /// never sets glibc's heap up, and glibc's `malloc_trim` then walks arenas that do not exist
    /// (it crashed a compile under ASan). Allocators that forward to glibc's (the test bundle's
    /// allocation counter) keep the trim.
    private static let trim: Trim? = {
        #if os(Linux)
        let everywhere = UnsafeMutableRawPointer(bitPattern: 0)
        let sanitizers = ["__asan_init", "__hwasan_init", "__tsan_init", "__msan_init"]
        guard !sanitizers.contains(where: { dlsym(everywhere, $0) != nil }),
              let symbol = dlsym(everywhere, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: Trim.self)
        #else
        return nil
        #endif
    }()

    /// Whether `release()` trims: glibc's `malloc_trim` is there and no sanitizer owns `malloc`.
    static var trims: Bool { trim != nil }

    /// Returns the free pages of the heap to the system.
    static func release() {
        _ = trim?(0)
    }
}
