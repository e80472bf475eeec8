import Anvil

/// Searching, running sums and indexing of computed tensors: `ArgMax`/`ArgMin` (the engine's
/// `ArgReduce`), `CumSum`/`CumProd` (`Cumulative`), `TopK`, and the indexing operators whose
/// indices are constants — `GatherElements`, `GatherND`, `Gather` with an array of indices,
/// `Tile`, `Trilu`, `Compress` — as one `Take` whose positions are worked out here.
extension ONNXConverter {
    static func registerIndexingOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        table["ArgMax"] = { c in { node, _ in try c.argReduce(node, .argMax) } }
        table["ArgMin"] = { c in { node, _ in try c.argReduce(node, .argMin) } }
        table["CumSum"] = { c in { node, _ in try c.cumulative(node, .sum) } }
        table["CumProd"] = { c in { node, _ in try c.cumulative(node, .product) } }
        table["TopK"] = { $0.opTopK }
        table["GatherElements"] = { $0.opGatherElements }
        table["GatherND"] = { $0.opGatherND }
        table["Tile"] = { $0.opTile }
        table["Trilu"] = { $0.opTrilu }
        table["Compress"] = { $0.opCompress }
        table["CenterCropPad"] = { $0.opCenterCropPad }
        table["ReverseSequence"] = { $0.opReverseSequence }
        table["ScatterElements"] = { c in { node, _ in try c.scatterOfTensors(node, elements: true) } }
        table["Scatter"] = { c in { node, _ in try c.scatterOfTensors(node, elements: true) } }
    }

    /// ONNX axis `axis` of a rank-`rank` tensor, resolved; an error when out of range.
    func resolvedAxis(_ node: Onnx_NodeProto, _ axis: Int, rank: Int) throws -> Int {
        guard -rank <= axis, axis < rank else { throw fail(node, "axis \(axis) is out of range for a rank-\(rank) input") }
        return (axis + rank) % rank
    }

    /// Input 0 as a computed tensor whose ONNX axis `axis` does not hold the batch, with Anvil's
    /// rank (its layout unchanged).
    func tensorAlong(_ node: Onnx_NodeProto, axis: Int) throws -> (ComputedTensor, Int) {
        let tensor = try exact(node, try act(node, anyLayout: true))
        let resolved = try resolvedAxis(node, axis, rank: tensor.onnxRank)
        guard !tensor.holdsBatch(resolved) else { throw fail(node, "runs along axis \(resolved), which holds the batch; Anvil keeps each item apart") }
        return (tensor, resolved)
    }

    /// `ArgMax` / `ArgMin` (`axis` 0, `keepdims` 1, `select_last_index` 0): positions as float32.
    func argReduce(_ node: Onnx_NodeProto, _ operation: ArgReduceOperation) throws {
        let a = NodeAttributes(node)
        if case .constant? = try value(node, 0) { throw fail(node, "\(node.opType) of a constant is not folded") }
        let (tensor, axis) = try tensorAlong(node, axis: try a.int("axis", 0))
        let keep = try a.int("keepdims", 1) != 0
        let last = try a.int("select_last_index", 0) != 0, anvilAxis = tensor.permutation[axis]
        let name = try add(node, [tensor.name]) { ArgReduce(operation, axis: anvilAxis, keepDimensions: true, selectLastIndex: last, name: $0) }
        var shape = tensor.shape
        shape[tensor.permutation[axis] - 1] = 1
        let reduced = ComputedTensor(name, shape, permutation: tensor.permutation, batchFold: tensor.batchFold)
        if keep { return try set(node, reduced) }
        let onnx = reduced.onnxShape
        try set(node, try reshapeTensor(node, .tensor(reduced), onnx.indices.filter { $0 != axis }.map { onnx[$0] }))
    }

    /// `CumSum` / `CumProd` (`exclusive`, `reverse`; the axis a constant input).
    func cumulative(_ node: Onnx_NodeProto, _ operation: CumulativeOperation) throws {
        let a = NodeAttributes(node)
        guard let axisTensor = try const(node, 1), axisTensor.count == 1 else { throw fail(node, "needs its axis as one constant") }
        let (tensor, axis) = try tensorAlong(node, axis: try axisTensor.integers()[0])
        let exclusive = try a.int("exclusive", 0) != 0, reverse = try a.int("reverse", 0) != 0, anvilAxis = tensor.permutation[axis]
        let name = try add(node, [tensor.name]) { Cumulative(operation, axis: anvilAxis, exclusive: exclusive, reverse: reverse, name: $0) }
        try set(node, tensor.like(name))
    }

    /// `TopK` (`axis` -1, `largest` 1, `sorted` 1; K a constant): the values and the indices, each
    /// a layer of its own (sorted either way).
    func opTopK(_ node: Onnx_NodeProto, _ index: Int) throws {
        let a = NodeAttributes(node)
        guard let kTensor = try const(node, 1), kTensor.count == 1 else { throw fail(node, "needs K as one constant") }
        let k = try kTensor.integers()[0]
        let (tensor, axis) = try tensorAlong(node, axis: try a.int("axis", -1))
        guard let extent = tensor.onnxShape[axis], k >= 1, k <= extent else {
            throw fail(node, "K \(k) must be in 1...\(tensor.onnxShape[axis].map(String.init) ?? "the axis's extent") (axis \(axis) of \(Self.text(tensor.onnxShape)))")
        }
        var shape = tensor.shape
        shape[tensor.permutation[axis] - 1] = k
        var results: [ComputedTensor] = []
        for (position, result) in [TopKResult.values, .indices].enumerated() where position < node.output.count && !node.output[position].isEmpty {
            let largest = try a.int("largest", 1) != 0, anvilAxis = tensor.permutation[axis]
            let name = try add(node, [tensor.name], suffix: position == 0 ? "" : "_indices") {
                TopK(k: Int(k), axis: anvilAxis, largest: largest, result: result, name: $0)
            }
            results.append(ComputedTensor(name, shape, permutation: tensor.permutation, batchFold: tensor.batchFold))
        }
        for (position, result) in results.enumerated() { values[node.output[position]] = .tensor(result) }
    }

    // MARK: Take

    /// A `Take` of `source` giving an ONNX tensor of `outputShape` (ONNX's view, batch 1 where the
    /// batch is): `position(i)` is the ONNX row-major position in the source of output value i
    /// (-1: zero). The source must hold the batch first, or be a whole item.
    func take(_ node: Onnx_NodeProto, _ source: ComputedTensor, outputShape: [Int], position: (Int) throws -> Int) throws -> ComputedTensor {
        let whole = source.batchFold?.wholeItem == true
        guard whole || source.isBatchFirst else {
            throw fail(node, "indexes a tensor whose batch a Transpose or Reshape moved (\(Self.text(source.onnxShape))); Anvil indexes batch-first tensors")
        }
        guard !source.isOpen else { throw fail(node, "indexes a tensor of open size \(Self.text(source.onnxShape)); pass --input-shape C,H,W") }
        if !whole && outputShape.first != 1 {
            throw fail(node, "its output \(outputShape) does not keep the batch first with extent 1; Anvil keeps each item apart")
        }
        let ordered = try toONNXOrder(node, source)
        let inputCount = ordered.shape.reduce(1) { $0 * $1! }
        guard inputCount < 1 << 24 else { throw fail(node, "indexes a tensor of \(inputCount) values per item (at most \(1 << 24))") }
        let count = outputShape.reduce(1, *)
        guard count >= 1 else { throw fail(node, "gives an empty tensor \(outputShape)") }
        var positions = [Float](repeating: 0, count: count)
        for i in 0 ..< count {
            let p = try position(i)
            guard p >= -1, p < inputCount else { throw fail(node, "an index points outside the input \(Self.text(source.onnxShape))") }
            positions[i] = Float(p)
        }
        let shape = whole ? outputShape : Array(outputShape.dropFirst())
        let name = try add(node, [ordered.name], parameters: [("indices", positions)]) { Take(shape: shape, name: $0) }
        return whole ? wholeItem(name, outputShape) : ComputedTensor(name, shape.map { $0 }, permutation: Array(0 ..< outputShape.count))
    }

    /// The multi-index of row-major position `flat` in `shape`.
    static func multiIndex(_ flat: Int, _ shape: [Int]) -> [Int] {
        var rest = flat, index = [Int](repeating: 0, count: shape.count)
        for axis in shape.indices.reversed() {
            index[axis] = rest % shape[axis]
            rest /= shape[axis]
        }
        return index
    }

    /// The row-major position of `index` in `shape`.
    static func flatPosition(_ index: [Int], _ shape: [Int]) -> Int {
        zip(index, shape).reduce(0) { $0 * $1.1 + $1.0 }
    }

    /// A constant index along an axis of `extent`, negative from the end; an error when outside.
    func wrapped(_ node: Onnx_NodeProto, _ index: Int, extent: Int) throws -> Int {
        guard -extent <= index, index < extent else { throw fail(node, "index \(index) is out of range for an axis of extent \(extent)") }
        return index < 0 ? index + extent : index
    }

    /// The source tensor and its ONNX shape at batch 1 (every extent known).
    func indexedSource(_ node: Onnx_NodeProto) throws -> (ComputedTensor, [Int]) {
        let source = try exact(node, try act(node, anyLayout: true))
        guard !source.isOpen else { throw fail(node, "indexes a tensor of open size \(Self.text(source.onnxShape)); pass --input-shape C,H,W") }
        return (source, source.onnxShape.map { $0! })
    }

    /// `GatherElements(data, indices)` with constant indices (`axis` 0).
    func opGatherElements(_ node: Onnx_NodeProto, _ index: Int) throws {
        let (source, shape) = try indexedSource(node)
        guard let indices = try const(node, 1) else { throw fail(node, "needs constant indices") }
        let axis = try resolvedAxis(node, try NodeAttributes(node).int("axis", 0), rank: shape.count)
        guard indices.rank == shape.count else { throw fail(node, "indices of rank \(indices.rank) for data of rank \(shape.count)") }
        let values = try indices.integers()
        try set(node, try take(node, source, outputShape: indices.shape) { i in
            var at = Self.multiIndex(i, indices.shape)
            guard zip(at, shape).allSatisfy({ $0 < $1 }) else { throw self.fail(node, "indices \(indices.shape) exceed data \(shape)") }
            at[axis] = try self.wrapped(node, values[i], extent: shape[axis])
            return Self.flatPosition(at, shape)
        })
    }

    /// `GatherND(data, indices)` with constant indices (`batch_dims` 0 or more).
    func opGatherND(_ node: Onnx_NodeProto, _ index: Int) throws {
        let (source, shape) = try indexedSource(node)
        guard let indices = try const(node, 1), indices.rank >= 1, let depth = indices.shape.last else { throw fail(node, "needs constant indices") }
        let b = try NodeAttributes(node).int("batch_dims", 0)
        guard b >= 0, b < indices.rank, b + depth <= shape.count, Array(indices.shape.prefix(b)) == Array(shape.prefix(b)) else {
            throw fail(node, "indices \(indices.shape) with batch_dims \(b) do not index data \(shape)")
        }
        let tuples = Array(indices.shape.dropLast()), slice = Array(shape[(b + depth)...])
        let outputShape = tuples + slice
        let sliceCount = slice.reduce(1, *)
        let values = try indices.integers()
        try set(node, try take(node, source, outputShape: outputShape) { i in
            let tuple = i / sliceCount, within = i % sliceCount
            let tupleIndex = Self.multiIndex(tuple, tuples)
            var at = Array(tupleIndex.prefix(b))
            for d in 0 ..< depth { at.append(try self.wrapped(node, values[tuple * depth + d], extent: shape[b + d])) }
            at += Self.multiIndex(within, slice)
            return Self.flatPosition(at, shape)
        })
    }

    /// `Gather` of an array of constant indices from a computed tensor.
    func gatherArray(_ node: Onnx_NodeProto, _ indices: ConstantTensor) throws {
        let (source, shape) = try indexedSource(node)
        let axis = try resolvedAxis(node, try NodeAttributes(node).int("axis", 0), rank: shape.count)
        guard !source.holdsBatch(axis) else { throw fail(node, "gathers along the batch axis; Anvil keeps every item") }
        let outer = Array(shape[..<axis]), inner = Array(shape[(axis + 1)...])
        let outputShape = outer + indices.shape + inner
        let values = try indices.integers()
        try set(node, try take(node, source, outputShape: outputShape) { i in
            let at = Self.multiIndex(i, outputShape)
            let k = Self.flatPosition(Array(at[axis ..< axis + indices.rank]), indices.shape)
            let source = Array(at[..<axis]) + [try self.wrapped(node, values[k], extent: shape[axis])] + Array(at[(axis + indices.rank)...])
            return Self.flatPosition(source, shape)
        })
    }

    /// `Tile(input, repeats)` with constant repeats of a computed tensor (1 along the batch).
    func opTile(_ node: Onnx_NodeProto, _ index: Int) throws {
        if case .constant(let c)? = try value(node, 0), let repeats = try const(node, 1) {
            let counts = try repeats.integers()
            guard counts.count == c.rank, counts.allSatisfy({ $0 >= 0 }) else { throw fail(node, "repeats \(counts) do not fit \(c.shape)") }
            let shape = zip(c.shape, counts).map { $0 * $1 }
            let source = (0 ..< shape.reduce(1, *)).map { Self.flatPosition(zip(Self.multiIndex($0, shape), c.shape).map { $0 % $1 }, c.shape) }
            let tiled = c.isInteger ? ConstantTensor(shape: shape, integers: try c.integers().map(Int64.init).pick(source))
                                    : ConstantTensor(shape: shape, floats: c.floats.pick(source))
            return try set(node, .constant(tiled))
        }
        let (source, shape) = try indexedSource(node)
        guard let repeatsTensor = try const(node, 1) else { throw fail(node, "needs constant repeats") }
        let repeats = try repeatsTensor.integers()
        guard repeats.count == shape.count, repeats.allSatisfy({ $0 >= 1 }) else {
            throw fail(node, "repeats \(repeats) must be one positive count per axis of \(shape)")
        }
        let outputShape = zip(shape, repeats).map { $0 * $1 }
        try set(node, try take(node, source, outputShape: outputShape) { i in
            Self.flatPosition(zip(Self.multiIndex(i, outputShape), shape).map { $0 % $1 }, shape)
        })
    }

    /// `Trilu(input, k)` (`upper` 1; k a constant, 0 when absent): the last two axes' triangle kept, the rest zero.
    func opTrilu(_ node: Onnx_NodeProto, _ index: Int) throws {
        let (source, shape) = try indexedSource(node)
        guard shape.count >= 2 else { throw fail(node, "needs a tensor of rank 2 or more, got \(shape)") }
        // Batch first, a matrix's rows would be the items: each item's triangle depends on its place in the batch.
        if source.batchFold?.wholeItem != true, shape.count == 2 {
            throw fail(node, "keeps a triangle of a matrix whose rows are the batch axis; Anvil keeps each item apart")
        }
        let k = try const(node, 1, required: false).map { try $0.integers()[0] } ?? 0
        let upper = try NodeAttributes(node).int("upper", 1) != 0
        let rows = shape[shape.count - 2], columns = shape[shape.count - 1]
        try set(node, try take(node, source, outputShape: shape) { i in
            let (row, column) = ((i / columns) % rows, i % columns)
            let kept = upper ? column - row >= k : column - row <= k
            return kept ? i : -1
        })
    }

    /// `Compress(input, condition)` with a constant condition: the slices along `axis` whose
    /// condition is true (without `axis`, the elements of the flattened input), in order.
    func opCompress(_ node: Onnx_NodeProto, _ index: Int) throws {
        let (source, shape) = try indexedSource(node)
        guard let condition = try const(node, 1) else { throw fail(node, "needs a constant condition") }
        let keep = condition.doubles.enumerated().filter { $0.element != 0 }.map(\.offset)
        guard !keep.isEmpty else { throw fail(node, "keeps nothing: its output would be empty") }
        guard let axis = try NodeAttributes(node).int("axis").map({ try resolvedAxis(node, $0, rank: shape.count) }) else {
            guard condition.count <= shape.reduce(1, *) else { throw fail(node, "a condition of \(condition.count) for \(shape.reduce(1, *)) elements") }
            return try set(node, try take(node, source, outputShape: [keep.count]) { keep[$0] })
        }
        guard condition.count <= shape[axis] else { throw fail(node, "a condition of \(condition.count) for an axis of extent \(shape[axis])") }
        var output = shape
        output[axis] = keep.count
        try set(node, try take(node, source, outputShape: output) { i in
            var at = Self.multiIndex(i, output)
            at[axis] = keep[at[axis]]
            return Self.flatPosition(at, shape)
        })
    }

    /// Whether `Pad` needs the general form: a tensor that is not an image, the `wrap` mode, or
    /// negative pads (a crop) — which the engine's Pad of images does not take.
    func padsByTake(_ node: Onnx_NodeProto) throws -> Bool {
        guard case .tensor(let tensor)? = try value(node, 0) else { return false }
        let mode = try NodeAttributes(node).string("mode", "constant")
        let pads = try padAmounts(node, rank: tensor.onnxRank)
        return tensor.onnxRank != 4 || mode == "wrap" || pads.contains { $0 < 0 }
    }

    /// ONNX `Pad`'s begins then ends for each of `rank` axes (from the attribute before opset 11,
    /// else input 1, placed by input 3's axes).
    func padAmounts(_ node: Onnx_NodeProto, rank: Int) throws -> [Int] {
        let a = NodeAttributes(node)
        if opset < 11 { return try a.ints("pads") ?? a.ints("paddings") ?? [] }
        let pads = try constant(node, 1).integers()
        guard let axesValue = try const(node, 3, required: false) else { return pads }
        let axes = try axesValue.integers().map { try resolvedAxis(node, $0, rank: rank) }
        guard pads.count == 2 * axes.count else { throw fail(node, "pads \(pads) do not match axes \(axes)") }
        var full = [Int](repeating: 0, count: 2 * rank)
        for (i, axis) in axes.enumerated() { (full[axis], full[axis + rank]) = (pads[i], pads[i + axes.count]) }
        return full
    }

    /// `Pad` of any rank, any mode (constant, edge, reflect, wrap), negative pads cropping: a
    /// `Take` whose positions say where each output value comes from, and for a constant other
    /// than 0 an `Add` of it where nothing was taken.
    func padByTake(_ node: Onnx_NodeProto) throws {
        let (source, shape) = try indexedSource(node)
        let rank = shape.count
        let pads = try padAmounts(node, rank: rank)
        guard pads.count == 2 * rank else { throw fail(node, "pads \(pads) need \(2 * rank) values for a rank-\(rank) input") }
        let mode = try NodeAttributes(node).string("mode", "constant")
        guard ["constant", "edge", "reflect", "wrap"].contains(mode) else { throw fail(node, "mode '\(mode)' is not constant, edge, reflect or wrap") }
        let output = try (0 ..< rank).map { axis -> Int in
            let extent = shape[axis] + pads[axis] + pads[axis + rank]
            guard extent >= 1 else { throw fail(node, "pads \(pads) leave axis \(axis) empty") }
            return extent
        }
        var value = 0.0
        if opset < 11 { value = try NodeAttributes(node).float("value", 0) } else if let c = try const(node, 2, required: false), c.count > 0 { value = c.doubles[0] }
        if mode == "reflect", zip(shape, pads.prefix(rank)).contains(where: { $0 == 1 && $1 != 0 }) {
            throw fail(node, "reflects an axis of extent 1")
        }
        var padded = [Bool](repeating: false, count: output.reduce(1, *))
        let taken = try take(node, source, outputShape: output) { i in
            var at = Self.multiIndex(i, output)
            for axis in 0 ..< rank {
                let extent = shape[axis]
                var j = at[axis] - pads[axis]
                if j < 0 || j >= extent {
                    switch mode {
                    case "edge": j = min(max(j, 0), extent - 1)
                    case "wrap": j = ((j % extent) + extent) % extent
                    case "reflect":
                        let period = 2 * (extent - 1)
                        j = ((j % period) + period) % period
                        if j >= extent { j = period - j }
                    default:
                        padded[i] = true
                        return -1
                    }
                }
                at[axis] = j
            }
            return Self.flatPosition(at, shape)
        }
        guard mode == "constant", value != 0, padded.contains(true) else { return try set(node, taken) }
        let prefix = node.output[0] + "::"
        values[prefix + "taken"] = .tensor(taken)
        try expand(node, [BodyNode(op: "Add", inputs: ["taken", "fill"], output: "y")],
                   constants: ["fill": ConstantTensor(shape: output, floats: padded.map { $0 ? Float(value) : 0 })])
    }

    /// `CenterCropPad(input, shape)` (`axes`: all): each axis cropped about its centre or padded
    /// with zeros around it to the target extent — a `Take`.
    func opCenterCropPad(_ node: Onnx_NodeProto, _ index: Int) throws {
        let (source, shape) = try indexedSource(node)
        guard let targets = try const(node, 1)?.integers() else { throw fail(node, "needs a constant shape") }
        let axes = try (NodeAttributes(node).ints("axes") ?? Array(shape.indices)).map { try resolvedAxis(node, $0, rank: shape.count) }
        guard targets.count == axes.count, targets.allSatisfy({ $0 >= 1 }) else { throw fail(node, "shape \(targets) does not fit axes \(axes)") }
        var output = shape, offset = [Int](repeating: 0, count: shape.count)
        for (axis, target) in zip(axes, targets) {
            output[axis] = target
            // A crop starts (extent − target) / 2 in; a pad puts (target − extent) / 2 before.
            offset[axis] = target <= shape[axis] ? (shape[axis] - target) / 2 : -((target - shape[axis]) / 2)
        }
        try set(node, try take(node, source, outputShape: output) { i in
            var at = Self.multiIndex(i, output)
            for axis in at.indices {
                let j = at[axis] + offset[axis]
                guard j >= 0, j < shape[axis] else { return -1 }
                at[axis] = j
            }
            return Self.flatPosition(at, shape)
        })
    }

    /// `ReverseSequence(input, sequence_lens)` (`time_axis` 0, `batch_axis` 1) with constant
    /// lengths: along the time axis, each sequence's first `sequence_lens[b]` steps reversed — a `Take`.
    func opReverseSequence(_ node: Onnx_NodeProto, _ index: Int) throws {
        let (source, shape) = try indexedSource(node)
        guard let lengths = try const(node, 1)?.integers() else { throw fail(node, "needs constant sequence_lens") }
        let a = NodeAttributes(node)
        let time = try resolvedAxis(node, try a.int("time_axis", 0), rank: shape.count)
        let batch = try resolvedAxis(node, try a.int("batch_axis", 1), rank: shape.count)
        guard time != batch, time <= 1, batch <= 1, lengths.count == shape[batch] else {
            throw fail(node, "needs time and batch axes 0 and 1 and one length per sequence (\(lengths.count) for \(shape[batch]))")
        }
        guard lengths.allSatisfy({ $0 >= 1 && $0 <= shape[time] }) else { throw fail(node, "sequence_lens \(lengths) must be 1 to \(shape[time])") }
        try set(node, try take(node, source, outputShape: shape) { i in
            var at = Self.multiIndex(i, shape)
            let n = lengths[at[batch]]
            if at[time] < n { at[time] = n - 1 - at[time] }
            return Self.flatPosition(at, shape)
        })
    }

    /// Whether input 0 or 2 of `node` is a tensor computed at `predict`.
    func readsComputedTensor(_ node: Onnx_NodeProto) throws -> Bool {
        for position in [0, 2] where position < node.input.count {
            switch try value(node, position) {
            case .tensor?, .flat?: return true
            default: continue
            }
        }
        return false
    }

    /// `ScatterElements` / `Scatter` (`elements`, `axis`) or `ScatterND` with constant indices
    /// into computed data (`reduction` none, add, mul, max, min): the writes grouped in rounds
    /// (the k-th write to a position in round k), each round a `Take` of the updates combined
    /// into the data where its constant mask says — a `Select`, or an `Add` for sums.
    func scatterOfTensors(_ node: Onnx_NodeProto, elements: Bool) throws {
        guard node.input.count == 3, let indices = try const(node, 1) else { throw fail(node, "needs constant indices") }
        let data = try exact(node, try act(node, 0, anyLayout: true)), updates = try exact(node, try act(node, 2, anyLayout: true))
        guard !data.isOpen, !updates.isOpen else { throw fail(node, "scatters into a tensor of open size") }
        let shape = data.onnxShape.map { $0! }, updateShape = updates.onnxShape.map { $0! }
        let reduction = try NodeAttributes(node).string("reduction", "none")
        guard ["none", "add", "mul", "max", "min"].contains(reduction) else { throw fail(node, "reduction '\(reduction)' is not none, add, mul, max or min") }
        // Each write: (position in the data, position in the updates), in ONNX's order.
        var writes: [(target: Int, source: Int)] = []
        let tuples = try indices.integers()
        if elements {
            let axis = try resolvedAxis(node, try NodeAttributes(node).int("axis", 0), rank: shape.count)
            guard indices.shape == updateShape, indices.rank == shape.count else {
                throw fail(node, "indices \(indices.shape) and updates \(updateShape) must have one shape and the data's rank \(shape.count)")
            }
            for i in 0 ..< tuples.count {
                var at = Self.multiIndex(i, indices.shape)
                guard zip(at, shape).allSatisfy({ $0 < $1 }) else { throw fail(node, "indices \(indices.shape) exceed data \(shape)") }
                at[axis] = try wrapped(node, tuples[i], extent: shape[axis])
                writes.append((Self.flatPosition(at, shape), i))
            }
        } else {
            guard let k = indices.shape.last, indices.rank >= 1, k <= shape.count else {
                throw fail(node, "indices of shape \(indices.shape) do not index data of shape \(shape)")
            }
            let slice = Array(shape[k...]), length = slice.reduce(1, *)
            guard updateShape == Array(indices.shape.dropLast()) + slice else {
                throw fail(node, "updates have shape \(updateShape); indices \(indices.shape) into \(shape) need \(Array(indices.shape.dropLast()) + slice)")
            }
            let strides = ConstantTensor.strides(shape)
            for i in 0 ..< (k == 0 ? 1 : tuples.count / k) {
                var offset = 0
                for j in 0 ..< k { offset += try wrapped(node, tuples[i * k + j], extent: shape[j]) * strides[j] }
                for e in 0 ..< length { writes.append((offset + e, i * length + e)) }
            }
        }
        // Rounds: the k-th write to a position goes in round k (with no reduction the last wins,
        // so each round overwrites the one before).
        var round = [Int: Int](), rounds: [[Int: Int]] = []
        for write in writes {
            let k = round[write.target, default: 0]
            round[write.target] = k + 1
            if k == rounds.count { rounds.append([:]) }
            rounds[k][write.target] = write.source
        }
        let prefix = node.output[0] + "::"
        var body: [BodyNode] = [], constants: [String: ConstantTensor] = [:]
        var current = node.input[0]
        let combine = ["add": "Add", "mul": "Mul", "max": "Max", "min": "Min"]
        for (k, sources) in rounds.enumerated() {
            let taken = try take(node, updates, outputShape: shape) { sources[$0] ?? -1 }
            values[prefix + "taken\(k)"] = .tensor(taken)
            let count = shape.reduce(1, *)
            constants["mask\(k)"] = ConstantTensor(shape: shape, integers: (0 ..< count).map { sources[$0] == nil ? 0 : 1 })
            if reduction == "add" {
                body.append(BodyNode(op: "Add", inputs: [current, "taken\(k)"], output: "round\(k)"))
            } else if let op = combine[reduction] {
                body.append(BodyNode(op: op, inputs: [current, "taken\(k)"], output: "combined\(k)"))
                body.append(BodyNode(op: "Where", inputs: ["mask\(k)", "combined\(k)", current], output: "round\(k)"))
            } else {
                body.append(BodyNode(op: "Where", inputs: ["mask\(k)", "taken\(k)", current], output: "round\(k)"))
            }
            current = "round\(k)"
        }
        guard !body.isEmpty else { return try set(node, .tensor(data)) }
        try expand(node, body, constants: constants)
    }
}



extension Array {
    /// The elements at `positions`, in that order.
    fileprivate func pick(_ positions: [Int]) -> [Element] { positions.map { self[$0] } }
}
