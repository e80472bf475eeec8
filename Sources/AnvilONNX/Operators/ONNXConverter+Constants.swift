import Anvil

/// Constants and shape arithmetic (from_onnx.py's Constant, Shape, Gather, Cast, CastLike,
/// Identity, Dropout): folded on constants, so PyTorch's shape subgraphs disappear.
extension ONNXConverter {
    static func registerConstantOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        table["Constant"] = { $0.opConstant }
        table["Shape"] = { $0.opShape }
        table["Size"] = { $0.opSize }
        table["Gather"] = { $0.opGather }
        table["Cast"] = { $0.opCast }
        table["CastLike"] = { $0.opCastLike }
        table["Identity"] = { $0.opIdentity }
        table["Dropout"] = { $0.opDropout }
    }

    /// Python's `range(start, end)` bounds of a slice `[start:end]` over `count` items.
    static func pythonSliceBounds(_ start: Int?, _ end: Int?, count: Int) -> Range<Int> {
        func clamp(_ v: Int?, _ fallback: Int) -> Int {
            guard let v else { return fallback }
            return v < 0 ? max(v + count, 0) : min(v, count)
        }
        let lower = clamp(start, 0), upper = clamp(end, count)
        return lower ..< max(lower, upper)
    }

    /// `Constant`: a constant array.
    func opConstant(_ node: Onnx_NodeProto, _ index: Int) throws {
        let a = NodeAttributes(node)
        let value: ConstantTensor
        if let tensor = try a.tensor("value") {
            value = try decoding.constant(tensor, what: "\(describe(node)) attribute 'value'")
        } else if let f = try a.float("value_float") {
            value = ConstantTensor(shape: [], floats: [Float(f)])
        } else if let fs = try a.floats("value_floats") {
            value = ConstantTensor(shape: [fs.count], floats: fs.map { Float($0) })
        } else if let i = try a.int("value_int") {
            value = ConstantTensor(shape: [], integers: [Int64(i)])
        } else if let ints = try a.ints("value_ints") {
            value = ConstantTensor(shape: [ints.count], integers: ints.map { Int64($0) })
        } else {
            throw fail(node, "unsupported constant attributes [\(a.names.map { "'\($0)'" }.joined(separator: ", "))]")
        }
        try set(node, .constant(value))
    }

    /// `Shape` of a tensor or constant (start/end honoured): a constant.
    func opShape(_ node: Onnx_NodeProto, _ index: Int) throws {
        let shape: [Int]
        switch try value(node, 0) {
        case .constant(let c)?: shape = c.shape
        case .tensor(let t)?:
            // The batch's extent is 1 in ONNX's view; where a Transpose or Reshape moved it, a
            // later Reshape needs to know where it is, which the batch slot of a plan tensor says.
            guard !t.isOpen && (t.isBatchFirst || isUnbatched) else { return try shapeOfOpenTensor(node, t) }
            shape = t.onnxShape.map { $0! }
        case .flat(let f)?:
            guard let n = f.shape[0] else { return try shapeOfOpenTensor(node, try writeFlatten(f, node)) }
            shape = [1, n]
        case .planned(let p)?: return try shapeOfPlan(node, p)
        case .grouped(let g)?: shape = g.onnxShape.map { $0 ?? 0 }
        default: throw fail(node, "input 0 is missing")
        }
        let a = NodeAttributes(node)
        let range = Self.pythonSliceBounds(try a.int("start") ?? 0, try a.int("end"), count: shape.count)
        let kept = shape[range].map { Int64($0) }
        try set(node, .constant(ConstantTensor(shape: [kept.count], integers: kept)))
    }

    /// `Size`: the element count of a constant or of a tensor of known shape (ONNX's view, batch 1),
    /// a scalar int64 constant.
    func opSize(_ node: Onnx_NodeProto, _ index: Int) throws {
        let shape: [Int?]
        switch try value(node, 0) {
        case .constant(let c)?: shape = c.shape
        case .tensor(let t)?:
            guard t.isBatchFirst || isUnbatched else { throw fail(node, "counts a tensor whose batch was moved; its size depends on the batch size") }
            shape = t.onnxShape
        case .flat(let f)?: shape = [1] + f.shape
        case .grouped(let g)?: shape = g.onnxShape
        case .planned(let p)?: shape = p.shape
        default: throw fail(node, "input 0 is missing")
        }
        guard !shape.contains(where: { $0 == nil }) else {
            throw fail(node, "counts a tensor of open size \(Self.text(shape)); pass --input-shape C,H,W")
        }
        try set(node, .constant(ConstantTensor(shape: [], integers: [Int64(shape.reduce(1) { $0 * $1! })])))
    }

    /// `Gather` of one index from a computed tensor (`x[:, 0]`, the class token; attention's
    /// q, k, v from one projection): a Slice of that axis, squeezed for a scalar index.
    func gatherOfTensor(_ node: Onnx_NodeProto) throws {
        guard case .constant(let indices)? = try value(node, 1) else {
            throw fail(node, "gathers from a computed tensor with indices computed at predict (Anvil gathers constant indices)")
        }
        if indices.count != 1 || indices.rank > 1 { return try gatherArray(node, indices) }
        let tensor = try act(node, anyLayout: true)
        let rank = tensor.onnxRank
        var axis = try NodeAttributes(node).int("axis", 0)
        guard -rank <= axis, axis < rank else { throw fail(node, "axis \(axis) is out of range for rank \(rank)") }
        axis = (axis + rank) % rank
        guard !tensor.holdsBatch(axis) else { throw fail(node, "gathers along the batch axis; Anvil keeps every item") }
        guard let extent = tensor.onnxShape[axis] else { throw fail(node, "gathers along axis \(axis), whose extent depends on the open input size") }
        let index = try indices.integers()[0]
        guard -extent <= index, index < extent else { throw fail(node, "index \(index) is out of range for axis \(axis) of extent \(extent)") }
        let start = (index + extent) % extent
        let sliced = try sliceAxis(node, tensor, axis: axis, start: start, end: start + 1, step: 1)
        if indices.rank == 1 { return try set(node, sliced) }
        let shape = sliced.onnxShape
        try set(node, try reshapeTensor(node, .tensor(sliced), shape.indices.filter { $0 != axis }.map { shape[$0] }))
    }

    /// `Gather` of a constant (an embedding table) by indices computed at `predict`: the engine's
    /// `Embedding`. The output holds the batch where the indices' first axis lands (ONNX axis `axis`).
    func gatherByComputedIndices(_ node: Onnx_NodeProto) throws {
        let data = try constant(node, 0)
        guard data.rank > 0 else { throw fail(node, "gathers from a scalar") }
        var axis = try NodeAttributes(node).int("axis", 0)
        guard -data.rank <= axis, axis < data.rank else { throw fail(node, "axis \(axis) is out of range for data of rank \(data.rank)") }
        if axis < 0 { axis += data.rank }
        let indices = try toONNXOrder(node, try act(node, 1, anyLayout: true))
        let leading = Array(data.shape[..<axis]), trailing = Array(data.shape[(axis + 1)...])
        let name = try add(node, [indices.name], parameters: [("constant", data.floats)]) { Embedding(table: data.shape, axis: axis, name: $0) }
        if indices.batchFold?.wholeItem == true {
            let shape = leading + indices.shape.map { $0! } + trailing
            return try set(node, wholeItem(name, shape))
        }
        try requireBatchFirst(node, indices)
        // ONNX axis `axis` (the indices' first) is the batch; the table's leading axes follow it in Anvil's order.
        let onnxRank = leading.count + indices.onnxRank + trailing.count
        let permutation = (0 ..< onnxRank).map { $0 < axis ? $0 + 1 : $0 == axis ? 0 : $0 }
        try set(node, ComputedTensor(name, leading.map { $0 } + indices.shape + trailing.map { $0 }, permutation: permutation))
    }

    /// `Gather` on constants: a constant (NumPy's take, negative indices from the end).
    func opGather(_ node: Onnx_NodeProto, _ index: Int) throws {
        if readsPlanTensor(node) { return try gatherPlan(node) }
        switch try value(node, 0) {
        case .tensor?, .flat?: return try gatherOfTensor(node)
        default: break
        }
        switch try value(node, 1) {
        case .tensor?, .flat?: return try gatherByComputedIndices(node)
        default: break
        }
        let data = try constant(node, 0), indices = try constant(node, 1)
        var axis = try NodeAttributes(node).int("axis", 0)
        guard data.rank > 0 else { throw ImportFailure("gathers along axis \(axis) of a scalar, which has no axes") }
        if axis < 0 { axis += data.rank }
        guard axis >= 0, axis < data.rank else { throw ImportFailure("axis \(axis) is outside the \(data.rank) axes of the data") }
        let extent = data.shape[axis]
        let positions = try indices.integers().map { i -> Int in
            let j = i < 0 ? i + extent : i
            guard j >= 0, j < extent else { throw ImportFailure("index \(i) is outside axis \(axis), whose extent is \(extent)") }
            return j
        }
        let taken = try data.taking(positions, axis: axis)
        let shape = Array(data.shape[..<axis]) + indices.shape + Array(data.shape[(axis + 1)...])
        try set(node, .constant(try taken.reshaped(shape)))
    }

    /// A cast to ONNX data type `to`: a constant converted; a computed tensor through the engine's
    /// `Cast` (free where no element changes: to float, or to a wider integer type).
    func cast(_ node: Onnx_NodeProto, to: Int) throws {
        switch try value(node, 0) {
        case .planned(let p)?: try castPlan(node, p, to: to)
        case .constant(let c)?:
            if TensorDecoding.floatTypes.contains(Int32(clamping: to)) {
                let floats = Self.narrowFloatFormat(to).map { format in c.floats.map(format.rounding) } ?? c.floats
                try set(node, .constant(ConstantTensor(shape: c.shape, floats: floats)))
            } else if to == 9 {
                try set(node, .constant(ConstantTensor(shape: c.shape, integers: c.doubles.map { $0 != 0 ? 1 : 0 })))
            } else {
                try set(node, .constant(ConstantTensor(shape: c.shape, integers: try c.integers().map { Int64($0) })))
            }
        case let other?:
            if let format = Self.narrowFloatFormat(to) {
                // Anvil computes float32: the values rounded to the format, held as float32.
                let tensor = try act(node, anyLayout: true)
                return try set(node, tensor.like(try add(node, [tensor.name]) { FloatRounding(to: format, name: $0) }))
            }
            // A cast to double (exporters widen a reduction's accumulator) computes on in float32.
            guard let type = TensorDecoding.engineType(Int32(clamping: to)) else {
                throw fail(node, "casts a computed tensor to \(TensorDecoding.typeName(Int32(clamping: to))); Anvil computes float32, integers and truth values")
            }
            // A pending flatten of an image is float32 already.
            if case .flat = other, type == .float32 { return try set(node, other) }
            let tensor = try act(node, anyLayout: true)
            let name = try add(node, [tensor.name]) { Cast(to: type, name: $0) }
            try set(node, tensor.like(name))
        case nil: throw fail(node, "input 0 is missing")
        }
    }

    /// The format a cast to ONNX data type `to` rounds floats to: float16 (10), bfloat16 (16).
    static func narrowFloatFormat(_ to: Int) -> FloatFormat? {
        to == 10 ? .float16 : to == 16 ? .bfloat16 : nil
    }

    /// `Cast` of a constant to the target type; a computed tensor only to float32.
    func opCast(_ node: Onnx_NodeProto, _ index: Int) throws {
        guard let to = try NodeAttributes(node).int("to") else { throw fail(node, "attribute 'to' is missing") }
        try cast(node, to: to)
    }

    /// `CastLike`: `Cast` to the type of its second input.
    func opCastLike(_ node: Onnx_NodeProto, _ index: Int) throws {
        guard let target = try value(node, 1) else { throw fail(node, "input 1 (the target type) is missing") }
        if case .constant(let c) = target { try cast(node, to: c.isInteger ? 7 : 1) } else { try cast(node, to: 1) }
    }

    /// `Dropout` at inference: its input, and a mask of ones (every value kept) when the mask is read.
    func opDropout(_ node: Onnx_NodeProto, _ index: Int) throws {
        if node.output.count > 1, !node.output[1].isEmpty, !(consumers[node.output[1]] ?? []).isEmpty {
            let shape: [Int?]
            switch try value(node, 0) {
            case .tensor(let t)?: shape = t.onnxShape
            case .constant(let c)?: shape = c.shape.map { $0 }
            case let other?: shape = currentShape(other)
            case nil: throw fail(node, "input 0 is missing")
            }
            guard !shape.contains(where: { $0 == nil }) else { throw fail(node, "its mask has the open input size") }
            let fixed = shape.map { $0! }
            try set(node, .constant(ConstantTensor(shape: fixed, integers: [Int64](repeating: 1, count: fixed.reduce(1, *)))), index: 1)
        }
        try opIdentity(node, index)
    }

    /// `Identity` / `Dropout` at inference: its input.
    func opIdentity(_ node: Onnx_NodeProto, _ index: Int) throws {
        guard let input = try value(node, 0) else { throw fail(node, "input 0 is missing") }
        try set(node, input)
    }
}
