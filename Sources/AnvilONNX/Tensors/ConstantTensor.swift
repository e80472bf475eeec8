import Foundation

/// A constant the importer knows the values of (an initializer, a `Constant` node, a folded shape
/// subgraph): ONNX's shape and row-major values, integer or floating point.
///
/// The NumPy arrays of the Python converter: shape subgraphs (Shape → Gather → Concat → Reshape)
/// fold on these, and weights are read from them.
struct ConstantTensor {
    /// The values, as ONNX's element type puts them: integers (int64, int32, bool, ...) or floats.
    enum Storage {
        /// Integer values (every integer type and bool).
        case integers([Int64])
        /// Floating-point values (float, double, float16, bfloat16 read as float32).
        case floats([Float])
    }

    /// The ONNX shape (empty for a scalar).
    var shape: [Int]
    /// The values in row-major order.
    var storage: Storage

    /// A float constant.
    init(shape: [Int], floats: [Float]) {
        self.shape = shape
        storage = .floats(floats)
    }

    /// An integer constant.
    init(shape: [Int], integers: [Int64]) {
        self.shape = shape
        storage = .integers(integers)
    }

    /// Whether the values are integers.
    var isInteger: Bool {
        if case .integers = storage { return true }
        return false
    }

    /// The number of values.
    var count: Int {
        switch storage {
        case .integers(let v): return v.count
        case .floats(let v): return v.count
        }
    }

    /// The rank.
    var rank: Int { shape.count }

    /// The values as float32 (weights).
    var floats: [Float] {
        switch storage {
        case .integers(let v): return v.map { Float($0) }
        case .floats(let v): return v
        }
    }

    /// The values as doubles (arithmetic on small constants).
    var doubles: [Double] {
        switch storage {
        case .integers(let v): return v.map { Double($0) }
        case .floats(let v): return v.map { Double($0) }
        }
    }

    /// The values as integers (shapes, axes, indices); floats are truncated as NumPy's int() does.
    func integers() throws -> [Int] {
        switch storage {
        case .integers(let v): return v.map { Int($0) }
        case .floats(let v):
            return try v.map { value in
                guard value.isFinite, abs(value) < 9.2e18 else { throw ImportFailure("the value \(value) is not an integer") }
                return Int(value)
            }
        }
    }

    /// The one value, when there is exactly one.
    var scalar: Double? { count == 1 ? doubles[0] : nil }

    /// The element count of `shape`, or an error when it overflows or a dimension is negative.
    static func elementCount(_ shape: [Int]) throws -> Int {
        var total = 1
        for d in shape {
            guard d >= 0 else { throw ImportFailure("the shape \(shape) has a negative dimension") }
            let (product, overflow) = total.multipliedReportingOverflow(by: d)
            guard !overflow, product <= 1 << 34 else { throw ImportFailure("the shape \(shape) holds too many values") }
            total = product
        }
        return total
    }

    /// Row-major strides of `shape`.
    static func strides(_ shape: [Int]) -> [Int] {
        var strides = [Int](repeating: 1, count: shape.count)
        var step = 1
        for axis in stride(from: shape.count - 1, through: 0, by: -1) {
            strides[axis] = step
            step *= max(shape[axis], 1)
        }
        return strides
    }

    /// A constant of `shape` whose value i is this one's value `offsets[i]`.
    func picking(_ offsets: [Int], shape: [Int]) -> ConstantTensor {
        switch storage {
        case .integers(let v): return ConstantTensor(shape: shape, integers: offsets.map { v[$0] })
        case .floats(let v): return ConstantTensor(shape: shape, floats: offsets.map { v[$0] })
        }
    }

    /// Calls `body` with every multi-index of `shape` in row-major order.
    static func forEachIndex(_ shape: [Int], _ body: ([Int]) -> Void) {
        guard !shape.contains(0) else { return }
        var index = [Int](repeating: 0, count: shape.count)
        while true {
            body(index)
            var axis = shape.count - 1
            while axis >= 0 {
                index[axis] += 1
                if index[axis] < shape[axis] { break }
                index[axis] = 0
                axis -= 1
            }
            if axis < 0 { return }
        }
    }

    /// The same values with another shape of the same count.
    func reshaped(_ newShape: [Int]) throws -> ConstantTensor {
        guard try Self.elementCount(newShape) == count else {
            throw ImportFailure("cannot reshape a constant of shape \(shape) to \(newShape)")
        }
        var result = self
        result.shape = newShape
        return result
    }

    /// The axes permuted: result axis i is axis `permutation[i]` (NumPy's transpose).
    ///
    /// Walks the result in row-major order with a running source offset (no per-element index
    /// or offset arrays): a fully connected layer's weights can be hundreds of megabytes.
    func transposed(_ permutation: [Int]? = nil) throws -> ConstantTensor {
        let permutation = permutation ?? Array((0 ..< rank).reversed())
        guard permutation.sorted() == Array(0 ..< rank) else {
            throw ImportFailure("perm \(permutation) is not a permutation of \(rank) axes")
        }
        let newShape = permutation.map { shape[$0] }
        let strides = Self.strides(shape)
        let steps = permutation.map { strides[$0] }
        func permute<T>(_ values: [T]) -> [T] {
            guard !values.isEmpty, !newShape.contains(0) else { return [] }
            guard rank > 1 else { return values }
            let last = rank - 1, inner = newShape[last], innerStep = steps[last]
            return [T](unsafeUninitializedCapacity: values.count) { result, initialized in
                var index = [Int](repeating: 0, count: rank)
                var base = 0, written = 0
                values.withUnsafeBufferPointer { source in
                    while written < values.count {
                        var offset = base
                        for j in 0 ..< inner {
                            (result.baseAddress! + written + j).initialize(to: source[offset])
                            offset += innerStep
                        }
                        written += inner
                        // Odometer over the outer axes, moving the base offset by each axis's step.
                        var axis = last - 1
                        while axis >= 0 {
                            index[axis] += 1
                            base += steps[axis]
                            if index[axis] < newShape[axis] { break }
                            base -= steps[axis] * newShape[axis]
                            index[axis] = 0
                            axis -= 1
                        }
                    }
                }
                initialized = values.count
            }
        }
        switch storage {
        case .integers(let v): return ConstantTensor(shape: newShape, integers: permute(v))
        case .floats(let v): return ConstantTensor(shape: newShape, floats: permute(v))
        }
    }

