/// The values of one parameter tensor, wherever they live: a Swift array, a memory-mapped
/// file, a buffer you manage.
///
/// `ParameterData` keeps its storage alive; Anvil may keep referring to it after
/// `compile` (to avoid copying weights already in the layout it computes in).
public struct ParameterData: @unchecked Sendable {
    // @unchecked Sendable: `buffer` is an unsafe pointer and `owner` any object. Both are `let`s;
    // Anvil only reads through `buffer` (never writes) and only retains `owner` (never calls
    // it), so sharing the value between threads shares read-only memory kept alive by `owner`.
    // A caller who hands Anvil memory it later writes breaks the documented contract, not this.

    /// The values.
    public let buffer: UnsafeBufferPointer<Float>
    /// Whatever keeps `buffer` valid (an array box, a mapped file), retained with it.
    public let owner: AnyObject?

    /// Wraps an array (no copy beyond Swift's own storage).
    public init(_ values: [Float]) {
        let box = FloatBox(values)
        self.buffer = box.buffer
        self.owner = box
    }

    /// Moves an array's values into Anvil's aligned storage and leaves `values` empty. The array's
    /// pages go back to the system a megabyte at a time as they are copied, so a tensor of
    /// hundreds of megabytes (VGG16's first fully connected layer: 411 MB) is never held twice,
    /// as it is for a moment with ``init(_:)``. When the array's storage is shared with another
    /// array, the shared storage is left alone: this is then an ordinary copy.
    public init(moving values: inout [Float]) {
        let box = FloatBox(count: values.count)
        let chunk = 1 << 18  // floats: 1 MB
        values.withUnsafeMutableBufferPointer { source in
            guard let base = source.baseAddress else { return }
            let raw = UnsafeRawPointer(base), page = LargeAllocation.pageSize
            var released = raw  // the copied bytes before this are given back
            for start in stride(from: 0, to: source.count, by: chunk) {
                let end = min(start + chunk, source.count)
                (box.pointer + start).update(from: base + start, count: end - start)
                let copied = UnsafeRawPointer(base + end)
                LargeAllocation.releaseWholePages(UnsafeRawBufferPointer(start: released, count: copied - released))
                // The page the copied bytes end in is given back with the next stretch.
                released = max(released, UnsafeRawPointer(bitPattern: Int(bitPattern: copied) / page * page)!)
            }
        }
        values = []
        self.buffer = box.buffer
        self.owner = box
    }

    /// Wraps memory that `owner` keeps alive (for example a mapped file).
    public init(buffer: UnsafeBufferPointer<Float>, owner: AnyObject?) {
        self.buffer = buffer
        self.owner = owner
    }

    /// The number of values.
    public var count: Int { buffer.count }

    /// A copy of the values. (`buffer` is valid only while this `ParameterData`, which
    /// retains its owner, is alive: copy through this property, not `Array(data.buffer)`
    /// on a temporary.)
    public var values: [Float] {
        withExtendedLifetime(owner) { Array(buffer) }
    }

    /// Calls `body` with the values, keeping their storage alive for the call.
    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Float>) throws -> R) rethrows -> R {
        try withExtendedLifetime(owner) { try body(buffer) }
    }
}

extension ParameterData {
    /// Lets the pages of a memory-mapped tensor leave resident memory once the compile step has
    /// made its own copy (see ``MappedFile/releasePages(_:)``; reading it later still works).
    /// Does nothing for other storage.
    func releaseMappedPages() {
        guard let file = owner as? MappedFile else { return }
        file.releasePages(UnsafeRawBufferPointer(buffer))
    }
}

/// An owned, immovable float buffer, 64-byte aligned: kernels load weights 32 bytes at a
/// time, and from malloc's 16-byte alignment half of those loads split a cache line, which
/// slows the kernels that read them.
final class FloatBox: @unchecked Sendable {
    // @unchecked Sendable: `pointer` and `count` are `let`s and the memory is written only while
    // the box is being built (here, or by the compile step packing weights into it) before any
    // kernel holding it is published; afterwards every thread only reads it.

    let pointer: UnsafeMutablePointer<Float>
    let count: Int

    /// `count` zeros (in ``LargeAllocation``'s memory: large boxes are mapped, not on the heap).
    init(count: Int) {
        self.count = count
        let bytes = max(count, 1) * MemoryLayout<Float>.stride
        guard let raw = LargeAllocation.allocate(bytes: bytes) else { fatalError("cannot allocate \(bytes) bytes of weights") }
        pointer = raw.bindMemory(to: Float.self, capacity: max(count, 1))
        if !LargeAllocation.startsZeroed(bytes: bytes) { pointer.initialize(repeating: 0, count: max(count, 1)) }
    }

    convenience init(_ values: [Float]) {
        self.init(count: values.count)
        values.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { pointer.update(from: base, count: values.count) }
        }
    }

    var buffer: UnsafeBufferPointer<Float> { UnsafeBufferPointer(start: pointer, count: count) }
    var mutableBuffer: UnsafeMutableBufferPointer<Float> { UnsafeMutableBufferPointer(start: pointer, count: count) }

    deinit { LargeAllocation.release(UnsafeMutableRawPointer(pointer), bytes: max(count, 1) * MemoryLayout<Float>.stride) }
}
