import Anvil
import Foundation

/// Convolution, pooling, batch normalisation, dense layers and activations (the layers of
/// from_onnx.py itself).
extension ONNXConverter {
    static func registerLayerOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        table["Conv"] = { $0.opConv }
        table["MaxPool"] = { $0.opMaxPool }
        table["AveragePool"] = { c in { node, _ in try c.pool(node, average: true) } }
        table["GlobalAveragePool"] = { c in { node, _ in try c.globalPool(node) { GlobalAveragePooling(name: $0) } } }
        table["GlobalMaxPool"] = { c in { node, _ in try c.globalPool(node) { GlobalMaxPooling(name: $0) } } }
        table["BatchNormalization"] = { $0.opBatchNormalization }
        table["Gemm"] = { $0.opGemm }
        table["MatMul"] = { $0.opMatMul }
        for (op, function) in [("Relu", ActivationFunction.relu), ("Sigmoid", .sigmoid), ("Tanh", .tanh), ("HardSwish", .hardSwish)] {
            table[op] = { c in { node, _ in try c.activation(node, function) } }
        }
        table["LeakyRelu"] = { c in { node, _ in try c.activation(node, .leakyRelu(alpha: Float(try NodeAttributes(node).float("alpha", 0.01)))) } }
        table["Elu"] = { c in { node, _ in try c.activation(node, .elu(alpha: Float(try NodeAttributes(node).float("alpha", 1.0)))) } }
        table["Selu"] = { $0.opSelu }
        table["HardSigmoid"] = { c in { node, _ in
            let a = NodeAttributes(node)
            try c.activation(node, .hardSigmoid(alpha: Float(try a.float("alpha", 0.2)), beta: Float(try a.float("beta", 0.5))))
        } }
        table["Clip"] = { $0.opClip }
        table["PRelu"] = { $0.opPRelu }
        table["Softmax"] = { c in { node, _ in try c.softmax(node) { Softmax(name: $0) } } }
        table["LogSoftmax"] = { c in { node, _ in try c.softmax(node) { LogSoftmax(name: $0) } } }
    }

    /// The largest float32 (ONNX's default clip bounds).
    static let floatMax = 3.4028234663852886e38
    static let seluAlpha = 1.67326319217681884765625
    static let seluGamma = 1.05070102214813232421875

    /// The resolved window: padding (explicit [top, left, bottom, right] or "same"), stride,
    /// dilation, output size (nil: open) and ceil mode.
    struct ResolvedWindow {
        var padding: Padding
        var pads: [Int]
        var stride: [Int]
        var dilation: [Int]
        var outputs: [Int?]
        var ceil: Bool
    }

    /// Padding, stride, dilation, output size and ceil mode of a Conv or pooling window.
    func window(_ node: Onnx_NodeProto, _ tensor: ComputedTensor, kernel: [Int], pooling: Bool, _ a: WindowAttributes) throws -> ResolvedWindow {
        let stride = a.strides ?? [1, 1], dilation = a.dilations ?? [1, 1]
        guard kernel.count == 2, stride.count == 2, dilation.count == 2 else { throw fail(node, "only 2-D windows are supported") }
        let (h, w): (Int?, Int?) = tensor.shape.count == 2 ? (1, tensor.shape[0]) : (tensor.shape[0], tensor.shape[1])
        let extent = zip(kernel, dilation).map { ($0 - 1) * $1 + 1 }
        if a.autoPad == "SAME_LOWER" && (h == nil || w == nil) {
            throw fail(node, "auto_pad SAME_LOWER on an open input size (its pads depend on the size); pass --input-shape C,H,W")
        }
        var pads: [Int]
        if a.autoPad == "SAME_UPPER" || a.autoPad == "SAME_LOWER" {
            let outs: [Int?] = zip([h, w], stride).map { size, s in size.map { ($0 + s - 1) / s } }
            if a.autoPad == "SAME_UPPER" {
                return ResolvedWindow(padding: .same, pads: [], stride: stride, dilation: dilation, outputs: outs, ceil: a.ceilMode)
            }
            let totals = (0 ..< 2).map { i in max((outs[i]! - 1) * stride[i] + extent[i] - [h!, w!][i], 0) }
            pads = [totals[0] - totals[0] / 2, totals[1] - totals[1] / 2, totals[0] / 2, totals[1] / 2]
        } else if a.autoPad == "VALID" {
            pads = [0, 0, 0, 0]
        } else if a.autoPad == "NOTSET" {
            pads = a.pads ?? [0, 0, 0, 0]
            guard pads.count == 4 else { throw fail(node, "only 2-D pads are supported") }
        } else {
            throw fail(node, "auto_pad '\(a.autoPad)' is not supported")
        }
        if let extra = windowExtraPads() { pads = zip(pads, extra).map(+) }
        var outs: [Int?] = []
        for (i, size) in [h, w].enumerated() {
            guard let size else { outs.append(nil); continue }
            let before = pads[i], after = pads[i + 2], s = stride[i]
            let span = size + before + after - extent[i]
            guard span >= 0 else { throw fail(node, "the window does not fit the input \(h.map(String.init) ?? "None")x\(w.map(String.init) ?? "None")") }
            var out = (a.ceilMode ? (span + s - 1) / s : span / s) + 1
            if a.ceilMode && (out - 1) * s >= size + before { out -= 1 }
            outs.append(out)
        }
        if pooling && (max(pads[0], pads[2]) >= extent[0] || max(pads[1], pads[3]) >= extent[1]) {
            throw fail(node, "pads \(pads) must be smaller than the window \(kernel)")
        }
        return ResolvedWindow(padding: .explicit(top: pads[0], left: pads[1], bottom: pads[2], right: pads[3]), pads: pads, stride: stride, dilation: dilation, outputs: outs, ceil: a.ceilMode)
    }

    /// Pads folded into the current node by an earlier Pad, taken once.
    func windowExtraPads() -> [Int]? {
        pendingPads.removeValue(forKey: currentIndex)
    }

    /// `Conv` (2-D, or 1-D on a sequence): Convolution, or DepthwiseConvolution.
    func opConv(_ node: Onnx_NodeProto, _ index: Int) throws {
        let operands = try convolutionOperands(node, what: "convolutions")
        let (tensor, oneD, weights, bias, a) = (operands.tensor, operands.oneD, operands.weights, operands.bias, operands.attributes)
        let outputs = weights.shape[0], perGroup = weights.shape[1]
        let kernel = a.kernel ?? [weights.shape[2], weights.shape[3]]
        let groups = try NodeAttributes(node).int("group", 1)
        let channels = tensor.shape.last!!
        guard groups >= 1, perGroup * groups == channels else {
            throw fail(node, "weights \(weights.shape) with group \(groups) do not match \(channels) input channels")
        }
        let win = try window(node, tensor, kernel: kernel, pooling: false, a)
        var parameters = [("W", weights.floats)]
        if let bias { parameters.append(("b", bias.floats)) }
        let name: String
        if groups > 1 && groups == channels && perGroup == 1 {
            name = try add(node, [tensor.name], parameters: parameters) {
                DepthwiseConvolution(kernel: Self.pair(kernel), multiplier: outputs / channels, stride: Self.pair(win.stride),
                                     padding: win.padding, dilation: Self.pair(win.dilation), useBias: bias != nil, name: $0)
            }
        } else {
            name = try add(node, [tensor.name], parameters: parameters) {
                Convolution(kernel: Self.pair(kernel), channels: outputs, stride: Self.pair(win.stride), padding: win.padding,
                            dilation: Self.pair(win.dilation), groups: groups, useBias: bias != nil, name: $0)
            }
        }
        try set(node, ComputedTensor(name, oneD ? [win.outputs[1], outputs] : [win.outputs[0], win.outputs[1], outputs]))
    }

    /// `MaxPool` / `AveragePool` with ceil mode and count_include_pad.
    func pool(_ node: Onnx_NodeProto, average: Bool) throws {
        let tensor = try act(node)
        let oneD = try windowed(node, tensor)
        var a = try WindowAttributes(NodeAttributes(node))
        if oneD { a = a.oneDimensional() }
        guard let kernel = a.kernel else { throw fail(node, "attribute 'kernel_shape' is missing") }
        let folded = pendingPads[currentIndex] != nil
        let win = try window(node, tensor, kernel: kernel, pooling: true, a)
        let includePad = try NodeAttributes(node).int("count_include_pad", 0) != 0
        let countIncludes = average && (includePad || folded)
        let poolingWindow = PoolingWindow(kernel: Self.pair(kernel), stride: Self.pair(win.stride), padding: win.padding,
                                          dilation: Self.pair(win.dilation), ceilMode: win.ceil)
        let name = try add(node, [tensor.name]) { name -> any Layer in
            average ? AveragePooling(window: poolingWindow, countIncludesPadding: countIncludes, name: name)
                : MaxPooling(window: poolingWindow, name: name)
        }
        let c = tensor.shape.last!
        let shape = oneD ? [win.outputs[1], c] : [win.outputs[0], win.outputs[1], c]
        if !average { try setMaxPoolIndices(node, tensor, poolingWindow, shape: shape) }
        try set(node, ComputedTensor(name, shape))
    }

    /// `MaxPool`, and its `Indices` when read (``setMaxPoolIndices(_:_:_:shape:)``).
    func opMaxPool(_ node: Onnx_NodeProto, _ index: Int) throws {
        try pool(node, average: false)
    }

    /// A global pooling: ONNX's [N, C, 1, 1] is Anvil's vector of C.
    func globalPool(_ node: Onnx_NodeProto, _ make: (String) -> any Layer) throws {
        let tensor = try act(node)
        let oneD = try windowed(node, tensor)
        let name = try add(node, [tensor.name], make)
        let c = tensor.shape.last!
        try set(node, ComputedTensor(name, oneD ? [1, c] : [1, 1, c], anvilRank: 2))
    }

    /// `BatchNormalization` in inference mode.
    func opBatchNormalization(_ node: Onnx_NodeProto, _ index: Int) throws {
        let tensor = try act(node)
        let a = NodeAttributes(node)
        if try a.int("training_mode", 0) != 0 { throw fail(node, "training_mode 1 is not supported (export the model in eval mode)") }
        let stats = try (1 ... 4).map { try constant(node, $0).floats }
        let epsilon = Float(try a.float("epsilon", 1e-5))
        let name = try add(node, [tensor.name],
                           parameters: [("gamma", stats[0]), ("beta", stats[1]), ("mean", stats[2]), ("variance", stats[3])]) {
            BatchNormalization(epsilon: epsilon, name: $0)
        }
        try set(node, ComputedTensor(name, tensor.shape))
    }

    /// A Gemm/MatMul input and its [out][in] weights: (Anvil tensor name, input count, weights
    /// reordered for that tensor's layout).
    func flattenSource(_ node: Onnx_NodeProto, _ value: ImportedValue?, _ weights: ConstantTensor) throws -> (String, Int, ConstantTensor) {
        if case .flat(let flat)? = value, flat.source.isOpen {
            throw fail(node, "its flattened input's size depends on the open input height/width, so the weight count cannot match every size; pass --input-shape C,H,W")
        }
        if case .flat(let flat)? = value, flat.source.rank == 4, flat.source.anvilRank == 4 {
            let source = flat.source
            let count = source.shape.reduce(1) { $0 * $1! }
            var weights = weights
            if weights.shape[1] == count && !source.isStandard {
                let onnxDims = source.onnxShape.dropFirst().map { $0! }
                let anvilAxes = (1 ... 3).map { j in source.permutation.firstIndex(of: j)! }
                // Anvil's axes, then channels first: one permutation, so one copy of the weights.
                let toAnvil = [0] + anvilAxes
                weights = try weights.reshaped([weights.shape[0]] + onnxDims)
                    .transposed([0, 3, 1, 2].map { toAnvil[$0] }).reshaped([weights.shape[0], count])
            }
            return (source.name, count, weights)
        }
        var resolved = value
        if case .flat(let flat)? = value { resolved = .tensor(try writeFlatten(flat, node)) }
        if case .tensor(let t)? = resolved {
            if t.isOpen {
                throw fail(node, "its input's size \(Self.text(t.onnxShape)) depends on the open input size, so the weight count cannot match every size; pass --input-shape C,H,W")
            }
            if t.rank == 2 || t.anvilRank == 2 || (t.rank == 4 && t.shape[0] == 1 && t.shape[1] == 1 && t.isStandard) {
                return (t.name, t.rank != 1 ? t.shape.last!! : 1, weights)
            }
        }
        throw fail(node, "its input must be 2-D ([N, features]); flatten the image first")
    }

    /// A bias added right after the node: (the constant as `outputs` values, the Add's output)
    /// with the Add skipped, or (nil, the node's output).
    func followingBias(_ node: Onnx_NodeProto, _ index: Int, outputs: Int, rank: Int) throws -> ([Float]?, String) {
        let outputName = node.output[0]
        let users = consumers[outputName] ?? []
        guard users.count == 1, users[0] > index, graph.node[users[0]].opType == "Add", graph.node[users[0]].input.count == 2 else {
            return (nil, outputName)
        }
        let follower = graph.node[users[0]]
        let other = follower.input[0] == outputName ? follower.input[1] : follower.input[0]
        guard case .constant(let constant)? = values[other], constant.rank <= rank, constant.count == 1 || constant.count == outputs else {
            return (nil, outputName)
        }
        if constant.rank > 0 && constant.shape.last! != constant.count { return (nil, outputName) }
        skip.insert(users[0])
        let flat = constant.floats
        return (flat.count == 1 ? [Float](repeating: flat[0], count: outputs) : flat, follower.output.first ?? outputName)
    }

    /// Writes a Dense layer; a sole-consumer Add of a constant vector becomes its bias.
    func dense(_ node: Onnx_NodeProto, _ index: Int, weights: ConstantTensor, bias: [Float]?) throws {
        let (source, inputs, weights) = try flattenSource(node, try value(node, 0), weights)
        let outputs = weights.shape[0]
        guard weights.shape[1] == inputs else { throw fail(node, "weights \(weights.shape) do not match \(inputs) input features") }
        var bias = bias, outputName = node.output[0]
        if bias == nil { (bias, outputName) = try followingBias(node, index, outputs: outputs, rank: 2) }
        var parameters = [("W", weights.floats)]
        if let bias { parameters.append(("b", bias)) }
        let name = try add(node, [source], parameters: parameters) { Dense(neurons: outputs, useBias: bias != nil, name: $0) }
        values[outputName] = .tensor(ComputedTensor(name, [outputs]))
    }

    /// `Gemm` (transB, alpha, beta, C): Dense, alpha and beta folded in; with transA or a C that
    /// is not a per-output bias, its definition written out (Transpose, MatMul, Add).
    func opGemm(_ node: Onnx_NodeProto, _ index: Int) throws {
        let a = NodeAttributes(node)
        let b = try constant(node, 1)
        let outputs = b.rank == 2 ? (try a.int("transB", 0) != 0 ? b.shape[0] : b.shape[1]) : 0
        // A C of one value, or one per output, is Dense's bias.
        let matrixBias = try const(node, 2, required: false).map { $0.count != 1 && $0.count != outputs } ?? false
        if try a.int("transA", 0) != 0 || matrixBias { return try gemmWrittenOut(node) }
        var weights = try constant(node, 1)
        guard weights.rank == 2 else { throw fail(node, "B must be a 2-D constant, got shape \(weights.shape)") }
        if try a.int("transB", 0) == 0 { weights = try weights.transposed() }
        let alpha = try a.float("alpha", 1.0)
        if alpha != 1 { weights = weights.mapped { $0 * alpha } }
        var bias: [Float]?
        if let c = try const(node, 2, required: false) {
            guard c.count == 1 || c.count == weights.shape[0] else { throw fail(node, "C of shape \(c.shape) is not a per-output bias") }
            let beta = try a.float("beta", 1.0)
            let scaled = c.doubles.map { Float($0 * beta) }
            bias = scaled.count == 1 ? [Float](repeating: scaled[0], count: weights.shape[0]) : scaled
        }
        if case .tensor(let tensor)? = try value(node, 0), !tensor.isBatchFirst {
            // [T·B, D] and the like: the batch is folded into the rows, which the product keeps apart.
            return try channelMatMul(node, index, tensor, try weights.transposed(), bias: bias)
        }
        try dense(node, index, weights: weights, bias: bias)
    }

    /// `Gemm` as its definition: alpha · A' · B' + beta · C, A' and B' transposed as `transA` and
    /// `transB` say (the constants folded: B' · alpha, C · beta).
    func gemmWrittenOut(_ node: Onnx_NodeProto) throws {
        let a = NodeAttributes(node)
        var weights = try constant(node, 1)
        guard weights.rank == 2 else { throw fail(node, "B must be a 2-D constant, got shape \(weights.shape)") }
        if try a.int("transB", 0) != 0 { weights = try weights.transposed() }
        let alpha = try a.float("alpha", 1.0), beta = try a.float("beta", 1.0)
        weights = weights.mapped { $0 * alpha }
        var body: [BodyNode] = []
        var operand = node.input[0]
        if try a.int("transA", 0) != 0 {
            body.append(BodyNode(op: "Transpose", inputs: [operand], output: "transposed", intLists: ["perm": [1, 0]]))
            operand = "transposed"
        }
        body.append(BodyNode(op: "MatMul", inputs: [operand, "weights"], output: "product"))
        var constants = ["weights": weights]
        if let c = try const(node, 2, required: false) {
            body.append(BodyNode(op: "Add", inputs: ["product", "bias"], output: "y"))
            constants["bias"] = c.mapped { $0 * beta }
        }
        try expand(node, body, constants: constants)
    }

    /// `MatMul` by a constant matrix: Dense, or a PointwiseConvolution on the last axis.
    func opMatMul(_ node: Onnx_NodeProto, _ index: Int) throws {
        if case .constant(let a)? = try value(node, 0) {
            guard case .constant(let b)? = try value(node, 1) else { throw fail(node, "the first input must be a computed tensor") }
            return try set(node, .constant(try Self.matrixProduct(node, a, b)))
        }
        guard case .constant(let weights)? = try value(node, 1) else { return try matMulOfTensors(node) }
        guard weights.rank == 2 else { throw fail(node, "the weight matrix must be 2-D, got shape \(weights.shape)") }
        if case .tensor(let tensor)? = try value(node, 0), tensor.rank >= 3 {
            try channelMatMul(node, index, tensor, weights)
            return
        }
        try dense(node, index, weights: try weights.transposed(), bias: nil)
    }

    /// NumPy's matmul of two constants (float64 sums), the leading axes broadcast.
    static func matrixProduct(_ node: Onnx_NodeProto, _ a: ConstantTensor, _ b: ConstantTensor) throws -> ConstantTensor {
        guard a.rank >= 1, b.rank >= 1 else { throw ImportFailure("MatMul of a scalar") }
        let x = a.rank == 1 ? try a.reshaped([1, a.count]) : a, y = b.rank == 1 ? try b.reshaped([b.count, 1]) : b
        let (m, k) = (x.shape[x.rank - 2], x.shape[x.rank - 1]), (k2, n) = (y.shape[y.rank - 2], y.shape[y.rank - 1])
        guard k == k2 else { throw ImportFailure("MatMul of \(a.shape) by \(b.shape): the inner axes \(k) and \(k2) differ") }
        let leading = try ConstantTensor.broadcastShape(Array(x.shape.dropLast(2)), Array(y.shape.dropLast(2)))
        let p = try x.broadcast(to: leading + [m, k]).doubles, q = try y.broadcast(to: leading + [k, n]).doubles
        let count = leading.reduce(1, *)
        guard count * m * n <= 1 << 26 else { throw ImportFailure("MatMul of constants \(a.shape) by \(b.shape) is too large to fold") }
        var out = [Float](repeating: 0, count: count * m * n)
        for item in 0 ..< count { for i in 0 ..< m { for j in 0 ..< n {
            var sum = 0.0
            for l in 0 ..< k { sum += p[(item * m + i) * k + l] * q[(item * k + l) * n + j] }
            out[(item * m + i) * n + j] = Float(sum)
        } } }
        var shape = leading + [m, n]
        if b.rank == 1 { shape.removeLast() }
        if a.rank == 1 { shape.remove(at: shape.count - (b.rank == 1 ? 1 : 2)) }
        return ConstantTensor(shape: shape, floats: out)
    }

    /// `MatMul` of two computed tensors: the engine's `MatMul`, an input whose last two axes
    /// are held swapped (an ONNX Transpose of them) read transposed rather than copied. The
    /// batch may sit in a leading axis (folded there, as attention's `[B·heads, T, d]`) when it
    /// sits alike in both.
    func matMulOfTensors(_ node: Onnx_NodeProto) throws {
        if readsPlanTensor(node) { throw fail(node, "a MatMul with a shape computation is not supported") }
        if node.input.count == 2, try vectorOperands(node) { return }
        try set(node, try matMul(node, try act(node, 0, anyLayout: true), try act(node, 1, anyLayout: true)))
    }

    /// `MatMul` with a vector operand, as NumPy defines it: the vector made a matrix (a row
    /// before, a column after), multiplied, and that axis removed. Whether it applied.
    func vectorOperands(_ node: Onnx_NodeProto) throws -> Bool {
        let first = try inputRank(node)
        guard case .tensor(let second)? = try value(node, 1) else { return false }
        guard first == 1 || second.onnxRank == 1 else { return false }
        // (Before opset 13 Unsqueeze and Squeeze take their axes as attributes.)
        var body: [BodyNode] = [], constants: [String: ConstantTensor] = [:]
        func reshaping(_ op: String, _ input: String, _ output: String, axes: [Int]) {
            if opset >= 13 {
                body.append(BodyNode(op: op, inputs: [input, output + "Axes"], output: output))
                constants[output + "Axes"] = ConstantTensor(shape: [axes.count], integers: axes.map(Int64.init))
            } else {
                body.append(BodyNode(op: op, inputs: [input], output: output, intLists: ["axes": axes]))
            }
        }
        var a = node.input[0], b = node.input[1]
        // A vector becomes a row (or a column) with leading axes of 1 up to the other operand's rank.
        if first == 1 { reshaping("Unsqueeze", a, "row", axes: Array(0 ..< max(1, second.onnxRank - 1))); a = "row" }
        if second.onnxRank == 1 { reshaping("Unsqueeze", b, "column", axes: Array(0 ..< max(0, first - 2)) + [max(1, first - 1)]); b = "column" }
        body.append(BodyNode(op: "MatMul", inputs: [a, b], output: "product"))
        // The row's axis is the product's second last, the column's its last: the column's goes first.
        var last = "product"
        if second.onnxRank == 1 { reshaping("Squeeze", last, "noColumn", axes: [-1]); last = "noColumn" }
        if first == 1 { reshaping("Squeeze", last, "noRow", axes: [second.onnxRank == 1 ? -1 : -2]) }
        try expand(node, body, constants: constants)
        return true
    }

    /// The engine's `MatMul` of two computed tensors (ONNX's matmul semantics, ranks equal).
    func matMul(_ node: Onnx_NodeProto, _ first: ComputedTensor, _ second: ComputedTensor) throws -> ComputedTensor {
        func operand(_ index: Int) throws -> (tensor: ComputedTensor, transposed: Bool) {
            let tensor = try exact(node, index == 0 ? first : second)
            let rank = tensor.onnxRank
            guard tensor.rank >= 3, rank >= 2 else {
                throw fail(node, "input \(index) has shape \(Self.text(tensor.onnxShape)); a MatMul of two computed tensors needs matrices after the batch axis (rank 3 or more)")
            }
            if tensor.holdsBatch(rank - 1) || tensor.holdsBatch(rank - 2) {
                throw fail(node, "input \(index) of shape \(Self.text(tensor.onnxShape)) holds the batch in a matrix axis; the product would mix the batch's items")
            }
            let order = tensor.onnxOrder
            if tensor.permutation == order { return (tensor, false) }
            var swapped = order
            swapped.swapAt(rank - 1, rank - 2)
            if tensor.permutation == swapped { return (tensor, true) }
            return (try toONNXOrder(node, tensor), false)
        }
        let (a, transposeA) = try operand(0), (b, transposeB) = try operand(1)
        guard a.rank == b.rank, a.onnxRank == b.onnxRank else {
            throw fail(node, "multiplies tensors of ranks \(a.onnxRank) and \(b.onnxRank); Anvil broadcasts the axes between the batch axis and the matrices of equal ranks")
        }
        // (Whole items hold no batch among ONNX's axes: any two multiply.)
        let wholeItems = isWholeItem(a) && isWholeItem(b)
        guard wholeItems || (a.batchFold == b.batchFold && a.batchAxis == b.batchAxis) else {
            throw fail(node, "multiplies \(Self.text(a.onnxShape)) by \(Self.text(b.onnxShape)), which hold the batch in different axes")
        }
        // ONNX's shapes without the batch's own axis: the leading axes broadcast.
        func itemShape(_ t: ComputedTensor) -> [Int?] {
            t.onnxShape.enumerated().filter { t.batchFold != nil || t.permutation[$0.offset] != 0 }.map(\.element)
        }
        let x = itemShape(a), y = itemShape(b)
        if let k = x[x.count - 1], let l = y[y.count - 2], k != l {
            throw fail(node, "multiplies \(Self.text(a.onnxShape)) by \(Self.text(b.onnxShape)): the first's columns (\(k)) are not the second's rows (\(l))")
        }
        for (p, q) in zip(x.dropLast(2), y.dropLast(2)) {
            if let p, let q, p != q, p != 1, q != 1 {
                throw fail(node, "multiplies \(Self.text(a.onnxShape)) by \(Self.text(b.onnxShape)), whose leading axes do not broadcast (\(p) and \(q))")
            }
        }
        let m = x[x.count - 2], n = y[y.count - 1]
        let leading: [Int?] = zip(x.dropLast(2), y.dropLast(2)).map { p, q in p == 1 ? q : p }
        let shape = leading + [m, n]
        let name = try add(node, [a.name, b.name]) { MatMul(transposeA: transposeA, transposeB: transposeB, name: $0) }
        if wholeItems, !shape.contains(where: { $0 == nil }) { return wholeItem(name, shape.map { $0! }) }
        return ComputedTensor(name, shape, permutation: a.onnxOrder, batchFold: a.batchFold)
    }

    /// `MatMul` of a rank-3/4 tensor by [K, M] on its last ONNX axis: a PointwiseConvolution
    /// (with `bias`, or a sole-consumer Add of a constant vector after it).
    func channelMatMul(_ node: Onnx_NodeProto, _ index: Int, _ tensor: ComputedTensor, _ weights: ConstantTensor, bias: [Float]? = nil) throws {
        var tensor = tensor
        if tensor.holdsBatch(-1) { throw fail(node, "its input \(Self.text(tensor.onnxShape)) holds the batch in the last axis, which a MatMul contracts") }
        if !tensor.isChannelAxis(-1) { tensor = try transpose(node, tensor, to: tensor.onnxOrder) }
        tensor = try exact(node, tensor)
        guard let features = tensor.shape.last!, weights.shape[0] == features else {
            throw fail(node, "weights \(weights.shape) do not match \(tensor.shape.last!.map(String.init) ?? "None") features on the last axis")
        }
        let outputs = weights.shape[1]
        var bias = bias, outputName = node.output[0]
        if bias == nil { (bias, outputName) = try followingBias(node, index, outputs: outputs, rank: tensor.onnxRank) }
        var parameters = [("W", try weights.transposed().floats)]
        if let bias { parameters.append(("b", bias)) }
        let name = try add(node, [tensor.name], parameters: parameters) { PointwiseConvolution(channels: outputs, useBias: bias != nil, name: $0) }
        values[outputName] = .tensor(ComputedTensor(name, Array(tensor.shape.dropLast()) + [outputs], permutation: tensor.permutation,
                                                    batchFold: tensor.batchFold))
    }

    /// An Activation applying `function`, in whatever layout the input is held; on a constant
    /// (Swin v2's position-bias MLP, all weights), the function folded.
    func activation(_ node: Onnx_NodeProto, _ function: ActivationFunction) throws {
        if case .constant(let c)? = try value(node, 0) {
            guard let f = Self.foldable(function) else { throw fail(node, "folding \(node.opType) of a constant is not supported") }
            return try set(node, .constant(ConstantTensor(shape: c.shape, floats: c.doubles.map { Float(f($0)) })))
        }
        let tensor = try act(node, anyLayout: true)
        let name = try add(node, [tensor.name]) { Activation(function, name: $0) }
        try set(node, tensor.like(name))
    }

    /// The activations a constant may go through, as functions of a float64.
    static func foldable(_ function: ActivationFunction) -> ((Double) -> Double)? {
        switch function {
        case .relu: return { max($0, 0) }
        case .relu6: return { min(max($0, 0), 6) }
        case .sigmoid: return { 1 / (1 + Foundation.exp(-$0)) }
        case .tanh: return { Foundation.tanh($0) }
        case .clip(let low, let high): return { min(max($0, Double(low)), Double(high)) }
        case .leakyRelu(let alpha): return { $0 >= 0 ? $0 : Double(alpha) * $0 }
        case .linear(let a, let b): return { Double(a) * $0 + Double(b) }
        default: return nil
        }
    }

    /// `Selu`: the engine's activation with ONNX's standard constants; with others, γ·Elu(α).
    func opSelu(_ node: Onnx_NodeProto, _ index: Int) throws {
        let a = NodeAttributes(node)
        let alpha = try a.float("alpha", Self.seluAlpha), gamma = try a.float("gamma", Self.seluGamma)
        if abs(alpha - Self.seluAlpha) > 1e-6 || abs(gamma - Self.seluGamma) > 1e-6 {
            return try expand(node, [
                BodyNode(op: "Elu", inputs: [node.input[0]], output: "elu", floats: ["alpha": Float(alpha)]),
                BodyNode(op: "Mul", inputs: ["elu", "gamma"], output: "y"),
            ], constants: ["gamma": ConstantTensor(shape: [], floats: [Float(gamma)])])
        }
        try activation(node, .selu)
    }

    /// `Clip`: relu6, relu or clip.
    func opClip(_ node: Onnx_NodeProto, _ index: Int) throws {
        var low = -Self.floatMax, high = Self.floatMax
        if opset < 11 {
            let a = NodeAttributes(node)
            low = try a.float("min", -Self.floatMax)
            high = try a.float("max", Self.floatMax)
        } else {
            if let v = try const(node, 1, required: false) { guard v.count > 0 else { throw fail(node, "its min (input 1) is empty; Clip takes a scalar") }; low = v.doubles[0] }
            if let v = try const(node, 2, required: false) { guard v.count > 0 else { throw fail(node, "its max (input 2) is empty; Clip takes a scalar") }; high = v.doubles[0] }
        }
        if low == 0 && high == 6 {
            try activation(node, .relu6)
        } else if low == 0 && high >= Self.floatMax {
            try activation(node, .relu)
        } else {
            try activation(node, .clip(min: Float(max(low, -Self.floatMax)), max: Float(min(high, Self.floatMax))))
        }
    }

    /// `PRelu` with one slope or one per channel.
    func opPRelu(_ node: Onnx_NodeProto, _ index: Int) throws {
        let held = try act(node, anyLayout: true)
        let slopes = try constant(node, 1)
        // A graph converted as one item has no channels-last image: the function body broadcasts.
        let tensor = isWholeItem(held) ? held : try toStandard(node, held)
        guard let channels = tensor.shape.last! else { throw fail(node, "open channels") }
        var flat = slopes.floats
        // Aligned on the last axes as NumPy's broadcasting does, a slope per channel varies along
        // ONNX axis 1 only ([C] of a matrix, [C, 1, 1] of an image).
        let rank = tensor.onnxRank
        let aligned = slopes.shape.count <= rank ? [Int](repeating: 1, count: rank - slopes.shape.count) + slopes.shape : []
        let perChannel = (2 ... 4).contains(rank) && aligned.count == rank && aligned[1] == channels
            && aligned.enumerated().allSatisfy { $0.offset == 1 || $0.element == 1 }
        if flat.count == 1 {
            flat = [Float](repeating: flat[0], count: channels)
        } else if !perChannel || isWholeItem(tensor) {
            // Any other slope broadcasts as NumPy's does: its function body, x < 0 ? slope·x : x.
            return try expand(node, [
                BodyNode(op: "Less", inputs: [node.input[0], "zero"], output: "negative"),
                BodyNode(op: "Mul", inputs: [node.input[0], node.input[1]], output: "scaled"),
                BodyNode(op: "Where", inputs: ["negative", "scaled", node.input[0]], output: "y"),
            ], constants: ["zero": ConstantTensor(shape: [], floats: [0])])
        }
        let name = try add(node, [tensor.name], parameters: [("slopes", flat)]) { PReLU(name: $0) }
        try set(node, ComputedTensor(name, tensor.shape))
    }

    /// `Softmax` / `LogSoftmax` over the axis Anvil holds as channels.
    func softmax(_ node: Onnx_NodeProto, _ make: (String) -> any Layer) throws {
        var tensor = try act(node, anyLayout: true)
        let rank = tensor.onnxRank
        let axis = ((try NodeAttributes(node).int("axis", opset >= 13 ? -1 : 1) % rank) + rank) % rank
        guard !tensor.holdsBatch(axis) else { throw fail(node, "a \(node.opType) over the batch axis is not supported") }
        if !tensor.isChannelAxis(axis) {
            // Anvil's softmax works along the last axis: the axis is moved there, the others keep
            // ONNX's order (the batch, where it is one, stays Anvil's axis 0).
            var target = [Int](repeating: 0, count: rank), next = 1
            for i in 0 ..< rank where i != axis && tensor.permutation[i] != 0 {
                target[i] = next
                next += 1
            }
            target[axis] = tensor.rank - 1
            tensor = try transpose(node, tensor, to: target)
        }
        if opset < 13 && tensor.onnxShape[(axis + 1)...].contains(where: { $0 != 1 }) {
            throw fail(node, "before opset 13, \(node.opType) over axis \(axis) of a \(rank)-D tensor spans the axes after it too; Anvil works over channels only")
        }
        let name = try add(node, [tensor.name], make)
        try set(node, tensor.like(name))
    }

    /// A window option's (height, width) from the two values ``window(_:_:kernel:pooling:_:)`` checked.
    static func pair(_ values: [Int]) -> (Int, Int) {
        (values[0], values[1])
    }
}
