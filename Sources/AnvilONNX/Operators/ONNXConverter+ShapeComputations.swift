import Anvil

/// Shape arithmetic on an open input size (``PlanTensor``): `Shape` of a computed tensor, and
/// `Gather`, `Slice`, `Squeeze`, `Unsqueeze`, `Concat`, `Cast`, `Reshape`, `Transpose`, `Range`,
/// `ConstantOfShape`, `Expand` and element-wise arithmetic on what it gives. Written as the
/// engine's shape-computation layers, evaluated once per input size when the plan is built.
/// The operators' handlers in the other files call these when an input is a plan tensor.
extension ONNXConverter {
    static func registerShapeComputationOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        table["Range"] = { $0.opRange }
        table["ConstantOfShape"] = { $0.opConstantOfShape }
        table["Expand"] = { $0.opExpand }
    }

    /// Whether any input of `node` is a plan tensor.
    func readsPlanTensor(_ node: Onnx_NodeProto) -> Bool {
        node.input.contains { name in
            if case .planned? = values[name] { return true }
            return false
        }
    }

    // MARK: Writing

    /// A `Constant` layer holding `constant`; returns its name.
    func writeConstant(_ node: Onnx_NodeProto, _ constant: ConstantTensor) throws -> String {
        guard constant.count <= Constant.maximumCount else {
            throw fail(node, "a constant of \(constant.count) values in shape arithmetic (at most \(Constant.maximumCount))")
        }
        let shape = try Shape(dimensions: constant.shape, elementType: constant.isInteger ? .int64 : .float32)
        let value = constant.isInteger ? try TensorValue(shape: shape, integers: try constant.integers().map { Int64($0) })
                                       : try TensorValue(shape: shape, floats: constant.floats)
        return try add(node, [], suffix: "_constant") { Constant(value, name: $0) }
    }

    /// Input `index` as a plan tensor: a plan tensor itself, or a constant written as a
    /// `Constant` layer; nil for a computed tensor or an absent input.
    func planOperand(_ node: Onnx_NodeProto, _ index: Int) throws -> PlanTensor? {
        switch try value(node, index) {
        case .planned(let plan)?: return plan
        case .constant(let c)?:
            var plan = PlanTensor(name: try writeConstant(node, c), shape: c.shape.map { $0 }, isInteger: c.isInteger)
            if plan.slots != nil { plan.known = try c.integers().map { Int64($0) } }
            return plan
        default: return nil
        }
    }

    /// The engine tensor of `plan`; an error when it holds the batch size, which no plan knows.
    func engineName(_ node: Onnx_NodeProto, _ plan: PlanTensor, what: String = "its input") throws -> String {
        guard !plan.holdsBatch, let name = plan.name else {
            throw fail(node, "\(what) holds the batch size, which Anvil does not know when it builds a plan (one plan serves every batch size); only a Reshape or Expand target may hold it, as its first element")
        }
        return name
    }

    /// An engine `Gather` of the elements at `positions` of the vector `name` (a scalar when `scalar`).
    func gatherElements(_ node: Onnx_NodeProto, _ name: String, _ positions: [Int], scalar: Bool, count: Int) throws -> String {
        if !scalar && positions == Array(0 ..< count) { return name }
        let indices = scalar ? ConstantTensor(shape: [], integers: positions.map { Int64($0) })
                             : ConstantTensor(shape: [positions.count], integers: positions.map { Int64($0) })
        return try add(node, [name, try writeConstant(node, indices)], suffix: "_gather") { Gather(axis: 1, name: $0) }
    }

    /// The vector `plan`'s elements at `picked` (a scalar when `scalar`): their slots, with an
    /// engine `Gather` of those in the engine tensor.
    func pickElements(_ node: Onnx_NodeProto, _ plan: PlanTensor, _ picked: [Int], scalar: Bool) throws -> PlanTensor {
        let slots = plan.slots!, known = plan.known!
        var positions: [Int] = [], newSlots: [PlanTensor.Slot] = []
        for index in picked {
            if case .element(let position) = slots[index] {
                newSlots.append(.element(positions.count))
                positions.append(position)
            } else {
                newSlots.append(slots[index])
            }
        }
        let engineCount = slots.filter { !$0.isBatch }.count
        let name = positions.isEmpty ? nil : try gatherElements(node, plan.name!, positions, scalar: scalar, count: engineCount)
        return PlanTensor(name: name, slots: newSlots, known: picked.map { known[$0] }, scalar: scalar)
    }

    // MARK: Shape

    /// `Shape` of a computed tensor of open size: the engine's `ShapeOf`, its axes in ONNX's
    /// order, the batch size as a slot.
    func shapeOfOpenTensor(_ node: Onnx_NodeProto, _ tensor: ComputedTensor) throws {
        let source = try exact(node, tensor)
        let onnxShape = source.onnxShape
        let a = NodeAttributes(node)
        let range = Self.pythonSliceBounds(try a.int("start") ?? 0, try a.int("end"), count: source.onnxRank)
        var slots: [PlanTensor.Slot] = [], positions: [Int] = []
        for axis in range {
            if source.permutation[axis] == 0 {
                slots.append(.batch(times: 1))
            } else if let fold = source.batchFold, fold.axis == axis {
                guard let extent = onnxShape[axis] else {
                    throw fail(node, "the extent of axis \(axis), which holds the batch, depends on the open input size")
                }
                slots.append(.batch(times: extent))
            } else {
                slots.append(.element(positions.count))
                positions.append(source.permutation[axis] - 1)
            }
        }
        let name = positions.isEmpty ? nil
            : try gatherElements(node, try add(node, [source.name]) { ShapeOf(name: $0) }, positions, scalar: false, count: source.rank - 1)
        let known = range.map { slots[$0 - range.lowerBound].isBatch ? nil : onnxShape[$0].map { Int64($0) } }
        try set(node, .planned(PlanTensor(name: name, slots: slots, known: known, scalar: false)))
    }

    /// `Shape` of a plan tensor: a constant when its shape is known, else the engine's `ShapeOf`.
    func shapeOfPlan(_ node: Onnx_NodeProto, _ plan: PlanTensor) throws {
        let a = NodeAttributes(node)
        let range = Self.pythonSliceBounds(try a.int("start") ?? 0, try a.int("end"), count: plan.rank)
        if plan.shape[range].allSatisfy({ $0 != nil }) {
            let kept = plan.shape[range].map { Int64($0!) }
            try set(node, .constant(ConstantTensor(shape: [kept.count], integers: kept)))
            return
        }
        let name = try add(node, [try engineName(node, plan)]) { ShapeOf(start: range.lowerBound, end: range.upperBound, name: $0) }
        try set(node, .planned(PlanTensor(name: name, slots: range.indices.map { .element($0 - range.lowerBound) },
                                          known: plan.shape[range].map { $0.map { Int64($0) } }, scalar: false)))
    }

    // MARK: Element selection and layout

    /// `Gather` with a plan tensor as data or indices.
    func gatherPlan(_ node: Onnx_NodeProto) throws {
        var axis = try NodeAttributes(node).int("axis", 0)
        if case .planned(let data)? = try value(node, 0), data.slots != nil, case .constant(let indices)? = try value(node, 1) {
            guard data.rank == 1, axis == 0 || axis == -1 else { throw fail(node, "axis \(axis) is out of range for a vector") }
            let count = data.slots!.count
            let picked = try indices.integers().map { i -> Int in
                let j = i < 0 ? i + count : i
                guard j >= 0, j < count else { throw fail(node, "index \(i) is out of range for a vector of \(count)") }
                return j
            }
            guard indices.rank <= 1 else { throw fail(node, "indices of rank \(indices.rank) into a shape vector") }
            try set(node, .planned(try pickElements(node, data, picked, scalar: indices.rank == 0)))
            return
        }
        guard let data = try planOperand(node, 0), let indices = try planOperand(node, 1) else {
            throw fail(node, "gathers from a computed tensor with indices computed from the input size")
        }
        if axis < 0 { axis += data.rank }
        guard axis >= 0, axis < data.rank else { throw fail(node, "axis \(axis) is out of range for rank \(data.rank)") }
        let name = try add(node, [try engineName(node, data), try engineName(node, indices, what: "its indices")]) { Gather(axis: axis + 1, name: $0) }
        let shape = Array(data.shape[..<axis]) + indices.shape + Array(data.shape[(axis + 1)...])
        try set(node, .planned(PlanTensor(name: name, shape: shape, isInteger: data.isInteger)))
    }

    /// `Slice` of a plan tensor (constant bounds).
    func slicePlan(_ node: Onnx_NodeProto, _ plan: PlanTensor, starts: [Int], ends: [Int], axes: [Int], steps: [Int]) throws {
        if plan.slots != nil, plan.rank == 1 {
            var picked = Array(0 ..< plan.slots!.count)
            for i in 0 ..< min(starts.count, ends.count, axes.count, steps.count) {
                guard axes[i] == 0 || axes[i] == -1 else { throw fail(node, "axis \(axes[i]) is out of range for a vector") }
                guard steps[i] != 0 else { throw fail(node, "a step of 0 is not allowed") }
                picked = Self.sliceIndices(starts[i], ends[i], steps[i], extent: picked.count).map { picked[$0] }
            }
            try set(node, .planned(try pickElements(node, plan, picked, scalar: false)))
            return
        }
        var name = try engineName(node, plan)
        var shape = plan.shape
        for i in 0 ..< min(starts.count, ends.count, axes.count, steps.count) {
            let axis = axes[i] < 0 ? axes[i] + plan.rank : axes[i]
            guard axis >= 0, axis < plan.rank else { throw fail(node, "axis \(axes[i]) is out of range for rank \(plan.rank)") }
            guard steps[i] != 0 else { throw fail(node, "a step of 0 is not allowed") }
            name = try add(node, [name], suffix: "_\(i)") { Slice(axis: axis + 1, start: starts[i], end: ends[i], step: steps[i], name: $0) }
            shape[axis] = shape[axis].map { Self.sliceCount(starts[i], ends[i], steps[i], extent: $0) }
        }
        try set(node, .planned(PlanTensor(name: name, shape: shape, isInteger: plan.isInteger)))
    }

    /// `Squeeze` / `Unsqueeze` of a plan tensor to `shape` (ONNX's axes after the change): the
    /// engine's Squeeze (`squeezing`) or Unsqueeze with `axes` (ONNX's; the engine's count its batch axis).
    func reshapePlan(_ node: Onnx_NodeProto, _ plan: PlanTensor, to shape: [Int?], squeezing: Bool, axes: [Int]) throws {
        if let slots = plan.slots, shape.count <= 1 {
            // A vector stays a vector (or becomes a scalar): the same elements.
            let engine = slots.filter { !$0.isBatch }.count
            var name = plan.name
            if let source = name, (plan.rank == 0) != (shape.count == 0) {
                name = try add(node, [source]) { Reshape(shape.count == 0 ? [] : [engine], name: $0) }
            }
            try set(node, .planned(PlanTensor(name: name, slots: slots, known: plan.known!, scalar: shape.isEmpty)))
            return
        }
        let source = try engineName(node, plan)
        let engineAxes = axes.map { $0 + 1 }
        let name = try add(node, [source]) { name -> any Layer in
            squeezing ? Squeeze(axes: engineAxes, name: name) : Unsqueeze(axes: engineAxes, name: name)
        }
        try set(node, .planned(PlanTensor(name: name, shape: shape, isInteger: plan.isInteger)))
    }

    /// `Transpose` of a plan tensor.
    func transposePlan(_ node: Onnx_NodeProto, _ plan: PlanTensor, _ permutation: [Int]?) throws {
        let perm = permutation ?? Array((0 ..< plan.rank).reversed())
        guard perm.sorted() == Array(0 ..< plan.rank) else { throw fail(node, "perm \(perm) is not a permutation of \(plan.rank) axes") }
        let name = try add(node, [try engineName(node, plan)]) { Transpose(permutation: [0] + perm.map { $0 + 1 }, name: $0) }
        try set(node, .planned(PlanTensor(name: name, shape: perm.map { plan.shape[$0] }, isInteger: plan.isInteger)))
    }

    /// `Concat` of plan tensors and constants.
    func concatPlan(_ node: Onnx_NodeProto) throws {
        let parts = try node.input.indices.compactMap { try planOperand(node, $0) }
        guard parts.count == node.input.count else {
            throw fail(node, "concatenates a computed tensor with a shape computation")
        }
        let axisAttribute = try NodeAttributes(node).int("axis", 0)
        if parts.allSatisfy({ $0.slots != nil && $0.rank == 1 }) {
            guard axisAttribute == 0 || axisAttribute == -1 else { throw fail(node, "axis \(axisAttribute) is out of range for vectors") }
            var slots: [PlanTensor.Slot] = [], known: [Int64?] = [], names: [String] = []
            var offset = 0
            for part in parts {
                for slot in part.slots! {
                    if case .element(let position) = slot { slots.append(.element(position + offset)) } else { slots.append(slot) }
                }
                known += part.known!
                if let name = part.name {
                    names.append(name)
                    offset += part.slots!.filter { !$0.isBatch }.count
                }
            }
            let name = names.count > 1 ? try add(node, names) { Concatenate(axis: 1, name: $0) } : names.first
            try set(node, .planned(PlanTensor(name: name, slots: slots, known: known, scalar: false)))
            return
        }
        let rank = parts[0].rank
        guard rank > 0, axisAttribute >= -rank, axisAttribute < rank, parts.allSatisfy({ $0.rank == rank }) else {
            throw fail(node, "axis \(axisAttribute) or the ranks [\(parts.map { "\($0.rank)" }.joined(separator: ", "))] do not fit")
        }
        let axis = (axisAttribute + rank) % rank
        let names = try parts.map { try engineName(node, $0) }
        let name = try add(node, names) { Concatenate(axis: axis + 1, name: $0) }
        var shape = parts[0].shape
        shape[axis] = parts.contains { $0.shape[axis] == nil } ? nil : parts.reduce(0) { $0 + $1.shape[axis]! }
        try set(node, .planned(PlanTensor(name: name, shape: shape, isInteger: parts.allSatisfy(\.isInteger))))
    }

    /// `Cast` of a plan tensor to ONNX data type `to`.
    func castPlan(_ node: Onnx_NodeProto, _ plan: PlanTensor, to: Int) throws {
        let toFloat = TensorDecoding.floatTypes.contains(Int32(clamping: to))
        if !toFloat && to != 9 && plan.isInteger || toFloat && !plan.isInteger {
            try set(node, .planned(plan))
            return
        }
        let name = try add(node, [try engineName(node, plan)]) { Cast(to: toFloat ? .float32 : to == 9 ? .bool : .int64, name: $0) }
        var cast = PlanTensor(name: name, shape: plan.shape, isInteger: !toFloat)
        if to == 9 { cast.slots = nil }
        try set(node, .planned(cast))
    }

    // MARK: Reshape and Expand targets

    /// The engine target of a `Reshape`/`Expand` of a computed tensor to the vector `target`,
    /// whose first element keeps the batch axis (the batch size; 1 or, for a Reshape, 0: the
    /// batch axis as it is): the other elements, and those known at conversion.
    func batchTarget(_ node: Onnx_NodeProto, _ target: PlanTensor, zeroCopies: Bool = false) throws -> (name: String?, known: [Int64?]) {
        guard let slots = target.slots, target.rank == 1, let first = slots.first else { throw fail(node, "its target shape must be a vector") }
        let keeps = first == .batch(times: 1) || target.known![0] == 1 || (zeroCopies && target.known![0] == 0)
        guard keeps, !slots.dropFirst().contains(where: { $0.isBatch }) else {
            throw fail(node, "its target shape does not keep the batch axis first (Anvil keeps it; one plan serves every batch size)")
        }
        let rest = try pickElements(node, target, Array(1 ..< slots.count), scalar: false)
        return (rest.name, rest.known!)
    }

    /// `Reshape` of a computed tensor to a target computed from the input size.
    func reshapeToPlan(_ node: Onnx_NodeProto, _ target: PlanTensor) throws {
        var source: ComputedTensor
        switch try actOrFlat(node) {
        case .flat(let flat): source = try writeFlatten(flat, node)
        case .tensor(let t): source = t
        default: throw fail(node, "cannot reshape this value")
        }
        let allowZero = try NodeAttributes(node).int("allowzero", 0) != 0
        if let slots = target.slots, target.rank == 1, !slots.contains(where: \.isBatch), !source.isOpen,
           let known = target.known.map({ $0.compactMap { $0.map { Int($0) } } }), known.count == slots.count {
            // Every element known: a target fixed at conversion, the batch placed by its stride.
            let resolved = try resolveShape(node, source.onnxShape.map { $0! }, known, allowZero: allowZero)
            return try set(node, try reshapeTensor(node, .tensor(source), resolved.map { $0 }))
        }
        if let slots = target.slots, target.rank == 1,
           !source.isBatchFirst || slots.dropFirst().contains(where: \.isBatch) || slots.first.map({ $0.isBatch && $0 != .batch(times: 1) }) == true {
            return try reshapeMovingBatch(node, source, to: target, allowZero: allowZero)
        }
        source = try toONNXOrder(node, try exact(node, source))
        let (name, known) = try batchTarget(node, target, zeroCopies: !allowZero)
        let current = Array(source.onnxShape.dropFirst())
        var shape: [Int?] = known.enumerated().map { i, value in
            guard let value else { return nil }
            if value == 0 && !allowZero { return i < current.count ? current[i] : nil }
            return value > 0 ? Int(value) : nil
        }
        if let inferred = known.firstIndex(of: -1), !current.contains(where: { $0 == nil }) {
            let others = shape.enumerated().filter { $0.offset != inferred }.map(\.element)
            if others.allSatisfy({ $0 != nil }) {
                let product = others.reduce(1) { $0 * $1! }
                shape[inferred] = product > 0 ? current.reduce(1) { $0 * $1! } / product : nil
            }
        }
        let output: String
        if let name {
            output = try add(node, [source.name, name]) { Reshape(name: $0) }
        } else {
            output = try add(node, [source.name]) { Reshape([], name: $0) }
        }
        try set(node, ComputedTensor(output, shape, permutation: Array(0 ... shape.count)))
    }

    /// `Reshape` of a computed tensor whose batch moves or has moved, to a target whose other
    /// elements are known at conversion: the batch goes where the target's batch element is.
    func reshapeMovingBatch(_ node: Onnx_NodeProto, _ source: ComputedTensor, to target: PlanTensor, allowZero: Bool) throws {
        let slots = target.slots!, known = target.known!
        let current = source.onnxShape
        var resolved: [Int] = [], batchAxis: Int?
        for (i, slot) in slots.enumerated() {
            if case .batch(let times) = slot {
                guard batchAxis == nil else { throw fail(node, "its target shape holds the batch size twice") }
                batchAxis = i
                resolved.append(times)
            } else if let value = known[i] {
                if value == 0 && !allowZero {
                    guard i < current.count, let extent = current[i] else { throw fail(node, "element \(i) of its target (0: copy) has no known extent to copy") }
                    resolved.append(extent)
                } else {
                    resolved.append(Int(value))
                }
            } else {
                throw fail(node, "its target shape moves the batch and element \(i) depends on the open input size; pass --input-shape C,H,W")
            }
        }
        guard let batchAxis else {
            throw fail(node, "its target shape \(Self.text(known.map { $0.map { Int($0) } })) drops the batch size (Anvil keeps every item)")
        }
        guard !current.contains(where: { $0 == nil }) else { throw fail(node, "reshaping \(Self.text(current)), whose size depends on the open input size, while moving the batch") }
        let full = try resolveShape(node, current.map { $0! }, resolved, allowZero: true)
        try set(node, try reshapeMovingBatch(node, source, full.map { $0 }, batchAxis: batchAxis))
    }

    /// `Expand` of a tensor whose batch a Transpose or Reshape moved (`F.normalize`'s norm
    /// expanded to its input): the batch's axis keeps its extent, every other element of the
    /// target is known at conversion.
    func expandMovingBatch(_ node: Onnx_NodeProto, _ tensor: ComputedTensor, _ target: PlanTensor, known: [Int64?]) throws {
        var source = try toONNXOrder(node, try exact(node, tensor))
        let whole = isWholeItem(source)
        if whole, known.count > source.onnxRank, !source.isOpen {
            // One item: the target's extra leading axes are axes of 1 first (NumPy aligns the last axes).
            let shape = [Int](repeating: 1, count: known.count - source.onnxRank) + source.onnxShape.map { $0! }
            source = wholeItem(try add(node, [source.name], suffix: "_axes") { Reshape(shape, name: $0) }, shape)
        }
        let onnx = source.onnxShape, rank = source.onnxRank
        guard known.count == rank, !onnx.contains(where: { $0 == nil }) else {
            throw fail(node, "expanding \(Self.text(onnx)) to a target of \(known.count) axes while the batch is moved is not supported")
        }
        let batchAxis = source.batchFold?.axis ?? source.batchAxis ?? -1
        var item: [Int] = []
        for i in 0 ..< rank {
            let slot = target.slots?[i]
            if i == batchAxis && !whole {
                let keeps: Bool
                if case .batch(let times)? = slot { keeps = times == onnx[i]! } else { keeps = known[i] == 1 || known[i] == Int64(onnx[i]!) }
                guard keeps else { throw fail(node, "its target changes axis \(i), which holds the batch") }
                if source.batchFold != nil { item.append(onnx[i]!) }
                continue
            }
            guard let value = known[i], slot?.isBatch != true else {
                throw fail(node, "element \(i) of its target is not known at conversion while the batch is moved")
            }
            item.append(Int(value))
        }
        let shape: [Int?] = zip(source.shape, item).map { c, t in c == 1 ? t : c }
        let output = try add(node, [source.name, try writeConstant(node, ConstantTensor(shape: [item.count], integers: item.map { Int64($0) }))]) { Expand(name: $0) }
        if whole, !shape.contains(where: { $0 == nil }) { return try set(node, wholeItem(output, shape.map { $0! })) }
        try set(node, ComputedTensor(output, shape, permutation: source.permutation, batchFold: source.batchFold))
    }

    /// `Reshape` of a plan tensor.
    func reshapePlanData(_ node: Onnx_NodeProto, _ plan: PlanTensor) throws {
        let source = try engineName(node, plan)
        if case .constant(let c)? = try value(node, 1) {
            let target = try c.integers()
            var shape: [Int?] = target.enumerated().map { i, t in t == 0 ? (i < plan.rank ? plan.shape[i] : nil) : t > 0 ? t : nil }
            if let inferred = target.firstIndex(of: -1), !plan.shape.contains(where: { $0 == nil }),
               shape.enumerated().allSatisfy({ $0.offset == inferred || $0.element != nil }) {
                let product = shape.enumerated().filter { $0.offset != inferred }.reduce(1) { $0 * $1.element! }
                shape[inferred] = product > 0 ? plan.shape.reduce(1) { $0 * $1! } / product : nil
            }
            let name = try add(node, [source]) { Reshape(target, name: $0) }
            try set(node, .planned(PlanTensor(name: name, shape: shape, isInteger: plan.isInteger)))
            return
        }
        guard let target = try planOperand(node, 1) else { throw fail(node, "its target shape is computed at predict") }
        let name = try add(node, [source, try engineName(node, target, what: "its target shape")]) { Reshape(name: $0) }
        let count = target.slots?.count ?? target.shape.first ?? nil
        let shape: [Int?] = (0 ..< (count ?? 0)).map { i in target.known?[i].flatMap { $0 > 0 ? Int($0) : nil } }
        guard count != nil else { throw fail(node, "its target shape has an open length") }
        try set(node, .planned(PlanTensor(name: name, shape: shape, isInteger: plan.isInteger)))
    }

    /// `Expand`: of a constant or plan tensor, or of a computed tensor, to a target that may be
    /// computed from the input size.
    func opExpand(_ node: Onnx_NodeProto, _ index: Int) throws {
        let input = try value(node, 0)
        if case .constant(let data)? = input, case .constant(let target)? = try value(node, 1) {
            let shape = try ConstantTensor.broadcastShape(data.shape, try target.integers())
            return try set(node, .constant(try data.broadcast(to: shape)))
        }
        guard let target = try planOperand(node, 1) else { throw fail(node, "its target shape is computed at predict") }
        guard target.rank == 1, let count = target.shape[0] else { throw fail(node, "its target shape must be a vector") }
        let known = target.known ?? [Int64?](repeating: nil, count: count)
        switch input {
        case .tensor(let tensor)? where !tensor.isBatchFirst:
            return try expandMovingBatch(node, tensor, target, known: known)
        case .tensor?, .flat?:
            let tensor = try act(node, anyLayout: true)
            try requireBatchFirst(node, tensor)
            let source = try toONNXOrder(node, try exact(node, tensor))
            guard count == source.rank else {
                throw fail(node, "expanding \(Self.text(source.onnxShape)) to a target of \(count) axes (not the tensor's \(source.rank)) is not supported")
            }
            let (name, rest) = try batchTarget(node, target)
            let current = Array(source.onnxShape.dropFirst())
            let shape: [Int?] = zip(current, rest).map { c, t in c != 1 ? c : t.flatMap { Int($0) } }
            let output = try add(node, [source.name, try name ?? writeConstant(node, ConstantTensor(shape: [0], integers: []))]) { Expand(name: $0) }
            try set(node, ComputedTensor(output, shape, permutation: Array(0 ... shape.count)))
            return
        default: break
        }
        guard let data = try planOperand(node, 0) else { throw fail(node, "input 0 is missing") }
        let rank = max(data.rank, count)
        let a = [Int?](repeating: 1, count: rank - data.rank) + data.shape
        let b = [Int?](repeating: 1, count: rank - count) + known.map { $0.map { Int($0) } }
        let shape: [Int?] = zip(a, b).map { x, y in x == 1 ? y : x }
        let name = try add(node, [try engineName(node, data), try engineName(node, target, what: "its target shape")]) { Expand(name: $0) }
        try set(node, .planned(PlanTensor(name: name, shape: shape, isInteger: data.isInteger)))
    }

    // MARK: Generators

    /// `Range`: of constants, a constant; else the engine's `Range` on scalars computed from the input size.
    func opRange(_ node: Onnx_NodeProto, _ index: Int) throws {
        let inputs = try (0 ..< 3).map { try value(node, $0) }
        let constants = inputs.compactMap { v -> ConstantTensor? in if case .constant(let c)? = v { return c }; return nil }
        if constants.count == 3 {
            guard constants.allSatisfy({ $0.count == 1 }) else { throw fail(node, "start, limit and delta must be scalars") }
            let (start, limit, delta) = (constants[0].doubles[0], constants[1].doubles[0], constants[2].doubles[0])
            guard delta != 0 else { throw fail(node, "delta must not be 0") }
            let steps = ((limit - start) / delta).rounded(.up)
            guard steps <= Double(Constant.maximumCount) else { throw fail(node, "a range of \(steps) values") }
            let count = max(Int(steps), 0)
            if constants.allSatisfy(\.isInteger) {
                let s = Int64(start), d = Int64(delta)
                try set(node, .constant(ConstantTensor(shape: [count], integers: (0 ..< count).map { s + Int64($0) * d })))
            } else {
                try set(node, .constant(ConstantTensor(shape: [count], floats: (0 ..< count).map { Float(start + Double($0) * delta) })))
            }
            return
        }
        let parts = try (0 ..< 3).map { i -> PlanTensor in
            guard let part = try planOperand(node, i) else { throw fail(node, "input \(i) is computed at predict; Range's inputs must be known when the plan is built") }
            return part
        }
        let names = try parts.map { try engineName(node, $0) }
        let name = try add(node, names) { Arange(name: $0) }
        try set(node, .planned(PlanTensor(name: name, shape: [nil], isInteger: parts.allSatisfy(\.isInteger))))
    }

    /// `ConstantOfShape`: of a constant shape, a constant; else the engine's `ConstantOfShape`.
    func opConstantOfShape(_ node: Onnx_NodeProto, _ index: Int) throws {
        var fill = 0.0
        var integer = false
        if let tensor = try NodeAttributes(node).tensor("value") {
            let c = try decoding.constant(tensor, what: "\(describe(node)) attribute 'value'")
            guard c.count == 1 else { throw fail(node, "attribute 'value' must hold one value") }
            fill = c.doubles[0]
            integer = c.isInteger
        }
        if case .constant(let shapeConstant)? = try value(node, 0) {
            let dims = try shapeConstant.integers()
            let count = try ConstantTensor.elementCount(dims)
            guard count <= Constant.maximumCount * 64 else { throw fail(node, "a constant of \(count) values") }
            try set(node, .constant(integer ? ConstantTensor(shape: dims, integers: [Int64](repeating: Int64(fill), count: count))
                                            : ConstantTensor(shape: dims, floats: [Float](repeating: Float(fill), count: count))))
            return
        }
        guard let target = try planOperand(node, 0) else { throw fail(node, "its shape is computed at predict") }
        guard target.rank == 1, let count = target.shape[0] else { throw fail(node, "its shape must be a vector") }
        let name = try add(node, [try engineName(node, target, what: "its shape")]) {
            ConstantOfShape(fill, elementType: integer ? .int64 : .float32, name: $0)
        }
        let shape: [Int?] = (0 ..< count).map { i in target.known?[i].map { Int($0) } }
        try set(node, .planned(PlanTensor(name: name, shape: shape, isInteger: integer)))
    }

    // MARK: Arithmetic

    /// A product with the batch size among the elements (`B·heads`, `T·B`): the batch size
    /// times a number known at conversion. Every other element must be known too.
    func batchArithmetic(_ node: Onnx_NodeProto, _ op: String, _ parts: [PlanTensor]) throws {
        let refusal = "\(op) of the batch size with a value computed from the input size; Anvil follows only the batch size times (or a multiple of it divided by) numbers known at conversion"
        guard op == "Mul" || op == "Div", parts.allSatisfy({ $0.slots != nil && $0.rank <= 1 }) else { throw fail(node, refusal) }
        let counts = parts.map { $0.slots!.count }
        let count = counts.max()!
        guard counts.allSatisfy({ $0 == count || $0 == 1 }) else { throw fail(node, "cannot broadcast \(counts[0]) and \(counts[1]) elements") }
        var slots: [PlanTensor.Slot] = [], known: [Int64?] = [], values: [Int64] = []
        for i in 0 ..< count {
            let (a, b) = (parts[0], parts[1])
            let (sa, ka) = (a.slots![a.slots!.count == 1 ? 0 : i], a.known![a.known!.count == 1 ? 0 : i])
            let (sb, kb) = (b.slots![b.slots!.count == 1 ? 0 : i], b.known![b.known!.count == 1 ? 0 : i])
            switch (sa, sb) {
            case (.batch, .batch): throw fail(node, "multiplies the batch size by itself")
            case (.batch(let times), _) where op == "Div":
                // (B·k) / d = B·(k / d) exactly when d divides k.
                guard let kb, kb > 0, times % Int(kb) == 0 else { throw fail(node, refusal) }
                slots.append(.batch(times: times / Int(kb)))
                known.append(nil)
            case (.batch(let times), _), (_, .batch(let times)):
                guard op == "Mul", let k = sa.isBatch ? kb : ka, let factor = Int(exactly: k) else { throw fail(node, refusal) }
                slots.append(.batch(times: times * factor))
                known.append(nil)
            default:
                guard let ka, let kb, op == "Mul" || kb != 0 else { throw fail(node, refusal) }
                let value = op == "Mul" ? ka &* kb : ka / kb
                slots.append(.element(values.count))
                values.append(value)
                known.append(value)
            }
        }
        let scalar = parts.allSatisfy { $0.rank == 0 }
        let name = values.isEmpty ? nil
            : try writeConstant(node, scalar ? ConstantTensor(shape: [], integers: values) : ConstantTensor(shape: [values.count], integers: values))
        try set(node, .planned(PlanTensor(name: name, slots: slots, known: known, scalar: scalar)))
    }

    /// Element-wise arithmetic with a plan tensor among the inputs: on plan tensors and
    /// constants, a plan tensor; with a computed tensor, an `Elementwise` of the two whose
    /// plan-tensor operand the engine writes before the step.
    func elementwisePlan(_ node: Onnx_NodeProto, _ op: String) throws {
        guard let operation = Self.operations[op], node.input.count == 2 else {
            throw fail(node, "\(op) of \(node.input.count) inputs with a shape computation")
        }
        let computed = try node.input.indices.filter { i in
            switch try value(node, i) {
            case .tensor?, .flat?: return true
            default: return false
            }
        }
        if computed.isEmpty {
            let parts = try (0 ..< 2).map { try planOperand(node, $0)! }
            if parts.contains(where: \.holdsBatch) { return try batchArithmetic(node, op, parts) }
            let names = try parts.map { try engineName(node, $0) }
            let name = try add(node, names) { Elementwise(operation, name: $0) }
            let rank = max(parts[0].rank, parts[1].rank)
            let a = [Int?](repeating: 1, count: rank - parts[0].rank) + parts[0].shape
            let b = [Int?](repeating: 1, count: rank - parts[1].rank) + parts[1].shape
            var result = PlanTensor(name: name, shape: zip(a, b).map { x, y in x == 1 ? y : y == 1 ? x : x ?? y },
                                    isInteger: parts[0].isInteger && parts[1].isInteger)
            if let ka = parts[0].known, let kb = parts[1].known, ka.count == kb.count || ka.count == 1 || kb.count == 1,
               result.slots != nil, let count = result.shape.first ?? 1 {
                result.known = (0 ..< count).map { i in
                    guard let x = ka[ka.count == 1 ? 0 : i], let y = kb[kb.count == 1 ? 0 : i] else { return nil }
                    return try? Self.fold(op, ConstantTensor(shape: [], integers: [x]), ConstantTensor(shape: [], integers: [y])).integers().first.map { Int64($0) }
                }
            }
            try set(node, .planned(result))
            return
        }
        guard computed.count == 1 else { throw fail(node, "\(op) of two computed tensors with a shape computation") }
        let tensorIndex = computed[0], planIndex = 1 - tensorIndex
        let computedTensor = try act(node, tensorIndex, anyLayout: true)
        try requireBatchFirst(node, computedTensor)
        let tensor = try toONNXOrder(node, try exact(node, computedTensor))
        let plan = try planOperand(node, planIndex)!
        var operand = try engineName(node, plan)
        if plan.isInteger { operand = try add(node, [operand], suffix: "_float") { Cast(to: .float32, name: $0) } }
        var planShape = plan.shape
        // ONNX aligns the operands' last axes; a plan tensor of the tensor's rank spans the batch axis with extent 1.
        if planShape.count >= tensor.rank {
            let leading = planShape.count - tensor.rank + 1
            guard planShape.prefix(leading).allSatisfy({ $0 == 1 }) else {
                throw fail(node, "a shape computation of shape \(Self.text(planShape)) spans the batch axis of \(Self.text(tensor.onnxShape)); Anvil broadcasts it over the batch")
            }
            planShape.removeFirst(leading)
            operand = try add(node, [operand], suffix: "_operand") { Reshape(planShape.map { $0 ?? -1 }, name: $0) }
        }
        let inputs = tensorIndex == 0 ? [tensor.name, operand] : [operand, tensor.name]
        let name = try add(node, inputs) { Elementwise(operation, name: $0) }
        let dims = Array(tensor.onnxShape.dropFirst())
        let aligned = [Int?](repeating: 1, count: dims.count - planShape.count) + planShape
        let shape: [Int?] = zip(dims, aligned).map { x, y in x == 1 ? y : x }
        try set(node, ComputedTensor(name, shape, permutation: Array(0 ... shape.count)))
    }
}
