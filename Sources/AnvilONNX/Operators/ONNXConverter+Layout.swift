import Anvil

/// Layout operators (onnx_ops/layout.py): Transpose (a relabelling, no data moved), Reshape,
/// Flatten, Squeeze, Unsqueeze, Slice, Split, Concat, DepthToSpace, SpaceToDepth, ShuffleNet's
/// channel shuffle, and ReduceMean/Sum/Max over the spatial axes.
extension ONNXConverter {
    static func registerLayoutOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        table["Transpose"] = { $0.opTranspose }
        table["Reshape"] = { $0.opReshape }
        table["Flatten"] = { $0.opFlatten }
        table["Squeeze"] = { $0.opSqueeze }
        table["Unsqueeze"] = { $0.opUnsqueeze }
        table["Slice"] = { $0.opSlice }
        table["Split"] = { $0.opSplit }
        table["Concat"] = { $0.opConcat }
        table["DepthToSpace"] = { $0.opDepthToSpace }
        table["SpaceToDepth"] = { $0.opSpaceToDepth }
    }

    /// `tensor` as [N, everything] in ONNX order: itself at rank 2, a pooled vector, or a pending flatten.
    func flattened(_ tensor: ComputedTensor) -> ImportedValue {
        if tensor.rank == 2 { return .tensor(tensor) }
        if tensor.anvilRank == 2 && !tensor.isOpen { return .tensor(ComputedTensor(tensor.name, [tensor.shape.reduce(1) { $0 * $1! }])) }
        return .flat(PendingFlatten(tensor))
    }

    /// The ONNX shape of a tensor or a pending flatten.
    func currentShape(_ value: ImportedValue) -> [Int?] {
        switch value {
        case .flat(let f): return [1, f.shape[0]]
        case .tensor(let t): return t.onnxShape
        case .grouped(let g): return g.onnxShape
        default: return []
        }
    }

    /// `value` (tensor or pending flatten) given ONNX shape `resolved`, values in ONNX's order;
    /// `batchAxis`, when the operation says where the batch lands (Squeeze, Unsqueeze), its axis.
    func reshapeTensor(_ node: Onnx_NodeProto, _ value: ImportedValue, _ resolved: [Int?], batchAxis: Int? = nil) throws -> ImportedValue {
        let current = currentShape(value)
        let currentBatchAxis: Int? = { if case .tensor(let t) = value { return t.batchFold == nil ? t.batchAxis : nil }; return 0 }()
        if resolved == current && (batchAxis == nil || batchAxis == currentBatchAxis) { return value }
        let text = Self.text(resolved)
        if case .tensor(let tensor) = value, !tensor.isBatchFirst || (batchAxis ?? 0) != 0 {
            return .tensor(try reshapeMovingBatch(node, tensor, resolved, batchAxis: tensor.batchFold == nil ? batchAxis : nil))
        }
        if resolved.first != 1 || (batchAxis ?? 0) != 0 {
            let tensor: ComputedTensor
            switch value {
            case .flat(let flat): tensor = try writeFlatten(flat, node)
            case .tensor(let t): tensor = t
            default: throw fail(node, "cannot reshape this value")
            }
            return .tensor(try reshapeMovingBatch(node, tensor, resolved, batchAxis: batchAxis))
        }
        guard resolved.count <= Shape.maximumRank else { throw fail(node, "reshaping \(Self.text(current)) to \(text): Anvil's tensors have rank \(Shape.maximumRank) at most") }
        var tensor: ComputedTensor
        switch value {
        case .flat(let flat):
            if resolved.count == 2 { return value }
            tensor = try writeFlatten(flat, node)
        case .tensor(let t): tensor = t
        default: throw fail(node, "cannot reshape this value")
        }
        if resolved.count == 2 { return flattened(tensor) }
        if resolved.dropFirst().contains(where: { $0 == nil }) {
            throw fail(node, "reshaping \(Self.text(current)) to \(text): a Reshape of a tensor whose size depends on the open input size is not supported; pass --input-shape C,H,W")
        }
        let source = try toONNXOrder(node, tensor)
        let shape = resolved.dropFirst().map { $0! }
        let name = try add(node, [source.name]) { Reshape(shape, name: $0) }
        return .tensor(ComputedTensor(name, shape.map { $0 }, permutation: Array(0 ..< resolved.count)))
    }

    /// `tensor` reshaped to ONNX shape `resolved` (at batch size 1) when the batch is not (or will
    /// not be) its first axis: the batch keeps its place in ONNX's row-major order, so it lands
    /// in the target axis whose values straddle that place (`batchAxis` when a target computed
    /// from the shape says which): an axis of its own (extent 1) or folded into one. Each item's
    /// values are reshaped as they are.
    func reshapeMovingBatch(_ node: Onnx_NodeProto, _ tensor: ComputedTensor, _ resolved: [Int?], batchAxis: Int?) throws -> ComputedTensor {
        let current = Self.text(tensor.onnxShape), text = Self.text(resolved)
        guard let batchStride = tensor.batchStride, !resolved.contains(where: { $0 == nil }) else {
            throw fail(node, "reshaping \(current) to \(text) moves the batch with a size that depends on the open input size; pass --input-shape C,H,W")
        }
        guard resolved.count <= Shape.maximumRank - 1 else {
            throw fail(node, "reshaping \(current) to \(text): Anvil's tensors have rank \(Shape.maximumRank) at most, the batch included")
        }
        let target = resolved.map { $0! }
        if tensor.batchFold?.wholeItem == true {
            // One item: the whole tensor after a batch axis of 1, reshaped as ONNX reshapes it (to a
            // scalar too, which the item holds after its batch axis).
            let source = try toONNXOrder(node, try exact(node, tensor))
            let name = source.shape == target.map({ $0 }) ? source.name : try add(node, [source.name]) { Reshape(target, name: $0) }
            return wholeItem(name, target)
        }
        // after[r]: the values after axis r in row-major order.
        var after = [Int](repeating: 1, count: target.count)
        for r in stride(from: target.count - 2, through: 0, by: -1) { after[r] = after[r + 1] * target[r + 1] }
        func inner(_ r: Int) -> Int? {
            guard batchStride % after[r] == 0, target[r] % (batchStride / after[r]) == 0 else { return nil }
            return batchStride / after[r]
        }
        let place: (axis: Int, inner: Int)
        if let batchAxis {
            guard let q = inner(batchAxis) else {
                throw fail(node, "reshaping \(current) to \(text) would split the batch from its values (it cannot be part of axis \(batchAxis))")
            }
            place = (batchAxis, q)
        } else {
            let candidates = target.indices.compactMap { r in inner(r).map { (axis: r, inner: $0) } }
            // An axis of extent 1 at that place is the batch's own; between two longer axes the
            // batch could end one or begin the other.
            let inner = candidates.filter { $0.axis != target.count - 1 }
            if let own = candidates.first(where: { target[$0.axis] == 1 }) {
                place = own
            } else if candidates.count == 1 {
                place = candidates[0]
            } else if batchIsFixed && !inner.isEmpty {
                // A graph exported at one batch size (targets are constants) defines nothing at
                // another, and at its own both readings give each item the same values. Read it
                // as exporters write attention: the batch not in the last axis (a projection
                // contracts it), and there the outer part of the later axis (`B·heads`).
                place = inner[inner.count - 1]
            } else if candidates.isEmpty {
                throw fail(node, "reshaping \(current) to \(text) mixes the batch with other values; Anvil keeps each item's values apart")
            } else {
                throw fail(node, "reshaping \(current) to \(text): the batch could belong to axis \(candidates.map { "\($0.axis)" }.joined(separator: " or ")), which a target computed at batch size 1 does not tell")
            }
        }
        let source = try toONNXOrder(node, try exact(node, tensor))
        if target[place.axis] == 1 {
            let shape = target.enumerated().filter { $0.offset != place.axis }.map(\.element)
            let order = (0 ..< target.count).map { $0 < place.axis ? $0 + 1 : $0 == place.axis ? 0 : $0 }
            let name = source.shape == shape.map({ $0 }) ? source.name : try add(node, [source.name]) { Reshape(shape, name: $0) }
            return ComputedTensor(name, shape.map { $0 }, permutation: order)
        }
        let name = source.shape == target.map({ $0 }) ? source.name : try add(node, [source.name]) { Reshape(target, name: $0) }
        return ComputedTensor(name, target.map { $0 }, permutation: (0 ..< target.count).map { $0 + 1 },
                              batchFold: BatchFold(axis: place.axis, inner: place.inner, wholeItem: source.batchFold?.wholeItem ?? false))
    }

    /// Reshape's target with 0 (copy, unless allowzero) and -1 (inferred) resolved.
    func resolveShape(_ node: Onnx_NodeProto, _ current: [Int], _ target: [Int], allowZero: Bool) throws -> [Int] {
        var resolved = target.enumerated().map { i, t in (t == 0 && !allowZero && i < current.count) ? current[i] : t }
        let total = try ConstantTensor.elementCount(current)
        if resolved.filter({ $0 == -1 }).count == 1 {
            let known = resolved.filter { $0 != -1 }.reduce(1) { $0.multipliedReportingOverflow(by: $1).overflow ? 0 : $0 * $1 }
            resolved[resolved.firstIndex(of: -1)!] = known != 0 ? total / known : 0
        }
        var product = 1, overflow = false
        for v in resolved { (product, overflow) = overflow ? (product, true) : product.multipliedReportingOverflow(by: v) }
        if overflow || product != total || resolved.filter({ $0 == -1 }).count > 1 || resolved.contains(where: { $0 < 0 }) {
            throw fail(node, "cannot reshape \(current) to \(target)")
        }
        return resolved
    }

    /// `Transpose`: of a constant, a constant; of a tensor, a relabelling of its axes.
    func opTranspose(_ node: Onnx_NodeProto, _ index: Int) throws {
        let permutation = try NodeAttributes(node).ints("perm")
        switch try value(node, 0) {
        case .planned(let p)?:
            try transposePlan(node, p, permutation)
        case .constant(let c)?:
            try set(node, .constant(try c.transposed(permutation)))
        case .grouped(let g)?:
            guard permutation == [0, 2, 1, 3, 4], !g.swapped else {
                throw fail(node, "permutation \(permutation.map { "\($0)" } ?? "None") of a 5-D tensor is not supported (only ShuffleNet's (0, 2, 1, 3, 4))")
            }
            var swapped = g
            swapped.swapped = true
            try set(node, .grouped(swapped))
        default:
            let tensor = try act(node, anyLayout: true)
            let rank = tensor.onnxRank
            let perm = permutation ?? Array((0 ..< rank).reversed())
            guard perm.sorted() == Array(0 ..< rank) else { throw fail(node, "perm \(perm) is not a permutation of \(rank) axes") }
            // Only the labels move (the batch's among them); each item's values stay where they are.
            let fold = tensor.batchFold.map { BatchFold(axis: perm.firstIndex(of: $0.axis)!, inner: $0.inner, wholeItem: $0.wholeItem) }
            try set(node, ComputedTensor(tensor.name, tensor.shape, permutation: perm.map { tensor.permutation[$0] }, anvilRank: tensor.anvilRank,
                                         batchFold: fold))
        }
    }

    /// `Reshape`: of a constant, a constant; of a tensor, row-major in ONNX's order; ShuffleNet's shuffle.
    func opReshape(_ node: Onnx_NodeProto, _ index: Int) throws {
        if case .planned(let p)? = try value(node, 0) { return try reshapePlanData(node, p) }
        if case .planned(let target)? = try value(node, 1) {
            if case .constant? = try value(node, 0) {
                guard let data = try planOperand(node, 0) else { throw fail(node, "input 0 is missing") }
                return try reshapePlanData(node, data)
            }
            return try reshapeToPlan(node, target)
        }
        let target = try constant(node, 1).integers()
        let allowZero = try NodeAttributes(node).int("allowzero", 0) != 0
        switch try value(node, 0) {
        case .constant(let c)?:
            let resolved = try resolveShape(node, c.shape, target, allowZero: allowZero)
            try set(node, .constant(try c.reshaped(resolved)))
            return
        case .grouped(let g)?:
            let current = g.onnxShape.map { $0 ?? 0 }
            let resolved = try resolveShape(node, current, target, allowZero: allowZero)
            guard g.swapped, resolved.map({ $0 }) == g.source.onnxShape else {
                throw fail(node, "reshaping the 5-D \(current) to \(resolved) is not supported (only ShuffleNet's channel shuffle back to [N, C, H, W])")
            }
            let name = try add(node, [g.source.name]) { ChannelShuffle(groups: g.groups, name: $0) }
            try set(node, g.source.like(name))
            return
        default: break
        }
        let value = try actOrFlat(node)
        let current = currentShape(value)
        if current.contains(where: { $0 == nil }) {
            if target.count == 2 && target[1] == -1 && (target[0] == 1 || (target[0] == 0 && !allowZero)) {
                if case .tensor(let t) = value { try set(node, flattened(t)) } else { try set(node, value) }
                return
            }
            if let first = target.first, first == 1 || (first == 0 && !allowZero), target.count <= Shape.maximumRank,
               target.filter({ $0 == -1 }).count <= 1, !target.contains(where: { $0 < -1 || ($0 == 0 && allowZero) }) {
                // The engine resolves 0 (copy) and -1 (inferred) for each input size.
                let source: ComputedTensor
                switch value {
                case .flat(let flat): source = try writeFlatten(flat, node)
                case .tensor(let t):
                    try requireBatchFirst(node, t)
                    source = try toONNXOrder(node, try exact(node, t))
                default: throw fail(node, "cannot reshape this value")
                }
                let rest = Array(target.dropFirst())
                let now = currentShape(.tensor(source))
                let shape: [Int?] = rest.enumerated().map { i, t in t > 0 ? t : t == 0 && i + 1 < now.count ? now[i + 1] : nil }
                let name = try add(node, [source.name]) { Reshape(rest, name: $0) }
                try set(node, ComputedTensor(name, shape, permutation: Array(0 ... shape.count)))
                return
            }
            throw fail(node, "reshaping \(Self.text(current)) (None: open) to \(target): the target does not fit every input size; pass --input-shape C,H,W (or export with fixed sizes)")
        }
        let known = current.map { $0! }
        let resolved = try resolveShape(node, known, target, allowZero: allowZero)
        if case .tensor(let tensor) = value, resolved.count == 5, tensor.rank == 4, tensor.isChannelAxis(1), resolved[0] == 1,
           resolved[1] * resolved[2] == known[1], Array(resolved[3...]) == Array(known[2...]) {
            try set(node, .grouped(GroupedChannels(source: tensor, groups: resolved[1], perGroup: resolved[2])))
            return
        }
        try set(node, try reshapeTensor(node, value, resolved.map { $0 }))
    }

    /// `Flatten`: of a constant, a constant; of a tensor from axis 1, a pending flatten.
    func opFlatten(_ node: Onnx_NodeProto, _ index: Int) throws {
        var axis = try NodeAttributes(node).int("axis", 1)
        if case .constant(let c)? = try value(node, 0) {
            let a = axis < 0 ? axis + c.rank : axis
            guard a >= 0, a <= c.rank else { throw ImportFailure("axis \(axis) is out of range") }
            let outer = c.shape[..<a].reduce(1, *)
            try set(node, .constant(try c.reshaped([outer, outer == 0 ? 0 : c.count / outer])))
            return
        }
        let value = try actOrFlat(node)
        let shape = currentShape(value)
        if axis < 0 { axis += shape.count }
        guard axis >= 0, axis <= shape.count else { throw fail(node, "axis \(axis) is out of range for \(Self.text(shape))") }
        let batchFirst: Bool = { if case .tensor(let t) = value { return t.isBatchFirst }; return true }()
        guard batchFirst, axis >= 1, !shape[1 ..< axis].contains(where: { $0 == nil }), shape[1 ..< axis].reduce(1, { $0 * $1! }) == 1 else {
            // The batch joins another axis (or has moved): a Reshape that follows where it goes.
            guard !shape.contains(where: { $0 == nil }) else {
                throw fail(node, "axis \(axis) of \(Self.text(shape)) would merge axes of open size into the batch axis; pass --input-shape C,H,W")
            }
            let outer = shape[..<axis].reduce(1) { $0 * $1! }, inner = shape[axis...].reduce(1) { $0 * $1! }
            // A batch-first tensor's batch is the outermost part of axis 0 of the result, or of
            // axis 1 when axis 0 flattens everything (`[1, B·rest]`).
            return try set(node, try reshapeTensor(node, value, [outer, inner], batchAxis: batchFirst ? (axis == 0 ? 1 : 0) : nil))
        }
        if case .tensor(let t) = value { try set(node, flattened(t)) } else { try set(node, value) }
    }

    /// The node's axes, from its second input (opset 13+) or its attribute.
    func axes(_ node: Onnx_NodeProto) throws -> [Int] {
        if opset >= 13 && node.input.count > 1 && !node.input[1].isEmpty { return try constant(node, 1).integers() }
        return try NodeAttributes(node).ints("axes") ?? []
    }

    /// `Squeeze`: of a constant, a constant; of a tensor, a Reshape dropping axes of extent 1.
    func opSqueeze(_ node: Onnx_NodeProto, _ index: Int) throws {
        let requested = try axes(node)
        if case .planned(let p)? = try value(node, 0) {
            let axes = requested.isEmpty ? p.shape.indices.filter { p.shape[$0] == 1 } : requested.map { $0 < 0 ? $0 + p.rank : $0 }
            for a in axes where a < 0 || a >= p.rank || p.shape[a] != 1 {
                throw fail(node, "axis \(a) of \(Self.text(p.shape)) cannot be squeezed (not of extent 1)")
            }
            return try reshapePlan(node, p, to: p.shape.indices.filter { !axes.contains($0) }.map { p.shape[$0] }, squeezing: true, axes: axes)
        }
        if case .constant(let c)? = try value(node, 0) {
            let axes = requested.isEmpty ? c.shape.indices.filter { c.shape[$0] == 1 } : requested.map { $0 < 0 ? $0 + c.rank : $0 }
            for a in axes where a < 0 || a >= c.rank || c.shape[a] != 1 {
                throw ImportFailure("cannot select an axis to squeeze out which has size not equal to one")
            }
            try set(node, .constant(try c.reshaped(c.shape.indices.filter { !axes.contains($0) }.map { c.shape[$0] })))
            return
        }
        let value = try actOrFlat(node)
        let shape = currentShape(value)
        let batch: (Int) -> Bool = { axis in
            if case .tensor(let t) = value { return t.holdsBatch(axis) }
            return axis == 0
        }
        let axes = requested.isEmpty ? shape.indices.filter { shape[$0] == 1 && !batch($0) } : requested.map { (($0 % shape.count) + shape.count) % shape.count }.sorted()
        if axes.contains(where: batch) { throw fail(node, "squeezing the batch axis is not supported") }
        if axes.contains(where: { shape[$0] != 1 }) { throw fail(node, "axes \(axes) of \(Self.text(shape)) are not all of extent 1") }
        let batchAxis: Int? = { if case .tensor(let t) = value { return t.batchAxis.map { b in b - axes.filter { $0 < b }.count } }; return 0 }()
        try set(node, try reshapeTensor(node, value, shape.indices.filter { !axes.contains($0) }.map { shape[$0] }, batchAxis: batchAxis))
    }

    /// `Unsqueeze`: of a constant, a constant; of a tensor, a Reshape inserting axes of extent 1.
    func opUnsqueeze(_ node: Onnx_NodeProto, _ index: Int) throws {
        let requested = try axes(node)
        if case .planned(let p)? = try value(node, 0) {
            let rank = p.rank + requested.count
            var shape = p.shape
            let positions = requested.map { (($0 % rank) + rank) % rank }.sorted()
            for a in positions {
                guard a <= shape.count else { throw fail(node, "axis \(a) is out of range") }
                shape.insert(1, at: a)
            }
            return try reshapePlan(node, p, to: shape, squeezing: false, axes: positions)
        }
        if case .constant(let c)? = try value(node, 0) {
            let rank = c.rank + requested.count
            var shape = c.shape
            for a in requested.map({ (($0 % rank) + rank) % rank }).sorted() {
                guard a <= shape.count else { throw ImportFailure("axis \(a) is out of range") }
                shape.insert(1, at: a)
            }
            try set(node, .constant(try c.reshaped(shape)))
            return
        }
        let value = try actOrFlat(node)
        let shape = currentShape(value)
        let rank = shape.count + requested.count
        let positions = requested.map { (($0 % rank) + rank) % rank }.sorted()
        var result = shape
        // The batch's axis (nil: folded), followed through the insertions.
        var batchAxis: Int? = { if case .tensor(let t) = value { return t.batchAxis }; return 0 }()
        for p in positions {
            guard p <= result.count else { throw ImportFailure("axis \(p) is out of range") }
            result.insert(1, at: p)
            if let b = batchAxis, p <= b { batchAxis = b + 1 }
        }
        try set(node, try reshapeTensor(node, value, result, batchAxis: batchAxis))
    }

    /// Python's `len(range(*slice(start, end, step).indices(extent)))` and the normalised bounds.
    static func sliceCount(_ start: Int, _ end: Int, _ step: Int, extent: Int) -> Int {
        func bound(_ v: Int, low: Int, high: Int) -> Int {
            v < 0 ? max(v + extent, low) : min(v, high)
        }
        if step > 0 {
            let s = bound(start, low: 0, high: extent), e = bound(end, low: 0, high: extent)
            return e > s ? (e - s + step - 1) / step : 0
        }
        let s = bound(start, low: -1, high: extent - 1), e = bound(end, low: -1, high: extent - 1)
        return s > e ? (s - e + (-step) - 1) / (-step) : 0
    }

    /// The indices a Python slice takes from `extent` items.
    static func sliceIndices(_ start: Int, _ end: Int, _ step: Int, extent: Int) -> [Int] {
        let count = sliceCount(start, end, step, extent: extent)
        guard count > 0 else { return [] }
        let first = step > 0 ? (start < 0 ? max(start + extent, 0) : min(start, extent))
                             : (start < 0 ? max(start + extent, -1) : min(start, extent - 1))
        return (0 ..< count).map { first + $0 * step }
    }

    /// One ONNX axis of `tensor` sliced: an Anvil Slice on the axis that holds it.
    func sliceAxis(_ node: Onnx_NodeProto, _ tensor: ComputedTensor, axis: Int, start: Int, end: Int, step: Int, suffix: String = "") throws -> ComputedTensor {
        let shape = tensor.onnxShape
        guard axis >= -tensor.onnxRank, axis < tensor.onnxRank else { throw ImportFailure("axis \(axis) is out of range for rank \(tensor.onnxRank)") }
        let axis = (axis + tensor.onnxRank) % tensor.onnxRank
        guard step != 0 else { throw fail(node, "a step of 0 is not allowed") }
        let count = shape[axis].map { Self.sliceCount(start, end, step, extent: $0) }
        let big = Int(Int32.max)
        if tensor.holdsBatch(axis) {
            if step == 1 && (start == 0 || start <= -big - 1) && end >= big { return tensor }
            throw fail(node, "slicing the batch axis (\(start):\(end):\(step)) is not supported; Anvil keeps every item")
        }
        if step == 1 && (count != nil ? count == shape[axis] : start == 0 && end >= big) { return tensor }
        if count == 0 { throw fail(node, "slice \(start):\(end):\(step) of axis \(axis) (extent \(shape[axis]!)) is empty") }
        let source = try exact(node, tensor)
        let anvilAxis = source.permutation[axis]
        let name = try add(node, [source.name], suffix: suffix) { Slice(axis: anvilAxis, start: start, end: end, step: step, name: $0) }
        var dims = source.shape
        dims[anvilAxis - 1] = count
        return ComputedTensor(name, dims, permutation: source.permutation, batchFold: source.batchFold)
    }

    /// `Slice`: of a constant, a constant; of a tensor, one Anvil Slice per sliced axis.
    func opSlice(_ node: Onnx_NodeProto, _ index: Int) throws {
        var starts: [Int], ends: [Int], axes: [Int], steps: [Int]
        if opset < 10 {
            let a = NodeAttributes(node)
            guard let s = try a.ints("starts"), let e = try a.ints("ends") else { throw fail(node, "attributes 'starts' and 'ends' are required") }
            (starts, ends) = (s, e)
            axes = try a.ints("axes") ?? Array(0 ..< starts.count)
            steps = [Int](repeating: 1, count: starts.count)
        } else {
            starts = try constant(node, 1).integers()
            ends = try constant(node, 2).integers()
            axes = try const(node, 3, required: false)?.integers() ?? Array(0 ..< starts.count)
            steps = try const(node, 4, required: false)?.integers() ?? [Int](repeating: 1, count: starts.count)
        }
        let n = min(starts.count, ends.count, axes.count, steps.count)
        if case .planned(let p)? = try value(node, 0) {
            return try slicePlan(node, p, starts: starts, ends: ends, axes: axes, steps: steps)
        }
        if case .constant(var c)? = try value(node, 0) {
            for i in 0 ..< n {
                let axis = axes[i] < 0 ? axes[i] + c.rank : axes[i]
                guard axis >= 0, axis < c.rank else { throw ImportFailure("axis \(axes[i]) is out of range for rank \(c.rank)") }
                guard steps[i] != 0 else { throw ImportFailure("slice step cannot be zero") }
                c = try c.taking(Self.sliceIndices(starts[i], ends[i], steps[i], extent: c.shape[axis]), axis: axis)
            }
            try set(node, .constant(c))
            return
        }
        var tensor = try act(node, anyLayout: true)
        for i in 0 ..< n {
            tensor = try sliceAxis(node, tensor, axis: axes[i], start: starts[i], end: ends[i], step: steps[i], suffix: axes.count > 1 ? "_\(i)" : "")
        }
        try set(node, tensor)
    }

    /// `Split`: one Anvil Slice per output.
    func opSplit(_ node: Onnx_NodeProto, _ index: Int) throws {
        let a = NodeAttributes(node)
        let axis = try a.int("axis", 0)
        var sizes: [Int]?
        if opset >= 13 && node.input.count > 1 && !node.input[1].isEmpty {
            sizes = try constant(node, 1).integers()
        } else if let split = try a.ints("split") {
            sizes = split
        }
        let extent: Int
        var tensor: ComputedTensor?
        var constantValue: ConstantTensor?
        if case .constant(let c)? = try value(node, 0) {
            guard axis >= -c.rank, axis < c.rank else { throw ImportFailure("axis \(axis) is out of range") }
            extent = c.shape[(axis + c.rank) % c.rank]
            constantValue = c
        } else {
            let t = try act(node, anyLayout: true)
            guard axis >= -t.onnxRank, axis < t.onnxRank else { throw ImportFailure("axis \(axis) is out of range") }
            guard let e = t.onnxShape[(axis + t.onnxRank) % t.onnxRank] else {
                throw fail(node, "splitting axis \(axis), whose extent depends on the open input size; pass --input-shape C,H,W")
            }
            extent = e
            tensor = t
        }
        if sizes == nil {
            let parts = try a.int("num_outputs", node.output.count)
            guard parts >= 1 else { throw ImportFailure("num_outputs must be positive") }
            let size = (extent + parts - 1) / parts
            sizes = [Int](repeating: size, count: parts - 1) + [extent - size * (parts - 1)]
        }
        guard let sizes, sizes.reduce(0, +) == extent, sizes.count == node.output.count, sizes.allSatisfy({ $0 >= 0 }) else {
            throw fail(node, "split sizes \(sizes ?? []) do not divide axis \(axis) of extent \(extent) into \(node.output.count) outputs")
        }
        var start = 0
        for (i, (output, size)) in zip(node.output, sizes).enumerated() {
            if !output.isEmpty {
                if let c = constantValue {
                    values[output] = .constant(try c.taking(Array(start ..< start + size), axis: (axis + c.rank) % c.rank))
                } else {
                    values[output] = .tensor(try sliceAxis(node, tensor!, axis: axis, start: start, end: start + size, step: 1, suffix: "_\(i + 1)"))
                }
            }
            start += size
        }
    }

    /// `Concat`: of constants, a constant; of tensors, Concatenate along the axis holding ONNX's.
    func opConcat(_ node: Onnx_NodeProto, _ index: Int) throws {
        let inputs = try node.input.indices.map { try value(node, $0) }
        let axisAttribute = try NodeAttributes(node).int("axis", 1)
        let constants = inputs.compactMap { v -> ConstantTensor? in if case .constant(let c)? = v { return c }; return nil }
        if constants.count == inputs.count {
            try set(node, .constant(try ConstantTensor.concatenate(constants, axis: axisAttribute)))
            return
        }
        if readsPlanTensor(node) { return try concatPlan(node) }
        var tensors: [ComputedTensor]
        if !constants.isEmpty {
            // A constant joined to computed tensors (ViT's class token before the patches): the
            // same for every item, so its batch axis must have extent 1; written in ONNX's order.
            let computed = try inputs.indices.filter { if case .constant? = inputs[$0] { return false }; return true }
                .map { try act(node, $0, anyLayout: true) }
            let whole = computed.allSatisfy(isWholeItem)
            tensors = try inputs.indices.map { i in
                guard case .constant(let c)? = inputs[i] else { return try toONNXOrder(node, try exact(node, try act(node, i, anyLayout: whole))) }
                // Beside whole items (a graph converted as one item) a constant is whole too.
                if whole { return wholeItem(try writeConstant(node, c), c.shape) }
                guard c.rank >= 2, c.shape[0] == 1 else {
                    throw fail(node, "joins a constant of shape \(c.shape) to computed tensors; its first (batch) axis must have extent 1")
                }
                let item = try c.reshaped(Array(c.shape.dropFirst()))
                return ComputedTensor(try writeConstant(node, item), item.shape.map { $0 }, permutation: Array(0 ..< c.rank))
            }
        } else {
            tensors = try node.input.indices.map { try act(node, $0, anyLayout: true) }
        }
        if tensors.count == 1 {
            try set(node, tensors[0])
            return
        }
        if Set(tensors.map(\.permutation)).count != 1 || Set(tensors.map { $0.batchFold.map { "\($0.axis) \($0.inner)" } ?? "" }).count != 1 {
            // Whole items meet in ONNX's order; batch-first tensors in the standard layout.
            let whole = tensors.allSatisfy(isWholeItem)
            tensors = try tensors.map { whole ? try toONNXOrder(node, try exact(node, $0)) : try toStandard(node, $0) }
        }
        let rank = tensors[0].rank
        let onnxRank = tensors[0].onnxRank
        guard axisAttribute >= -onnxRank, axisAttribute < onnxRank else { throw ImportFailure("axis \(axisAttribute) is out of range for rank \(onnxRank)") }
        let axis = (axisAttribute + onnxRank) % onnxRank
        let shapes = tensors.map(\.onnxShape)
        if tensors[0].holdsBatch(axis) { throw fail(node, "concatenating along the batch axis is not supported") }
        let off = Set(shapes.map { s in Self.text(Array(s[..<min(axis, s.count)]) + (axis + 1 < s.count ? Array(s[(axis + 1)...]) : [])) })
        if off.count != 1 || Set(shapes.map(\.count)).count != 1 {
            throw fail(node, "inputs differ off axis \(axis): [\(shapes.map(Self.text).joined(separator: ", "))]")
        }
        let anvilAxis = tensors[0].permutation[axis]
        let total: Int? = shapes.contains { $0[axis] == nil } ? nil : shapes.reduce(0) { $0 + $1[axis]! }
        if anvilAxis == rank - 1 && Set(tensors.map(\.anvilRank)).count == 1 {
            let name = try add(node, tensors.map(\.name)) { Concatenate(name: $0) }
            try set(node, ComputedTensor(name, Array(tensors[0].shape.dropLast()) + [total], permutation: tensors[0].permutation,
                                         anvilRank: tensors[0].anvilRank, batchFold: tensors[0].batchFold))
            return
        }
        tensors = try tensors.map { try exact(node, $0) }
        let name = try add(node, tensors.map(\.name)) { Concatenate(axis: anvilAxis, name: $0) }
        var dims = tensors[0].shape
        dims[anvilAxis - 1] = total
        if tensors.allSatisfy(isWholeItem), tensors[0].batchFold != nil, !dims.contains(where: { $0 == nil }) {
            return try set(node, wholeItem(name, dims.map { $0! }))
        }
        try set(node, ComputedTensor(name, dims, permutation: tensors[0].permutation, batchFold: tensors[0].batchFold))
    }

    /// `DepthToSpace` (DCR or CRD).
    func opDepthToSpace(_ node: Onnx_NodeProto, _ index: Int) throws {
        let tensor = try act(node)
        try requireSpatial(node, tensor)
        let a = NodeAttributes(node)
        guard let b = try a.int("blocksize"), b >= 1, b <= 1 << 10 else { throw fail(node, "attribute 'blocksize' is missing or out of range") }
        let mode = try a.string("mode", "DCR")
        let (h, w, c) = (tensor.shape[0], tensor.shape[1], tensor.shape[2]!)
        if c % (b * b) != 0 { throw fail(node, "blocksize² \(b * b) does not divide \(c) channels") }
        let order: BlockOrder = try choice(node, mode, "mode")
        let name = try add(node, [tensor.name]) { DepthToSpace(blockSize: b, mode: order, name: $0) }
        try set(node, ComputedTensor(name, [h.map { $0 * b }, w.map { $0 * b }, c / (b * b)]))
    }

    /// `SpaceToDepth` (DCR).
    func opSpaceToDepth(_ node: Onnx_NodeProto, _ index: Int) throws {
        let tensor = try act(node)
        try requireSpatial(node, tensor)
        guard let b = try NodeAttributes(node).int("blocksize"), b >= 1, b <= 1 << 10 else { throw fail(node, "attribute 'blocksize' is missing or out of range") }
        let (h, w, c) = (tensor.shape[0], tensor.shape[1], tensor.shape[2]!)
        if (h.map { $0 % b != 0 } ?? false) || (w.map { $0 % b != 0 } ?? false) {
            throw fail(node, "blocksize \(b) does not divide \(h.map(String.init) ?? "None")x\(w.map(String.init) ?? "None")")
        }
        let name = try add(node, [tensor.name]) { SpaceToDepth(blockSize: b, mode: .depthColumnRow, name: $0) }
        try set(node, ComputedTensor(name, [h.map { $0 / b }, w.map { $0 / b }, c * b * b]))
    }
}
