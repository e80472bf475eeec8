import Anvil

/// `Einsum` of two computed tensors that is a batched matrix product (MaxViT's attention:
/// `BGHID,BGHJD->BGHIJ` and `BGHIJ,BGHJD->BGHID`): the operands' axes relabelled into
/// [batch labels, M, K] and [batch labels, K, N] (no data moves where the engine reads them
/// transposed), one `MatMul`, its axes relabelled into the output's order.
extension ONNXConverter {
    static func registerEinsumOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        table["Einsum"] = { $0.opEinsum }
    }

    func opEinsum(_ node: Onnx_NodeProto, _ index: Int) throws {
        let equation = try NodeAttributes(node).string("equation") ?? ""
        let compact = equation.filter { !$0.isWhitespace }
        let sides = compact.components(separatedBy: "->")
        guard sides.count == 2, !compact.contains(".") else {
            throw fail(node, "equation '\(equation)' needs an explicit output ('->') and no ellipsis")
        }
        let inputs = sides[0].split(separator: ",", omittingEmptySubsequences: false).map { Array($0) }
        let output = Array(sides[1])
        if inputs.count == 1, node.input.count == 1 { return try einsumOfOne(node, equation, inputs[0], output) }
        guard inputs.count == 2, node.input.count == 2 else { throw fail(node, "equation '\(equation)': only products of two operands are supported") }
        let (x, y) = (inputs[0], inputs[1])
        for labels in [x, y, output] where Set(labels).count != labels.count {
            throw fail(node, "equation '\(equation)' repeats a label in one operand (a diagonal), which is not supported")
        }
        let batch = output.filter { x.contains($0) && y.contains($0) }
        let contracted = x.filter { y.contains($0) && !output.contains($0) }
        let rows = output.filter { x.contains($0) && !y.contains($0) }
        let columns = output.filter { y.contains($0) && !x.contains($0) }
        guard Set(x).union(y).isSuperset(of: output), contracted.count == 1, rows.count == 1, columns.count == 1,
              x.count == batch.count + 2, y.count == batch.count + 2 else {
            throw fail(node, "equation '\(equation)' is not a batched matrix product (one contracted, one row and one column label; every other label in both operands and the output)")
        }
        let a = try relabel(node, try act(node, 0, anyLayout: true), from: x, to: batch + rows + contracted)
        let b = try relabel(node, try act(node, 1, anyLayout: true), from: y, to: batch + contracted + columns)
        let product = try matMul(node, a, b)
        try set(node, try relabel(node, product, from: batch + rows + columns, to: output))
    }

    /// `Einsum` of one operand: the labels missing from the output summed (`ij->i`), the rest
    /// put in the output's order (`ij->ji`) — a `ReduceSum` and a relabelling.
    func einsumOfOne(_ node: Onnx_NodeProto, _ equation: String, _ labels: [Character], _ output: [Character]) throws {
        guard Set(labels).count == labels.count, Set(output).count == output.count, Set(labels).isSuperset(of: output) else {
            throw fail(node, "equation '\(equation)' repeats a label (a diagonal) or outputs one it lacks, which is not supported")
        }
        let summed = labels.indices.filter { !output.contains(labels[$0]) }
        guard summed.count < labels.count else { throw fail(node, "equation '\(equation)' sums every axis, the batch's too") }
        var kept = labels
        if !summed.isEmpty {
            try expand(node, [BodyNode(op: "ReduceSum", inputs: [node.input[0], "axes"], output: "sum", ints: ["keepdims": 0])],
                       constants: ["axes": ConstantTensor(shape: [summed.count], integers: summed.map(Int64.init))])
            kept = labels.filter(output.contains)
            if kept == output { return }
            guard case .tensor(let sum)? = values[node.output[0]] else { throw fail(node, "its sum is not a tensor") }
            return try set(node, try relabel(node, sum, from: kept, to: output))
        }
        try set(node, try relabel(node, try act(node, 0, anyLayout: true), from: kept, to: output))
    }

    /// `tensor`, whose ONNX axes carry `labels`, with its axes relabelled into `order`: an ONNX
    /// Transpose, which moves no data.
    func relabel(_ node: Onnx_NodeProto, _ tensor: ComputedTensor, from labels: [Character], to order: [Character]) throws -> ComputedTensor {
        guard labels.count == tensor.onnxRank else {
            throw fail(node, "an operand of rank \(tensor.onnxRank) has \(labels.count) labels")
        }
        let perm = order.map { labels.firstIndex(of: $0)! }
        if perm == Array(0 ..< perm.count) { return tensor }
        let fold = tensor.batchFold.map { BatchFold(axis: perm.firstIndex(of: $0.axis)!, inner: $0.inner, wholeItem: $0.wholeItem) }
        return ComputedTensor(tensor.name, tensor.shape, permutation: perm.map { tensor.permutation[$0] }, anvilRank: tensor.anvilRank,
                              batchFold: fold)
    }
}
