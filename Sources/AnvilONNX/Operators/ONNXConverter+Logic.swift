import Foundation

/// Comparisons, logic and `Where`: on constants, folded — the masks exporters compute from shapes
/// (torchvision's ViT builds the class token's `Expand` target with `Equal` and `Where`); on
/// computed tensors, the engine's `Elementwise` comparisons, masks of 1 and 0. Booleans are
/// integer constants 0 and 1.
extension ONNXConverter {
    static func registerLogicOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        let comparisons: [(String, (Double, Double) -> Bool)] = [
            ("Equal", { $0 == $1 }), ("Less", { $0 < $1 }), ("LessOrEqual", { $0 <= $1 }),
            ("Greater", { $0 > $1 }), ("GreaterOrEqual", { $0 >= $1 }),
            ("And", { $0 != 0 && $1 != 0 }), ("Or", { $0 != 0 || $1 != 0 }), ("Xor", { ($0 != 0) != ($1 != 0) }),
        ]
        for (op, compare) in comparisons {
            table[op] = { c in { node, _ in try c.compare(node, compare) } }
        }
        table["Not"] = { c in { node, _ in
            if case .tensor? = try c.value(node, 0) {
                // A mask of 1 and 0: 1 − x.
                let tensor = try c.act(node, anyLayout: true)
                let name = try c.add(node, [tensor.name]) { Activation(.linear(a: -1, b: 1), name: $0) }
                return try c.set(node, tensor.like(name))
            }
            let x = try c.foldedInput(node, 0)
            try c.set(node, .constant(ConstantTensor(shape: x.shape, integers: x.doubles.map { $0 == 0 ? 1 : 0 })))
        } }
        table["Where"] = { $0.opWhere }
        table["ScatterND"] = { $0.opScatterND }
    }

    /// Input `index` as a constant, or an error saying what Anvil cannot fold.
    func foldedInput(_ node: Onnx_NodeProto, _ index: Int) throws -> ConstantTensor {
        switch try value(node, index) {
        case .constant(let c)?: return c
        case .planned?: throw fail(node, "\(node.opType) of a value computed from the open input size is not supported; pass --input-shape C,H,W")
        case nil: throw fail(node, "input \(index) is missing")
        default: throw fail(node, "\(node.opType) of a computed tensor is not supported (only of constants and shapes)")
        }
    }

    /// A comparison or logical operator of two constants, with NumPy broadcasting; of a computed
    /// tensor, the engine's element-wise form.
    func compare(_ node: Onnx_NodeProto, _ compare: (Double, Double) -> Bool) throws {
        guard node.input.count == 2 else { throw fail(node, "takes 2 inputs, got \(node.input.count)") }
        let reads: (Int) throws -> Bool = { index in
            switch try self.value(node, index) {
            case .tensor?, .flat?: return true
            default: return false
            }
        }
        if try reads(0) || reads(1) { return try elementwise(node, node.opType) }
        let a = try foldedInput(node, 0), b = try foldedInput(node, 1)
        let shape = try ConstantTensor.broadcastShape(a.shape, b.shape)
        let x = try a.broadcast(to: shape).doubles, y = try b.broadcast(to: shape).doubles
        try set(node, .constant(ConstantTensor(shape: shape, integers: zip(x, y).map { compare($0, $1) ? 1 : 0 })))
    }

    /// `Where(condition, x, y)` of constants, with NumPy broadcasting; with computed operands, the
    /// engine's `Select` (at most one constant among the three).
    func opWhere(_ node: Onnx_NodeProto, _ index: Int) throws {
        guard node.input.count == 3 else { throw fail(node, "takes 3 inputs, got \(node.input.count)") }
        let computed = try (0 ..< 3).filter { position in
            switch try value(node, position) {
            case .tensor?, .flat?: return true
            default: return false
            }
        }
        if !computed.isEmpty { return try whereOfTensors(node, computed: computed) }
        let condition = try foldedInput(node, 0), x = try foldedInput(node, 1), y = try foldedInput(node, 2)
        let shape = try ConstantTensor.broadcastShape(try ConstantTensor.broadcastShape(condition.shape, x.shape), y.shape)
        let pick = try condition.broadcast(to: shape).doubles.map { $0 != 0 }
        let a = try x.broadcast(to: shape), b = try y.broadcast(to: shape)
        if a.isInteger && b.isInteger {
            let (p, q) = (try a.integers(), try b.integers())
            try set(node, .constant(ConstantTensor(shape: shape, integers: pick.indices.map { Int64(pick[$0] ? p[$0] : q[$0]) })))
        } else {
            let (p, q) = (a.floats, b.floats)
            try set(node, .constant(ConstantTensor(shape: shape, floats: pick.indices.map { pick[$0] ? p[$0] : q[$0] })))
        }
    }

    /// `Where` with computed operands (`computed`: their positions): each held in ONNX's order,
    /// batch first (of one rank) or the graph one item; a constant among them is `Select`'s.
    func whereOfTensors(_ node: Onnx_NodeProto, computed: [Int]) throws {
        guard computed.count >= 2 else { throw fail(node, "Where with two constant operands of a computed one is not supported") }
        let tensors = try computed.map { try toONNXOrder(node, try exact(node, try act(node, $0, anyLayout: true))) }
        let whole = tensors.allSatisfy(isWholeItem)
        guard whole || (tensors.allSatisfy(\.isBatchFirst) && Set(tensors.map(\.onnxRank)).count == 1) else {
            throw fail(node, "selects among \(tensors.map { Self.text($0.onnxShape) }.joined(separator: ", ")), which are not batch-first tensors of one rank")
        }
        let rank = tensors[0].onnxRank
        var constantOperand: (shape: [Int], position: Int)?
        var parameters: [(String, [Float])] = []
        if let position = (0 ..< 3).first(where: { !computed.contains($0) }) {
            guard let constant = try const(node, position) else { throw fail(node, "input \(position) is missing") }
            var shape = constant.shape
            if !whole {
                guard shape.count <= rank, shape.count < rank || shape.first == 1 else {
                    throw fail(node, "a constant of shape \(constant.shape) varies along the batch axis of \(Self.text(tensors[0].onnxShape))")
                }
                if shape.count == rank { shape.removeFirst() }
            }
            constantOperand = (shape.isEmpty ? [1] : shape, position)
            parameters = [("constant", constant.doubles.map { Float($0) })]
        }
        var shapes: [[Int?]] = tensors.map(\.shape)
        if let constantOperand { shapes.append(constantOperand.shape.map { $0 }) }
        let output = try broadcastShapes(node, shapes, tensors.map { Self.text($0.onnxShape) })
        let constantShape = try constantOperand.map { try Shape(dimensions: $0.shape) }
        let name = try add(node, tensors.map(\.name), parameters: parameters) {
            Select(constant: constantShape, constantPosition: constantOperand?.position ?? 2, name: $0)
        }
        if whole {
            guard !output.contains(where: { $0 == nil }) else { throw fail(node, "selects among tensors of open size as one item") }
            return try set(node, wholeItem(name, output.map { $0! }))
        }
        try set(node, ComputedTensor(name, output, permutation: Array(0 ..< rank)))
    }

    /// `ScatterND` of constants (Swin's shifted-window mask, built by writing regions of a zero
    /// tensor): `updates` written, or combined by `reduction`, at the index tuples of `indices`.
    func opScatterND(_ node: Onnx_NodeProto, _ index: Int) throws {
        if try readsComputedTensor(node) { return try scatterOfTensors(node, elements: false) }
        let data = try foldedInput(node, 0), indices = try foldedInput(node, 1), updates = try foldedInput(node, 2)
        let reduction = try NodeAttributes(node).string("reduction", "none")
        let combine: (Double, Double) -> Double
        switch reduction {
        case "none": combine = { $1 }
        case "add": combine = { $0 + $1 }
        case "mul": combine = { $0 * $1 }
        case "max": combine = { max($0, $1) }
        case "min": combine = { min($0, $1) }
        default: throw fail(node, "reduction '\(reduction)' is not one of none, add, mul, max, min")
        }
        guard indices.isInteger, let k = indices.shape.last, indices.rank >= 1, k <= data.rank else {
            throw fail(node, "indices of shape \(indices.shape) do not index data of shape \(data.shape)")
        }
        let sliceShape = Array(data.shape[k...])
        let expected = Array(indices.shape.dropLast()) + sliceShape
        guard updates.shape == expected else { throw fail(node, "updates have shape \(updates.shape); indices \(indices.shape) into \(data.shape) need \(expected)") }
        let strides = ConstantTensor.strides(data.shape)
        let length = sliceShape.reduce(1, *)
        let tuples = try indices.integers()
        var values = data.doubles
        let written = updates.doubles
        for i in 0 ..< tuples.count / max(k, 1) where k > 0 || i == 0 {
            var offset = 0
            for j in 0 ..< k {
                let extent = data.shape[j]
                let raw = tuples[i * k + j]
                guard -extent <= raw, raw < extent else { throw fail(node, "index \(raw) is out of range for axis \(j) of extent \(extent)") }
                offset += ((raw + extent) % extent) * strides[j]
            }
            for e in 0 ..< length { values[offset + e] = combine(values[offset + e], written[i * length + e]) }
        }
        if data.isInteger {
            try set(node, .constant(ConstantTensor(shape: data.shape, integers: values.map { Int64($0) })))
        } else {
            try set(node, .constant(ConstantTensor(shape: data.shape, floats: values.map { Float($0) })))
        }
    }
}