    /// The values broadcast to `target` (NumPy's broadcast_to); an error when they do not fit.
    func broadcast(to target: [Int]) throws -> ConstantTensor {
        guard rank <= target.count else { throw ImportFailure("cannot broadcast shape \(shape) to \(target)") }
        let padded = [Int](repeating: 1, count: target.count - rank) + shape
        for (a, b) in zip(padded, target) where a != b && a != 1 {
            throw ImportFailure("cannot broadcast shape \(shape) to \(target)")
        }
        if padded == target { return try reshaped(target) }
        _ = try Self.elementCount(target)
        let strides = Self.strides(padded)
        var offsets: [Int] = []
        Self.forEachIndex(target) { index in
            var offset = 0
            for axis in 0 ..< target.count where padded[axis] != 1 { offset += index[axis] * strides[axis] }
            offsets.append(offset)
        }
        return picking(offsets, shape: target)
    }

    /// The broadcast shape of two shapes (NumPy's rules).
    static func broadcastShape(_ a: [Int], _ b: [Int]) throws -> [Int] {
        let rank = max(a.count, b.count)
        let pa = [Int](repeating: 1, count: rank - a.count) + a
        let pb = [Int](repeating: 1, count: rank - b.count) + b
        return try zip(pa, pb).map { x, y in
            if x == y || y == 1 { return x }
            if x == 1 { return y }
            throw ImportFailure("shapes \(a) and \(b) do not broadcast (aligned on their last axes, each pair of extents must match or hold a 1)")
        }
    }

    /// An element-wise combination of two constants with broadcasting: integers stay integers
    /// when both are (ONNX's integer arithmetic), otherwise float32.
    func combined(with other: ConstantTensor, integer: (Int64, Int64) throws -> Int64,
                  real: (Double, Double) -> Double) throws -> ConstantTensor {
        let shape = try Self.broadcastShape(self.shape, other.shape)
        let a = try broadcast(to: shape), b = try other.broadcast(to: shape)
        if case .integers(let x) = a.storage, case .integers(let y) = b.storage {
            return ConstantTensor(shape: shape, integers: try zip(x, y).map { try integer($0, $1) })
        }
        return ConstantTensor(shape: shape, floats: zip(a.doubles, b.doubles).map { Float(real($0, $1)) })
    }

    /// Values `start ..< start + count` (step 1) along `axis`, or any NumPy slice by indices.
    func taking(_ indices: [Int], axis: Int) throws -> ConstantTensor {
        guard axis >= 0, axis < rank else { throw ImportFailure("axis \(axis) is out of range for shape \(shape)") }
        var newShape = shape
        newShape[axis] = indices.count
        let strides = Self.strides(shape)
        var offsets: [Int] = []
        Self.forEachIndex(newShape) { index in
            var offset = 0
            for a in 0 ..< rank { offset += (a == axis ? indices[index[a]] : index[a]) * strides[a] }
            offsets.append(offset)
        }
        return picking(offsets, shape: newShape)
    }

    /// Concatenation along `axis` (NumPy's concatenate).
    static func concatenate(_ parts: [ConstantTensor], axis: Int) throws -> ConstantTensor {
        guard let first = parts.first else { throw ImportFailure("nothing to concatenate") }
        let rank = first.rank
        guard rank > 0 else { throw ImportFailure("zero-dimensional arrays cannot be concatenated") }
        let axis = axis < 0 ? axis + rank : axis
        guard axis >= 0, axis < rank else { throw ImportFailure("axis \(axis) is out of range for rank \(rank)") }
        for part in parts where part.rank != rank || (0 ..< rank).contains(where: { $0 != axis && part.shape[$0] != first.shape[$0] }) {
            throw ImportFailure("cannot concatenate shapes \(parts.map(\.shape)) along axis \(axis)")
        }
        var shape = first.shape
        shape[axis] = parts.reduce(0) { $0 + $1.shape[axis] }
        let outer = first.shape[..<axis].reduce(1, *)
        let integer = parts.allSatisfy(\.isInteger)
        var ints: [Int64] = [], floats: [Float] = []
        for o in 0 ..< outer {
            for part in parts {
                let inner = part.shape[axis...].reduce(1, *)
                if integer, case .integers(let v) = part.storage { ints += v[o * inner ..< (o + 1) * inner] }
                else { floats += part.floats[o * inner ..< (o + 1) * inner] }
            }
        }
        return integer ? ConstantTensor(shape: shape, integers: ints) : ConstantTensor(shape: shape, floats: floats)
    }

    /// The values converted by `body` (unary folding), keeping the storage kind for floats.
    func mapped(_ body: (Double) -> Double) -> ConstantTensor {
        // Element by element, without a Double copy of the whole tensor.
        switch storage {
        case .integers(let v): return ConstantTensor(shape: shape, floats: v.map { Float(body(Double($0))) })
        case .floats(let v): return ConstantTensor(shape: shape, floats: v.map { Float(body(Double($0))) })
        }
    }
}
