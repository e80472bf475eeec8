import CAllocationCounter
import Foundation
import Testing
@testable import Anvil

/// `FreedHeapMemory` trims glibc's heap, and not under a sanitizer:
/// under AddressSanitizer (which replaces `malloc`) glibc's `malloc_trim` crashed a compile.
@Suite struct FreedHeapMemoryTests {
    /// Trimming is on exactly when no sanitizer is linked in (the allocation counter's
    /// compile-time check of the same, `__has_feature`, is the reference), and `release()` is
    /// safe either way.
    @Test func trimsOnlyWithoutASanitizer() {
        #if os(Linux)
        #expect(FreedHeapMemory.trims == (anvil_allocation_counting_enabled() == 1))
        #endif
        FreedHeapMemory.release()
    }

    /// Freed heap blocks held below a live one stay resident until `release()` returns them.
    @Test func releaseReturnsFreedHeapPages() throws {
        #if os(Linux)
        guard FreedHeapMemory.trims else { return }
        // 16 KB blocks stay in the heap (below glibc's mmap threshold); the last one, kept,
        // stops free() from trimming the top itself.
        let count = 2_048, size = 16 << 10
        var blocks: [UnsafeMutableRawPointer] = []
        for _ in 0 ... count { blocks.append(try #require(malloc(size))) }
        for block in blocks { memset(block, 1, size) }
        let sorted = blocks.dropLast().sorted { UInt(bitPattern: $0) < UInt(bitPattern: $1) }
        let pageSize = LargeAllocation.pageSize
        // The pages wholly inside each freed block (its malloc header lies just before it).
        func residentShare() -> Double {
            var resident = 0, total = 0
            for block in sorted {
                let start = (Int(bitPattern: block) + pageSize - 1) / pageSize * pageSize
                let end = (Int(bitPattern: block) + size) / pageSize * pageSize
                guard end > start else { continue }
                var pages = [UInt8](repeating: 0, count: (end - start) / pageSize)
                guard mincore(UnsafeMutableRawPointer(bitPattern: start), end - start, &pages) == 0 else { continue }
                resident += pages.filter { $0 & 1 == 1 }.count
                total += pages.count
            }
            return total == 0 ? 0 : Double(resident) / Double(total)
        }
        #expect(residentShare() > 0.9)
        for block in blocks.dropLast() { free(block) }
        FreedHeapMemory.release()
        // Other tests' threads may take some of the freed memory again at once; most stays free.
        #expect(residentShare() < 0.5)
        free(blocks.last)
        #endif
    }
}
