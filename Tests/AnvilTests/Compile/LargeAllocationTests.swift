import Foundation
import Testing
@testable import Anvil

/// Large buffers (weights, Winograd filters, workspaces) are mapped from the kernel and given
/// back whole: a freed block must leave the process, not stay among malloc's heap holes.
@Suite struct LargeAllocationTests {
    /// Sizes below, at and above the mapped threshold and the huge page.
    static let sizes = [1, 4_000, 131_068, 131_072, (2 << 20) - 4, (2 << 20) + 12_344, 9 << 20]

    /// Every block is aligned (64 bytes; a huge page from 2 MB), writable to its last byte, and
    /// zero when it is mapped.
    @Test(arguments: sizes)
    func blocksAreAlignedAndWritable(_ bytes: Int) throws {
        let block = try #require(LargeAllocation.allocate(bytes: bytes))
        defer { LargeAllocation.release(block, bytes: bytes) }
        let address = Int(bitPattern: block)
        #expect(address % 64 == 0)
        if bytes >= LargeAllocation.hugePage { #expect(address % LargeAllocation.hugePage == 0) }
        let view = UnsafeMutableRawBufferPointer(start: block, count: bytes)
        if LargeAllocation.startsZeroed(bytes: bytes) { #expect(view.allSatisfy { $0 == 0 }) }
        for i in 0 ..< bytes { view[i] = UInt8(truncatingIfNeeded: i &* 31) }
        #expect((0 ..< bytes).allSatisfy { view[$0] == UInt8(truncatingIfNeeded: $0 &* 31) })
    }

    /// A released mapped block is no longer part of the process (`mincore` finds no mapping),
    /// so its pages cannot stay resident.
    @Test(arguments: [131_072, (2 << 20) + 12_344, 9 << 20])
    func releasedBlocksLeaveTheProcess(_ bytes: Int) throws {
        #if os(Linux)
        let block = try #require(LargeAllocation.allocate(bytes: bytes))
        memset(block, 1, bytes)
        let pages = (bytes + LargeAllocation.pageSize - 1) / LargeAllocation.pageSize
        var residency = [UInt8](repeating: 0, count: pages)
        #expect(mincore(block, bytes, &residency) == 0)
        #expect(residency.allSatisfy { $0 & 1 == 1 })
        LargeAllocation.release(block, bytes: bytes)
        #expect(mincore(block, bytes, &residency) == -1 && errno == ENOMEM)
        #endif
    }

    /// `FloatBox(count:)` holds zeros at every size, mapped or not.
    @Test(arguments: [1, 1_000, 40_000, 700_000])
    func floatBoxesStartAtZero(_ count: Int) {
        let box = FloatBox(count: count)
        #expect(box.buffer.allSatisfy { $0 == 0 })
        box.mutableBuffer[count - 1] = 2
        let copy = withExtendedLifetime(box) { FloatBox(Array(box.buffer)) }
        #expect(withExtendedLifetime(copy) { copy.buffer.last } == 2)
    }
}
