import Anvil
import Foundation

/// `ReduceMean`, `ReduceSum`, `ReduceMax`, `ReduceMin`, `ReduceProd`, `ReduceL1`, `ReduceL2`,
/// `ReduceLogSumExp` and `ReduceSumSquare`: over the spatial axes of an image, a global pooling
/// (mean, sum and max); over any other axes but the batch's, the engine's `Reduce`; of a
/// constant, folded.
extension ONNXConverter {
    static func registerReductionOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        let reductions: [(String, ReduceOperation)] = [
            ("ReduceMean", .mean), ("ReduceSum", .sum), ("ReduceMax", .maximum), ("ReduceMin", .minimum),
            ("ReduceProd", .product), ("ReduceL1", .l1), ("ReduceL2", .l2), ("ReduceLogSumExp", .logSumExp),
            ("ReduceSumSquare", .sumSquare),
        ]
        for (op, operation) in reductions {
            table[op] = { c in { node, _ in try c.reduce(node, operation) } }
        }
    }

    /// The reduction `operation` of the node's input over its `axes` (an input from opset 13 for
    /// ReduceSum, 18 for the others; else the attribute), with `keepdims` and `noop_with_empty_axes`.
    func reduce(_ node: Onnx_NodeProto, _ operation: ReduceOperation) throws {
        let a = NodeAttributes(node)
        let axesAsInput = opset >= (operation == .sum ? 13 : 18)
        var requested: [Int]
        if axesAsInput && node.input.count > 1 && !node.input[1].isEmpty {
            requested = try constant(node, 1).integers()
        } else {
            requested = try a.ints("axes") ?? []
        }
        let keep = try a.int("keepdims", 1) != 0
        let noop = try a.int("noop_with_empty_axes", 0) != 0
        let input = try value(node, 0)
        if case .constant(let c)? = input {
            if requested.isEmpty && noop { return try set(node, .constant(c)) }
            return try set(node, .constant(try Self.folded(c, operation, axes: requested, keep: keep)))
        }
        let tensor = try act(node, anyLayout: true)
        if requested.isEmpty && noop { return try set(node, tensor) }
        let rank = tensor.onnxRank
        for axis in requested where axis < -rank || axis >= rank {
            throw fail(node, "axis \(axis) is out of range for a rank-\(rank) input")
        }
        let axes = requested.isEmpty ? Array(0 ..< rank) : Array(Set(requested.map { ($0 + rank) % rank })).sorted()
        guard axes.count == (requested.isEmpty ? rank : requested.count) else { throw fail(node, "axes \(requested) name an axis twice") }
        if let batch = axes.first(where: { tensor.holdsBatch($0) }) {
            throw fail(node, "reduces axis \(batch), which holds the batch; Anvil reduces within each item")
        }
        if try globalPooling(node, operation, tensor, axes: axes, keep: keep) { return }
        let source = try exact(node, tensor)
        let name = try add(node, [source.name]) { Reduce(operation, axes: axes.map { source.permutation[$0] }, name: $0) }
        var shape = source.shape
        for axis in axes { shape[source.permutation[axis] - 1] = 1 }
        let reduced = ComputedTensor(name, shape, permutation: source.permutation, batchFold: source.batchFold)
        if keep { return try set(node, reduced) }
        let onnx = reduced.onnxShape
        try set(node, try reshapeTensor(node, .tensor(reduced), onnx.indices.filter { !axes.contains($0) }.map { onnx[$0] }))
    }

    /// A mean, sum or maximum over every axis between an image's batch and its channels, or over
    /// the features of an `[N, F]` vector: the engine's global pooling. False when it is not one.
    func globalPooling(_ node: Onnx_NodeProto, _ operation: ReduceOperation, _ input: ComputedTensor, axes: [Int], keep: Bool) throws -> Bool {
        let pooling: (String) -> any Layer
        switch operation {
        case .mean, .sum: pooling = { GlobalAveragePooling(name: $0) }
        case .maximum: pooling = { GlobalMaxPooling(name: $0) }
        default: return false
        }
        guard input.isBatchFirst else { return false }
        let scaled = operation == .sum
        let rank = input.rank
        if rank == 2 && axes == [1] && keep && !input.isOpen {
            let c = input.shape[0]!
            let source = try add(node, [input.name], suffix: "_features") { Reshape([c, 1], name: $0) }
            var name = try add(node, [source], pooling)
            if scaled {
                name = try add(node, [name], suffix: "_sum") { Activation(.linear(a: Float(c), b: 0), name: $0) }
            }
            try set(node, ComputedTensor(name, [1]))
            return true
        }
        guard rank >= 3, Set(axes.map { input.permutation[$0] }) == Set(1 ..< rank - 1) else { return false }
        if scaled && input.isOpen {
            throw fail(node, "a sum over an open input size (the count depends on the height/width); pass --input-shape C,H,W")
        }
        let tensor = try exact(node, input)
        var name = try add(node, [tensor.name], pooling)
        let c = tensor.shape.last!
        if scaled {
            let count = tensor.shape.dropLast().reduce(1) { $0 * $1! }
            name = try add(node, [name], suffix: "_sum") { Activation(.linear(a: Float(count), b: 0), name: $0) }
        }
        if keep {
            try set(node, ComputedTensor(name, [Int?](repeating: 1, count: rank - 2) + [c], permutation: tensor.permutation, anvilRank: 2))
        } else {
            try set(node, ComputedTensor(name, [c]))
        }
        return true
    }

    /// `operation` of a constant over `axes` (all when empty), in float64; integers stay integers
    /// for sums, products, maxima and minima.
    static func folded(_ c: ConstantTensor, _ operation: ReduceOperation, axes requested: [Int], keep: Bool) throws -> ConstantTensor {
        let rank = c.rank
        for axis in requested where axis < -rank || axis >= rank { throw ImportFailure("axis \(axis) is out of range for rank \(rank)") }
        let axes = Set(requested.isEmpty ? Array(0 ..< rank) : requested.map { ($0 + rank) % rank })
        let strides = ConstantTensor.strides(c.shape)
        let kept = c.shape.indices.filter { !axes.contains($0) }
        let count = kept.reduce(1) { $0 * c.shape[$1] }
        var groups = [[Double]](repeating: [], count: count)
        let values = c.doubles
        for flat in values.indices {
            var group = 0
            for axis in kept { group = group * c.shape[axis] + (flat / strides[axis]) % c.shape[axis] }
            groups[group].append(values[flat])
        }
        let results: [Double] = groups.map { xs in
            switch operation {
            case .sum: return xs.reduce(0, +)
            case .mean: return xs.reduce(0, +) / Double(max(xs.count, 1))
            case .maximum: return xs.max() ?? -.infinity
            case .minimum: return xs.min() ?? .infinity
            case .product: return xs.reduce(1, *)
            case .l1: return xs.reduce(0) { $0 + abs($1) }
            case .l2: return xs.reduce(0) { $0 + $1 * $1 }.squareRoot()
            case .logSumExp: return Foundation.log(xs.reduce(0) { $0 + Foundation.exp($1) })
            case .sumSquare: return xs.reduce(0) { $0 + $1 * $1 }
            }
        }
        let shape = c.shape.indices.compactMap { axes.contains($0) ? (keep ? 1 : nil) : c.shape[$0] }
        if c.isInteger && [.sum, .maximum, .minimum, .product, .l1, .sumSquare].contains(operation) {
            return ConstantTensor(shape: shape, integers: results.map { Int64(clamping: Int(exactly: $0.rounded()) ?? 0) })
        }
        return ConstantTensor(shape: shape, floats: results.map { Float($0) })
    }
}
