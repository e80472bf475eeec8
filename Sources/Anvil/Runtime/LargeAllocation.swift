import Foundation

/// Memory for large buffers (workspaces, transformed filters): 64-byte aligned, and from 2 MB up
/// aligned to a huge page and advised into huge pages. This machine kind's transparent huge
/// pages are `madvise`-only, and a buffer that outgrows the caches then streams without a TLB
/// miss every 4 KB. Only the whole 2 MB pages are advised: a last partial one would become a
/// whole huge page once touched (VGG16's Winograd filters would take 5 MB more), so the tail
/// stays in 4 KB pages.
enum LargeAllocation {
    static let hugePage = 2 << 20

    /// `bytes` of uninitialised memory to release with `free`, or nil when it cannot be had.
    static func allocate(bytes: Int) -> UnsafeMutableRawPointer? {
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, bytes >= hugePage ? hugePage : 64, bytes) == 0, let raw else { return nil }
        #if os(Linux)
        if bytes >= hugePage { _ = madvise(raw, bytes / hugePage * hugePage, MADV_HUGEPAGE) }
        #endif
        return raw
    }
}
