import Foundation
import Testing
@testable import Anvil

/// `ParameterData(moving:)` copies an array into aligned storage while giving the array's pages
/// back: the values must arrive whole, and an array that shares the storage must keep its values.
@Suite struct ParameterDataMovingTests {
    /// The value at `i` of the test arrays, computed afresh (no copy of the moved array is kept).
    static func value(_ i: Int) -> Float { Float(i % 9_973) * 0.5 - Float(i % 7) }

    /// Sizes around one page, the 1 MB chunk and several chunks with a partial last one.
    @Test(arguments: [0, 1, 1_023, 1_024, 262_143, 262_144, 262_145, 1_000_003])
    func movedValuesArriveWhole(_ count: Int) {
        var values = (0 ..< count).map(Self.value)
        let data = ParameterData(moving: &values)
        #expect(values.isEmpty)
        #expect(data.count == count)
        #expect(Int(bitPattern: data.buffer.baseAddress) % 64 == 0)
        #expect(data.withUnsafeBufferPointer { buffer in (0 ..< count).allSatisfy { buffer[$0] == Self.value($0) } })
    }

    /// Another array sharing the storage keeps its values (only unshared pages are given back).
    @Test func sharedStorageIsLeftAlone() {
        let count = 700_001
        var values = (0 ..< count).map(Self.value)
        let kept = values
        let data = ParameterData(moving: &values)
        #expect(kept.count == count)
        #expect((0 ..< count).allSatisfy { kept[$0] == Self.value($0) })
        #expect(data.withUnsafeBufferPointer { buffer in (0 ..< count).allSatisfy { buffer[$0] == Self.value($0) } })
    }
}
