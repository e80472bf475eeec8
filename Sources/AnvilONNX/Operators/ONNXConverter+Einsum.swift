import Anvil

/// `Einsum` as NumPy defines it: explicit (`ij,jk->ik`) or implicit output (no `->`: the labels
/// that appear once, in alphabetical order, after any `...`), `...` standing for broadcast axes,
/// repeated labels within an operand (a diagonal: a `Take`), labels of one operand only that the
/// result lacks (a `ReduceSum`), and operands contracted pairwise, left to right, as batched
/// `MatMul`s. A product of one row, one contracted and one column label with every other label
/// in both operands and the output (MaxViT's attention: `BGHID,BGHJD->BGHIJ`) is one `MatMul`
/// with its operands' axes relabelled (no data moves where the engine reads them transposed);
/// with several labels in a group, the group's axes are merged by a reshape first.
extension ONNXConverter {
    static func registerEinsumOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        table["Einsum"] = { $0.opEinsum }
    }

    func opEinsum(_ node: Onnx_NodeProto, _ index: Int) throws {
        let equation = try NodeAttributes(node).string("equation") ?? ""
        let ranks = try (0 ..< node.input.count).map { i -> Int in
            switch try value(node, i) {
            case .tensor(let t)?: return t.onnxRank
            case .flat?: return 2
            case .constant(let c)?: return c.rank
            default: throw fail(node, "input \(i) must be a tensor")
            }
        }
        let (inputs, output) = try einsumLabels(node, equation, ranks: ranks)
        var operands: [(tensor: ComputedTensor, labels: [Character])] = []
        for i in inputs.indices { operands.append((try einsumOperand(node, i), inputs[i])) }
        // Labels of extent 1 against a larger extent elsewhere broadcast: each is dropped (a sum
        // over one value) from the operands that hold it at 1.
        var extents: [Character: Int] = [:]
        for (tensor, labels) in operands {
            for (label, extent) in zip(labels, tensor.onnxShape) { if let extent, extent != 1 { extents[label] = extent } }
        }
        func broadcast(_ k: Int) -> Set<Character> {
            Set(zip(operands[k].labels, operands[k].tensor.onnxShape).filter { $0.1 == 1 && (extents[$0.0] ?? 1) > 1 }.map(\.0))
        }
        func needed(after k: Int) -> Set<Character> { Set(output).union(inputs.dropFirst(k + 1).flatMap { $0 }) }
        var (current, labels) = try einsumReduced(node, operands[0].tensor, operands[0].labels,
                                                  keeping: needed(after: 0).subtracting(broadcast(0)), part: 0)
        if operands.count == 1 {
            return try set(node, try relabel(node, current, from: labels, to: output))
        }
        for k in 1 ..< operands.count {
            let later = needed(after: k)
            let (next, nextLabels) = try einsumReduced(node, operands[k].tensor, operands[k].labels,
                                                       keeping: later.union(labels).subtracting(broadcast(k)), part: k)
            (current, labels) = try einsumReduced(node, current, labels, keeping: later.union(nextLabels), part: -k)
            let order = k == operands.count - 1 ? output : labels + nextLabels.filter { !labels.contains($0) }
            (current, labels) = try contract(node, current, labels, next, nextLabels, keeping: later, order: order)
        }
        try set(node, try relabel(node, current, from: labels, to: output))
    }

    /// The labels of each operand and of the output, `...` replaced by labels of its own (not
    /// letters) aligned on the last axes, the implicit output made explicit; an error naming the
    /// equation for anything NumPy would refuse.
    func einsumLabels(_ node: Onnx_NodeProto, _ equation: String, ranks: [Int]) throws -> (inputs: [[Character]], output: [Character]) {
        let compact = equation.filter { !$0.isWhitespace }
        let sides = compact.components(separatedBy: "->")
        guard sides.count <= 2 else { throw fail(node, "equation '\(equation)' has more than one '->'") }
        let terms = sides[0].components(separatedBy: ",")
        guard terms.count == ranks.count else {
            throw fail(node, "equation '\(equation)' has \(terms.count) operand\(terms.count == 1 ? "" : "s"), the node \(ranks.count) input\(ranks.count == 1 ? "" : "s")")
        }
        /// The letters of `term` and where its `...` is (nil: none).
        func split(_ term: String) throws -> (letters: [Character], ellipsis: Int?) {
            let parts = term.components(separatedBy: "...")
            guard parts.count <= 2 else { throw fail(node, "equation '\(equation)' has more than one '...' in '\(term)'") }
            let letters = Array(parts.joined())
            if let bad = letters.first(where: { !($0.isASCII && $0.isLetter) }) {
                throw fail(node, "equation '\(equation)' has '\(bad)', which is neither a letter nor part of '...'")
            }
            return (letters, parts.count == 2 ? parts[0].count : nil)
        }
        let parsed = try terms.map(split)
        var ellipsisRanks: [Int] = []
        for (i, term) in parsed.enumerated() {
            let spare = ranks[i] - term.letters.count
            guard spare == 0 || (term.ellipsis != nil && spare > 0) else {
                throw fail(node, "equation '\(equation)' gives input \(i) of rank \(ranks[i]) \(term.letters.count) label\(term.letters.count == 1 ? "" : "s")")
            }
            ellipsisRanks.append(term.ellipsis == nil ? 0 : spare)
        }
        let broadcastRank = ellipsisRanks.max() ?? 0
        // Labels beyond the letters for the ellipsis's axes.
        let ellipsisLabels = (0 ..< broadcastRank).map { Character(Unicode.Scalar(0x100 + $0)!) }
        func expanded(_ term: (letters: [Character], ellipsis: Int?), _ rank: Int) -> [Character] {
            guard let at = term.ellipsis else { return term.letters }
            return Array(term.letters[..<at]) + ellipsisLabels.suffix(rank) + Array(term.letters[at...])
        }
        let inputs = parsed.indices.map { expanded(parsed[$0], ellipsisRanks[$0]) }
        let output: [Character]
        if sides.count == 2 {
            let term = try split(sides[1])
            output = expanded(term, broadcastRank)
            if let twice = output.first(where: { label in output.filter { $0 == label }.count > 1 }) {
                throw fail(node, "equation '\(equation)' repeats '\(twice)' in its output")
            }
            let known = Set(inputs.flatMap { $0 })
            if let missing = term.letters.first(where: { !known.contains($0) }) {
                throw fail(node, "equation '\(equation)' outputs '\(missing)', which no operand has")
            }
        } else {
            let all = inputs.flatMap { $0 }.filter { $0.isLetter }
            output = ellipsisLabels + Set(all).filter { label in all.filter { $0 == label }.count == 1 }.sorted()
        }
        return (inputs, output)
    }

    /// Operand `index` as a computed tensor (a constant is written as one).
    func einsumOperand(_ node: Onnx_NodeProto, _ index: Int) throws -> ComputedTensor {
        if case .constant(let c)? = try value(node, index) {
            guard isUnbatched else { throw fail(node, "input \(index) must be a computed tensor, not a constant") }
            return wholeItem(try writeConstant(node, c), c.shape)
        }
        return try act(node, index, anyLayout: true)
    }

    /// `tensor` (its axes labelled `labels`) with each repeated label's diagonal taken and the
    /// labels not in `keeping` summed, and its labels then; `part` tells the synthetic names apart.
    func einsumReduced(_ node: Onnx_NodeProto, _ tensor: ComputedTensor, _ labels: [Character], keeping: Set<Character>,
                       part: Int) throws -> (ComputedTensor, [Character]) {
        var (tensor, labels) = (tensor, labels)
        if Set(labels).count != labels.count { (tensor, labels) = try diagonal(node, tensor, labels) }
        let summed = labels.indices.filter { !keeping.contains(labels[$0]) }
        guard !summed.isEmpty else { return (tensor, labels) }
        let operand = "operand\(part)"
        values[node.output[0] + "::" + operand] = .tensor(tensor)
        let axes = summed.map(Int64.init)
        // ReduceSum takes its axes as an input from opset 13, as an attribute before.
        try expand(node, [BodyNode(op: "ReduceSum", inputs: [operand, "axes"], output: "sum", ints: ["keepdims": 0],
                                   intLists: ["axes": summed])],
                   constants: ["axes": ConstantTensor(shape: [axes.count], integers: axes)])
        guard case .tensor(let sum)? = values[node.output[0]] else { throw fail(node, "its sum over \(summed) is not a computed tensor") }
        return (sum, labels.filter(keeping.contains))
    }

    /// The diagonal of `tensor` over each label `labels` repeats (`ii->i`): a `Take` of the
    /// positions where the repeated axes agree, within each item; the labels left, each once.
    func diagonal(_ node: Onnx_NodeProto, _ tensor: ComputedTensor, _ labels: [Character]) throws -> (ComputedTensor, [Character]) {
        let source = try toONNXOrder(node, try exact(node, tensor))
        guard !source.isOpen else { throw fail(node, "takes a diagonal of a tensor whose size depends on the open input size; pass --input-shape C,H,W") }
        let whole = isWholeItem(source)
        guard whole || source.isBatchFirst else {
            throw fail(node, "takes a diagonal of a tensor whose batch is not its first axis; Anvil keeps each item apart")
        }
        let shape = source.onnxShape.map { $0! }
        let unique = labels.reduce(into: [Character]()) { if !$0.contains($1) { $0.append($1) } }
        if !whole, labels.dropFirst().contains(labels[0]) {
            throw fail(node, "takes a diagonal along axis 0, which holds the batch; Anvil keeps each item apart")
        }
        var extent: [Character: Int] = [:]
        for (label, size) in zip(labels, shape) {
            if let seen = extent[label], seen != size {
                throw fail(node, "label '\(label)' has extents \(seen) and \(size); a diagonal needs them equal")
            }
            extent[label] = size
        }
        // The item's axes: every axis of a whole item, the axes after the batch otherwise.
        let first = whole ? 0 : 1
        let inputLabels = Array(labels[first...]), outputLabels = Array(unique[first...])
        let outputShape = outputLabels.map { extent[$0]! }
        var strides = [Int](repeating: 1, count: inputLabels.count)
        for k in stride(from: inputLabels.count - 2, through: 0, by: -1) { strides[k] = strides[k + 1] * shape[first + k + 1] }
        let count = outputShape.reduce(1, *)
        var positions = [Float](repeating: 0, count: count)
        var coordinate = [Int](repeating: 0, count: outputLabels.count)
        for j in 0 ..< count {
            var rest = j
            for k in stride(from: outputLabels.count - 1, through: 0, by: -1) {
                coordinate[k] = rest % outputShape[k]
                rest /= outputShape[k]
            }
            var position = 0
            for (k, label) in inputLabels.enumerated() { position += coordinate[outputLabels.firstIndex(of: label)!] * strides[k] }
            positions[j] = Float(position)
        }
        let name = try add(node, [source.name], parameters: [("indices", positions)], suffix: "_diagonal") { Take(shape: outputShape, name: $0) }
        if whole { return (wholeItem(name, outputShape), unique) }
        return (ComputedTensor(name, outputShape.map { $0 }, permutation: Array(0 ... outputShape.count)), unique)
    }

    /// The product of `a` (labels `x`) and `b` (labels `y`), each label of either in the other or
    /// in `keeping`: labels of both in `keeping` are batch axes, of both not in it contracted,
    /// of one only rows or columns; the result's labels follow `order`. A group of several
    /// labels (or none) is merged into one axis by a reshape around the `MatMul`.
    func contract(_ node: Onnx_NodeProto, _ a: ComputedTensor, _ x: [Character], _ b: ComputedTensor, _ y: [Character],
                  keeping: Set<Character>, order: [Character]) throws -> (ComputedTensor, [Character]) {
        let batch = order.filter { x.contains($0) && y.contains($0) && keeping.contains($0) }
        let contracted = x.filter { y.contains($0) && !keeping.contains($0) }
        let rows = order.filter { x.contains($0) && !y.contains($0) }
        let columns = order.filter { y.contains($0) && !x.contains($0) }
        let left = try relabel(node, a, from: x, to: batch + rows + contracted)
        let right = try relabel(node, b, from: y, to: batch + contracted + columns)
        if rows.count == 1 && contracted.count == 1 && columns.count == 1 {
            return (try matMul(node, left, right), batch + rows + columns)
        }
        func extents(_ tensor: ComputedTensor, _ group: [Character], _ offset: Int) throws -> [Int] {
            try group.indices.map { k in
                guard let extent = tensor.onnxShape[offset + k] else {
                    throw fail(node, "merges the axes of '\(String(group))', whose size depends on the open input size; pass --input-shape C,H,W")
                }
                return extent
            }
        }
        let batchShape = Array(left.onnxShape.prefix(batch.count))
        let rowExtents = try extents(left, rows, batch.count), columnExtents = try extents(right, columns, batch.count + contracted.count)
        let depth = try extents(left, contracted, batch.count + rows.count).reduce(1, *)
        let rowCount = rowExtents.reduce(1, *), columnCount = columnExtents.reduce(1, *)
        func merged(_ tensor: ComputedTensor, _ shape: [Int?]) throws -> ComputedTensor {
            if tensor.onnxShape == shape { return tensor }
            guard case .tensor(let result) = try reshapeTensor(node, .tensor(tensor), shape) else {
                throw fail(node, "its operand could not be reshaped to \(Self.text(shape))")
            }
            return result
        }
        let product = try matMul(node, try merged(left, batchShape + [rowCount, depth]), try merged(right, batchShape + [depth, columnCount]))
        let result = try merged(product, batchShape + rowExtents.map { $0 } + columnExtents.map { $0 })
        return (result, batch + rows + columns)
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
