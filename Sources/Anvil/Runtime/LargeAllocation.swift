import Foundation

/// Memory for large buffers (weights, transformed filters, workspaces): 64-byte aligned, and
/// from 128 KB up mapped straight from the kernel rather than taken from malloc's heap.
///
/// Why not malloc: glibc raises its mmap threshold each time a large mapped block is freed (up
/// to 32 MB), after which blocks of that size come from the heap, and freed heap memory stays
/// resident. The compile step frees many large temporaries (a converter's arrays, reordered
/// copies), so the weights it then keeps would land among heap holes that stay resident beside
/// them. Mapped memory is returned whole by `release`.
///
/// From 2 MB up the memory is aligned to a huge page and advised into huge pages: where
/// transparent huge pages are `madvise`-only (a common setting), a buffer that outgrows the
/// caches then streams without a TLB miss every 4 KB. Only the whole 2 MB pages are advised: a
/// last partial one would become a whole huge page once touched (VGG16's Winograd filters would
/// take 5 MB more), so the tail stays in 4 KB pages.
enum LargeAllocation {
    /// A transparent huge page.
    static let hugePage = 2 << 20
    /// Blocks from this size are mapped, smaller ones come from malloc.
    static let mappedFrom = 128 << 10
    /// The kernel's page size.
    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// `bytes` of memory to give back with ``release(_:bytes:)``, or nil when it cannot be had.
    /// Mapped blocks (``startsZeroed(bytes:)``) are zero; smaller ones are uninitialised.
    static func allocate(bytes: Int) -> UnsafeMutableRawPointer? {
        guard bytes >= mappedFrom else {
            var raw: UnsafeMutableRawPointer?
            guard posix_memalign(&raw, 64, max(bytes, 1)) == 0 else { return nil }
            return raw
        }
        let length = roundedToPages(bytes)
        // Room to slide the block up to a huge-page boundary; the slack is unmapped below.
        let slack = bytes >= hugePage ? hugePage : 0
        guard let mapped = mmap(nil, length + slack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              mapped != MAP_FAILED else { return nil }
        let address = Int(bitPattern: mapped)
        let start = slack == 0 ? address : (address + hugePage - 1) / hugePage * hugePage
        if start > address { munmap(mapped, start - address) }
        let end = address + length + slack
        if end > start + length { munmap(UnsafeMutableRawPointer(bitPattern: start + length), end - start - length) }
        let block = UnsafeMutableRawPointer(bitPattern: start)!
        #if os(Linux)
        if bytes >= hugePage { _ = madvise(block, bytes / hugePage * hugePage, MADV_HUGEPAGE) }
        #endif
        return block
    }

    /// Gives back a block of `bytes` from ``allocate(bytes:)``.
    static func release(_ pointer: UnsafeMutableRawPointer, bytes: Int) {
        if bytes >= mappedFrom { munmap(pointer, roundedToPages(bytes)) } else { free(pointer) }
    }

    /// Whether a block of `bytes` from ``allocate(bytes:)`` is zero already (it is mapped).
    static func startsZeroed(bytes: Int) -> Bool { bytes >= mappedFrom }

    /// Takes the whole pages inside `range` out of resident memory (`madvise(MADV_DONTNEED)`):
    /// anonymous memory reads as zero afterwards, a private file mapping as the file again.
    /// The partial pages at either end stay. Nothing off Linux.
    static func releaseWholePages(_ range: UnsafeRawBufferPointer) {
        #if os(Linux)
        guard let start = range.baseAddress else { return }
        let first = (Int(bitPattern: start) + pageSize - 1) / pageSize * pageSize
        let end = (Int(bitPattern: start) + range.count) / pageSize * pageSize
        guard end > first, let address = UnsafeMutableRawPointer(bitPattern: first) else { return }
        _ = madvise(address, end - first, MADV_DONTNEED)
        #endif
    }

    private static func roundedToPages(_ bytes: Int) -> Int { (bytes + pageSize - 1) / pageSize * pageSize }
}
