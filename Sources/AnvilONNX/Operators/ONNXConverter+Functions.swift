import Anvil

/// Operators converted through their ONNX function bodies (the nodes the ONNX specification
/// defines them as, written here as synthetic nodes and converted one by one): `RMSNormalization`,
/// `LpNormalization` and `ReduceLogSum`.
extension ONNXConverter {
    static func registerFunctionOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        table["RMSNormalization"] = { $0.opRMSNormalization }
        table["LpNormalization"] = { $0.opLpNormalization }
        table["ReduceLogSum"] = { $0.opReduceLogSum }
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
}
