import Anvil

/// Linear algebra and statistics over whole axes: `Det` (the engine's `Determinant` of the last
/// two axes) and `MeanVarianceNormalization` (its ONNX function body).
extension ONNXConverter {
    static func registerLinearAlgebraOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        table["Det"] = { $0.opDet }
        table["MeanVarianceNormalization"] = { $0.opMeanVarianceNormalization }
    }

    /// `Det`: one determinant per matrix of the last two axes, which must lie within each item
    /// (a fixed-shape graph whose matrices span the batch axis is converted as one item).
    func opDet(_ node: Onnx_NodeProto, _ index: Int) throws {
        if case .constant(let c)? = try value(node, 0) { return try set(node, .constant(try Self.determinants(node, c))) }
        let source = try toONNXOrder(node, try exact(node, try act(node, anyLayout: true)))
        let rank = source.onnxRank, onnx = source.onnxShape
        guard rank >= 2, onnx[rank - 1] != nil, onnx[rank - 1] == onnx[rank - 2] else {
            throw fail(node, "needs square matrices in its last two axes, got shape \(Self.text(onnx))")
        }
        if !isWholeItem(source), source.holdsBatch(rank - 1) || source.holdsBatch(rank - 2) {
            throw fail(node, "its matrices \(Self.text(onnx)) span the batch axis; Anvil keeps each item apart")
        }
        let name = try add(node, [source.name]) { Determinant(name: $0) }
        let shape = Array(source.shape.dropLast(2))
        if source.batchFold?.wholeItem == true || isWholeItem(source) { return try set(node, wholeItem(name, shape.map { $0! })) }
        try set(node, ComputedTensor(name, shape, permutation: Array(source.permutation.dropLast(2)), batchFold: source.batchFold))
    }

    /// The determinants of a constant's matrices (the last two axes), in float64.
    static func determinants(_ node: Onnx_NodeProto, _ c: ConstantTensor) throws -> ConstantTensor {
        let shape = c.shape, rank = shape.count
        guard rank >= 2, shape[rank - 1] == shape[rank - 2] else {
            throw ImportFailure("node '\(node.name)' (Det): needs square matrices in its last two axes, got shape \(shape)")
        }
        let m = shape[rank - 1], values = c.doubles
        let count = shape.dropLast(2).reduce(1, *)
        let results: [Float] = (0 ..< count).map { k in
            var lu = Array(values[k * m * m ..< (k + 1) * m * m])
            var determinant = 1.0
            for column in 0 ..< m {
                let pivot = (column ..< m).max { abs(lu[$0 * m + column]) < abs(lu[$1 * m + column]) }!
                if lu[pivot * m + column] == 0 { return 0 }
                if pivot != column {
                    for j in 0 ..< m { lu.swapAt(pivot * m + j, column * m + j) }
                    determinant = -determinant
                }
                determinant *= lu[column * m + column]
                for row in column + 1 ..< m {
                    let factor = lu[row * m + column] / lu[column * m + column]
                    for j in column + 1 ..< m { lu[row * m + j] -= factor * lu[column * m + j] }
                }
            }
            return Float(determinant)
        }
        return ConstantTensor(shape: Array(shape.dropLast(2)), floats: results)
    }

    /// `MeanVarianceNormalization`: its function body, `(X − mean) / (√(mean(X²) − mean²) + 1e-9)`
    /// over `axes` (default [0, 2, 3]); the squares as products (ONNX's `Pow` by 2, exactly).
    func opMeanVarianceNormalization(_ node: Onnx_NodeProto, _ index: Int) throws {
        let axes = try NodeAttributes(node).ints("axes") ?? [0, 2, 3]
        let x = node.input[0]
        try expand(node, [
            BodyNode(op: "ReduceMean", inputs: [x], output: "mean", ints: ["keepdims": 1], intLists: ["axes": axes]),
            BodyNode(op: "Mul", inputs: ["mean", "mean"], output: "meanSquared"),
            BodyNode(op: "Mul", inputs: [x, x], output: "squared"),
            BodyNode(op: "ReduceMean", inputs: ["squared"], output: "meanOfSquares", ints: ["keepdims": 1], intLists: ["axes": axes]),
            BodyNode(op: "Sub", inputs: ["meanOfSquares", "meanSquared"], output: "variance"),
            BodyNode(op: "Sqrt", inputs: ["variance"], output: "deviationScale"),
            BodyNode(op: "Sub", inputs: [x, "mean"], output: "deviation"),
            BodyNode(op: "Add", inputs: ["deviationScale", "epsilon"], output: "shifted"),
            BodyNode(op: "Div", inputs: ["deviation", "shifted"], output: "y"),
        ], constants: ["epsilon": ConstantTensor(shape: [], floats: [1e-9])])
    }
}
