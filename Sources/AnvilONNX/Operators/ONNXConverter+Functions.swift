import Anvil

/// Operators converted through their ONNX function bodies (the nodes the ONNX specification
/// defines them as, written here as synthetic nodes and converted one by one): `RMSNormalization`,
/// `LpNormalization`, `ReduceLogSum`, `IsNaN`, `IsInf`, `Shrink`, `Hardmax`, `OneHot`, `EyeLike`, `AffineGrid`; and `If` whose condition is known, by its branch.
extension ONNXConverter {
    static func registerFunctionOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        table["RMSNormalization"] = { $0.opRMSNormalization }
        table["LpNormalization"] = { $0.opLpNormalization }
        table["ReduceLogSum"] = { $0.opReduceLogSum }
        table["IsNaN"] = { $0.opIsNaN }
        table["IsInf"] = { $0.opIsInf }
        table["Shrink"] = { $0.opShrink }
        table["Hardmax"] = { $0.opHardmax }
        table["OneHot"] = { $0.opOneHot }
        table["EyeLike"] = { $0.opEyeLike }
        table["AffineGrid"] = { $0.opAffineGrid }
        table["If"] = { $0.opIf }
    }

    /// `LayerNormalization` whose `Mean` or `InvStdDev` output is read: its function body, which
    /// computes them (`axis` -1, `epsilon` 1e-5; float statistics).
    func layerNormalizationBody(_ node: Onnx_NodeProto) throws {
        let a = NodeAttributes(node)
        let rank = try inputRank(node)
        let axis = try resolvedAxis(node, try a.int("axis", -1), rank: rank)
        let axes = Array(axis ..< rank)
        guard node.input.count >= 2 else { throw fail(node, "needs X and Scale") }
        var body = [
            BodyNode(op: "ReduceMean", inputs: [node.input[0]], output: "mean", ints: ["keepdims": 1], intLists: ["axes": axes]),
            BodyNode(op: "Sub", inputs: [node.input[0], "mean"], output: "deviation"),
            BodyNode(op: "Mul", inputs: ["deviation", "deviation"], output: "square"),
            BodyNode(op: "ReduceMean", inputs: ["square"], output: "variance", ints: ["keepdims": 1], intLists: ["axes": axes]),
            BodyNode(op: "Add", inputs: ["variance", "epsilon"], output: "shifted"),
            BodyNode(op: "Sqrt", inputs: ["shifted"], output: "deviationScale"),
            BodyNode(op: "Reciprocal", inputs: ["deviationScale"], output: "inverse"),
            BodyNode(op: "Mul", inputs: ["deviation", "inverse"], output: "normalized"),
            BodyNode(op: "Mul", inputs: ["normalized", node.input[1]], output: "scaled"),
        ]
        if node.input.count > 2 && !node.input[2].isEmpty { body.append(BodyNode(op: "Add", inputs: ["scaled", node.input[2]], output: "biased")) }
        try expand(node, body, constants: ["epsilon": ConstantTensor(shape: [], floats: [Float(try a.float("epsilon", 1e-5))])],
                   results: ["mean": 1, "inverse": 2])
    }

    /// One node of a function body: its operator, inputs, output and integer attributes.
    struct BodyNode {
        let op: String
        let inputs: [String]
        let output: String
        var ints: [String: Int] = [:]
        var intLists: [String: [Int]] = [:]
        var floats: [String: Float] = [:]
    }

    /// Converts `body` in place of `node`: names local to the body get the node's output as a
    /// prefix, `constants` are bound first, the last body node writes the node's output, and
    /// `results` names the local values that are its other outputs (by output position).
    func expand(_ node: Onnx_NodeProto, _ body: [BodyNode], constants: [String: ConstantTensor] = [:], results: [String: Int] = [:]) throws {
        let prefix = node.output[0] + "::"
        let external = Set(node.input)
        let local: (String) -> String = { name in
            if let position = results[name], position < node.output.count, !node.output[position].isEmpty { return node.output[position] }
            return external.contains(name) ? name : prefix + name
        }
        for (name, value) in constants { values[prefix + name] = .constant(value) }
        for (position, part) in body.enumerated() {
            var synthetic = Onnx_NodeProto()
            synthetic.opType = part.op
            synthetic.name = (node.name.isEmpty ? node.output[0] : node.name) + "_" + part.op
            synthetic.input = part.inputs.map(local)
            synthetic.output = [position == body.count - 1 ? node.output[0] : local(part.output)]
            for (key, value) in part.ints.sorted(by: { $0.key < $1.key }) {
                var attribute = Onnx_AttributeProto()
                attribute.name = key
                attribute.type = .int
                attribute.i = Int64(value)
                synthetic.attribute.append(attribute)
            }
            for (key, value) in part.floats.sorted(by: { $0.key < $1.key }) {
                var attribute = Onnx_AttributeProto()
                attribute.name = key
                attribute.type = .float
                attribute.f = value
                synthetic.attribute.append(attribute)
            }
            for (key, value) in part.intLists.sorted(by: { $0.key < $1.key }) {
                var attribute = Onnx_AttributeProto()
                attribute.name = key
                attribute.type = .ints
                attribute.ints = value.map(Int64.init)
                synthetic.attribute.append(attribute)
            }
            for input in synthetic.input { consumers[input, default: []].append(currentIndex) }
            guard let handler = Self.handlers[part.op] else { throw fail(node, "its body uses \(part.op), which the importer lacks") }
            try handler(self)(synthetic, currentIndex)
        }
    }

    /// The rank of input 0 (a computed tensor or a constant).
    func inputRank(_ node: Onnx_NodeProto) throws -> Int {
        switch try value(node, 0) {
        case .tensor(let t)?: return t.onnxRank
        case .flat?: return 2
        case .constant(let c)?: return c.rank
        default: throw fail(node, "input 0 must be a tensor")
        }
    }

    /// `RMSNormalization(X, scale)` (`axis` -1, `epsilon` 1e-5): X / √(mean(X²) + ε) · scale over
    /// the axes from `axis` on.
    func opRMSNormalization(_ node: Onnx_NodeProto, _ index: Int) throws {
        let a = NodeAttributes(node)
        let rank = try inputRank(node)
        let axis = try resolvedAxis(node, try a.int("axis", -1), rank: rank)
        let epsilon = try a.float("epsilon", 1e-5)
        guard node.input.count >= 2 else { throw fail(node, "needs X and scale") }
        try expand(node, [
            BodyNode(op: "Mul", inputs: [node.input[0], node.input[0]], output: "square"),
            BodyNode(op: "ReduceMean", inputs: ["square"], output: "meanSquare", ints: ["keepdims": 1], intLists: ["axes": Array(axis ..< rank)]),
            BodyNode(op: "Add", inputs: ["meanSquare", "epsilon"], output: "shifted"),
            BodyNode(op: "Sqrt", inputs: ["shifted"], output: "rms"),
            BodyNode(op: "Div", inputs: [node.input[0], "rms"], output: "normalized"),
            BodyNode(op: "Mul", inputs: ["normalized", node.input[1]], output: "scaled"),
        ], constants: ["epsilon": ConstantTensor(shape: [], floats: [Float(epsilon)])])
    }

    /// `LpNormalization` (`axis` -1, `p` 2 or 1): X divided by its p-norm along the axis (0 where
    /// the norm is 0, as ONNX's reference: the divisor is the norm plus 1 there).
    func opLpNormalization(_ node: Onnx_NodeProto, _ index: Int) throws {
        let a = NodeAttributes(node)
        let rank = try inputRank(node)
        let axis = try resolvedAxis(node, try a.int("axis", -1), rank: rank)
        let p = try a.int("p", 2)
        guard p == 1 || p == 2 else { throw fail(node, "p \(p) is not 1 or 2") }
        try expand(node, [
            BodyNode(op: p == 2 ? "ReduceL2" : "ReduceL1", inputs: [node.input[0]], output: "norm", ints: ["keepdims": 1], intLists: ["axes": [axis]]),
            BodyNode(op: "Equal", inputs: ["norm", "zero"], output: "isZero"),
            BodyNode(op: "Cast", inputs: ["isZero"], output: "one", ints: ["to": 1]),
            BodyNode(op: "Add", inputs: ["norm", "one"], output: "divisor"),
            BodyNode(op: "Div", inputs: [node.input[0], "divisor"], output: "normalized"),
        ], constants: ["zero": ConstantTensor(shape: [], floats: [0])])
    }

    /// `ReduceLogSum`: the logarithm of `ReduceSum` (same axes, `keepdims`, `noop_with_empty_axes`).
    func opReduceLogSum(_ node: Onnx_NodeProto, _ index: Int) throws {
        var sum = node
        sum.opType = "ReduceSum"
        sum.output = [node.output[0] + "::sum"]
        try Self.handlers["ReduceSum"]!(self)(sum, index)
        try expand(node, [BodyNode(op: "Log", inputs: ["sum"], output: "log")])
    }

    /// `IsNaN`: x ≠ x, the one value unequal to itself.
    func opIsNaN(_ node: Onnx_NodeProto, _ index: Int) throws {
        try expand(node, [BodyNode(op: "Equal", inputs: [node.input[0], node.input[0]], output: "same"),
                          BodyNode(op: "Not", inputs: ["same"], output: "y")])
    }

    /// `IsInf` (`detect_positive` 1, `detect_negative` 1): x beyond the largest finite float on
    /// the sides it detects (a weight may not be infinite, so no infinity is compared with).
    func opIsInf(_ node: Onnx_NodeProto, _ index: Int) throws {
        let a = NodeAttributes(node)
        let positive = try a.int("detect_positive", 1) != 0, negative = try a.int("detect_negative", 1) != 0
        let x = node.input[0]
        let largest = ConstantTensor(shape: [], floats: [.greatestFiniteMagnitude])
        switch (positive, negative) {
        case (true, true):
            try expand(node, [BodyNode(op: "Abs", inputs: [x], output: "magnitude"), BodyNode(op: "Greater", inputs: ["magnitude", "largest"], output: "y")],
                       constants: ["largest": largest])
        case (true, false):
            try expand(node, [BodyNode(op: "Greater", inputs: [x, "largest"], output: "y")], constants: ["largest": largest])
        case (false, true):
            try expand(node, [BodyNode(op: "Less", inputs: [x, "lowest"], output: "y")],
                       constants: ["lowest": ConstantTensor(shape: [], floats: [-.greatestFiniteMagnitude])])
        case (false, false):
            // Detects nothing: |x| < 0 is false everywhere (NaN included).
            try expand(node, [BodyNode(op: "Abs", inputs: [x], output: "magnitude"), BodyNode(op: "Less", inputs: ["magnitude", "zero"], output: "y")],
                       constants: ["zero": ConstantTensor(shape: [], floats: [0])])
        }
    }

    /// `Shrink` (`lambd` 0.5, `bias` 0): x + bias below −lambd, x − bias above lambd, else 0.
    func opShrink(_ node: Onnx_NodeProto, _ index: Int) throws {
        let a = NodeAttributes(node)
        let lambd = Float(try a.float("lambd", 0.5)), bias = Float(try a.float("bias", 0))
        let x = node.input[0]
        let scalar = { (v: Float) in ConstantTensor(shape: [], floats: [v]) }
        try expand(node, [
            BodyNode(op: "Less", inputs: [x, "low"], output: "below"),
            BodyNode(op: "Greater", inputs: [x, "high"], output: "above"),
            BodyNode(op: "Add", inputs: [x, "bias"], output: "raised"),
            BodyNode(op: "Sub", inputs: [x, "bias"], output: "lowered"),
            BodyNode(op: "Where", inputs: ["above", "lowered", "zero"], output: "upper"),
            BodyNode(op: "Where", inputs: ["below", "raised", "upper"], output: "y"),
        ], constants: ["low": scalar(-lambd), "high": scalar(lambd), "bias": scalar(bias), "zero": scalar(0)])
    }

    /// `Hardmax` (`axis` -1): 1 at the first largest value along the axis, 0 elsewhere — the
    /// positions along the axis compared with ArgMax's.
    func opHardmax(_ node: Onnx_NodeProto, _ index: Int) throws {
        let rank = try inputRank(node)
        let axis = try resolvedAxis(node, try NodeAttributes(node).int("axis", -1), rank: rank)
        guard let extent = try onnxExtent(node, axis) else { throw fail(node, "its axis \(axis) depends on the open input size") }
        var shape = [Int](repeating: 1, count: rank)
        shape[axis] = extent
        try expand(node, [
            BodyNode(op: "ArgMax", inputs: [node.input[0]], output: "best", ints: ["axis": axis, "keepdims": 1]),
            BodyNode(op: "Equal", inputs: ["positions", "best"], output: "isBest"),
            BodyNode(op: "Cast", inputs: ["isBest"], output: "y", ints: ["to": 1]),
        ], constants: ["positions": ConstantTensor(shape: shape, integers: (0 ..< extent).map(Int64.init))])
    }

    /// `OneHot(indices, depth, values)` (`axis` -1): `values[1]` where the new axis's position is
    /// the index (a negative one counted from `depth`), `values[0]` elsewhere.
    func opOneHot(_ node: Onnx_NodeProto, _ index: Int) throws {
        guard node.input.count == 3, let depthValue = try const(node, 1), let values = try const(node, 2), values.count == 2 else {
            throw fail(node, "needs indices, a constant depth and two constant values")
        }
        let depth = Int64(depthValue.doubles[0])
        guard depth >= 1 else { throw fail(node, "depth \(depth) must be positive") }
        let rank = try inputRank(node) + 1
        let axis = try resolvedAxis(node, try NodeAttributes(node).int("axis", -1), rank: rank)
        var shape = [Int](repeating: 1, count: rank)
        shape[axis] = Int(depth)
        let pair = values.doubles
        try expand(node, [
            BodyNode(op: "Less", inputs: [node.input[0], "zero"], output: "negative"),
            BodyNode(op: "Add", inputs: [node.input[0], "depth"], output: "fromEnd"),
            BodyNode(op: "Where", inputs: ["negative", "fromEnd", node.input[0]], output: "wrapped"),
            // (Before opset 13 Unsqueeze takes its axes as an attribute.)
            opset >= 13 ? BodyNode(op: "Unsqueeze", inputs: ["wrapped", "axes"], output: "column")
                : BodyNode(op: "Unsqueeze", inputs: ["wrapped"], output: "column", intLists: ["axes": [axis]]),
            BodyNode(op: "Equal", inputs: ["column", "positions"], output: "hot"),
            // off + (on − off) · hot: both values are constants, which one Select cannot take.
            BodyNode(op: "Cast", inputs: ["hot"], output: "mask", ints: ["to": 1]),
            BodyNode(op: "Mul", inputs: ["mask", "step"], output: "raised"),
            BodyNode(op: "Add", inputs: ["raised", "off"], output: "y"),
        ], constants: ["zero": ConstantTensor(shape: [], integers: [0]), "depth": ConstantTensor(shape: [], integers: [depth]),
                       "axes": ConstantTensor(shape: [1], integers: [Int64(axis)]),
                       "positions": ConstantTensor(shape: shape, integers: (0 ..< depth).map { $0 }),
                       "step": ConstantTensor(shape: [], floats: [Float(pair[1] - pair[0])]), "off": ConstantTensor(shape: [], floats: [Float(pair[0])])])
    }

    /// `EyeLike` (`k` 0): ones on diagonal k of a matrix shaped like the input, a constant when its
    /// shape is known.
    func opEyeLike(_ node: Onnx_NodeProto, _ index: Int) throws {
        guard try inputRank(node) == 2, let rows = try onnxExtent(node, 0), let columns = try onnxExtent(node, 1) else {
            throw fail(node, "needs a matrix of known shape")
        }
        // Batch first, the rows would be the items, each with its own row of the identity.
        if case .tensor(let t)? = try value(node, 0), t.batchFold?.wholeItem != true {
            throw fail(node, "makes an identity whose rows are the batch axis; Anvil keeps each item apart")
        }
        let a = NodeAttributes(node)
        let k = try a.int("k", 0)
        let ones = (0 ..< rows * columns).map { i -> Int64 in i % columns - i / columns == k ? 1 : 0 }
        var inputIsInteger = false
        if case .constant(let c)? = try value(node, 0) { inputIsInteger = c.isInteger }
        let integer = try a.int("dtype").map { !TensorDecoding.floatTypes.contains(Int32(clamping: $0)) } ?? inputIsInteger
        try set(node, .constant(integer ? ConstantTensor(shape: [rows, columns], integers: ones)
                                        : ConstantTensor(shape: [rows, columns], floats: ones.map(Float.init))))
    }

    /// `AffineGrid(theta, size)` (`align_corners` 0) with a constant size `[N, C, (D,) H, W]`:
    /// each output point is theta × (x, y, (z,) 1) of the base grid — theta [N, r, r+1] times the
    /// base grid's transpose [r+1, points], moved to [N, points, r] and reshaped to the grid.
    func opAffineGrid(_ node: Onnx_NodeProto, _ index: Int) throws {
        guard let size = try const(node, 1)?.integers(), size.count == 4 || size.count == 5, size.allSatisfy({ $0 >= 1 }) else {
            throw fail(node, "needs a constant size [N, C, H, W] or [N, C, D, H, W]")
        }
        let align = try NodeAttributes(node).int("align_corners", 0) != 0
        let spatial = Array(size.dropFirst(2))  // (D,) H, W
        let r = spatial.count
        /// Coordinate i of an axis of `extent` points, normalised to [−1, 1].
        func coordinate(_ i: Int, _ extent: Int) -> Float {
            if align { return extent == 1 ? 0 : Float(2 * i) / Float(extent - 1) - 1 }
            return (2 * Float(i) + 1) / Float(extent) - 1
        }
        let points = spatial.reduce(1, *)
        guard points <= 1 << 20 else { throw fail(node, "a grid of \(points) points is too large") }
        // The base grid's transpose, [r + 1, points]: row 0 is x (the last axis), then y, (z,) and ones.
        var base = [Float](repeating: 1, count: (r + 1) * points)
        for p in 0 ..< points {
            let at = Self.multiIndex(p, spatial)
            for (row, axis) in (0 ..< r).reversed().enumerated() { base[row * points + p] = coordinate(at[axis], spatial[axis]) }
        }
        try expand(node, [
            BodyNode(op: "MatMul", inputs: [node.input[0], "base"], output: "product"),
            BodyNode(op: "Transpose", inputs: ["product"], output: "points", intLists: ["perm": [0, 2, 1]]),
            BodyNode(op: "Reshape", inputs: ["points", "shape"], output: "grid"),
        ], constants: ["base": ConstantTensor(shape: [r + 1, points], floats: base),
                       "shape": ConstantTensor(shape: [r + 2], integers: [0] + spatial.map(Int64.init) + [Int64(r)])])
    }

    /// `If` whose condition is known when the model is converted (a constant, or computed from
    /// fixed shapes): the chosen branch's nodes converted in its place, its outputs the node's.
    func opIf(_ node: Onnx_NodeProto, _ index: Int) throws {
        guard case .constant(let condition)? = try value(node, 0) else {
            throw fail(node, "its condition is computed at predict; Anvil converts an If whose condition is known from constants and shapes")
        }
        guard condition.count == 1 else { throw fail(node, "its condition has \(condition.count) values, not one") }
        let name = condition.doubles[0] != 0 ? "then_branch" : "else_branch"
        guard let branch = node.attribute.first(where: { $0.name == name && $0.hasG })?.g else { throw fail(node, "has no \(name)") }
        guard branch.output.count == node.output.count else {
            throw fail(node, "its \(name) has \(branch.output.count) outputs for \(node.output.count)")
        }
        for initializer in branch.initializer {
            values[initializer.name] = .constant(try decoding.constant(initializer, what: "initializer '\(initializer.name)' of \(name)"))
        }
        for part in branch.node {
            guard part.domain.isEmpty || part.domain == "ai.onnx" else { throw fail(part, "operators of domain '\(part.domain)' are not supported") }
            guard let handler = Self.handlers[part.opType] else { throw fail(part, "this operator (in \(describe(node))'s \(name)) is not supported by the Anvil converter") }
            for input in part.input { consumers[input, default: []].append(currentIndex) }
            try handler(self)(part, currentIndex)
        }
        // (Last first: setting an output checks that the later ones it leaves unset are unread.)
        for (position, output) in branch.output.enumerated().reversed() where !node.output[position].isEmpty {
            guard let result = values[output.name] else { throw fail(node, "its \(name) does not compute its output '\(output.name)'") }
            try set(node, result, index: position)
        }
    }

    /// The extent of ONNX axis `axis` of input 0 (nil when it depends on the open input size).
    func onnxExtent(_ node: Onnx_NodeProto, _ axis: Int) throws -> Int? {
        switch try value(node, 0) {
        case .tensor(let t)?: return t.onnxShape[axis]
        case .constant(let c)?: return c.shape[axis]
        case .flat(let f)?: return currentShape(.flat(f))[axis]
        default: throw fail(node, "input 0 must be a tensor")
        }
    }
}
