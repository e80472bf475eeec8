import Anvil
import Foundation

/// Element-wise binary, N-ary and unary operators and the activation patterns exporters write
/// out (x·sigmoid(x): silu; x·hardSigmoid(x), x·relu6(x + 3)/6: hardSwish; x·0.5·(1 + erf(x/√2)):
/// gelu) — onnx_ops/elementwise.py.
extension ONNXConverter {
    static func registerElementwiseOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        for op in ["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Sum", "Mean"] {
            table[op] = { c in { node, _ in try c.elementwise(node, op) } }
        }
        // Mod's `fmod` attribute picks the operation: 0 the floored remainder (integers only, as
        // ONNX requires), 1 C's fmod; "FMod" names the second below.
        table["Mod"] = { c in { node, _ in
            let fmod = try NodeAttributes(node).int("fmod", 0)
            guard fmod == 0 || fmod == 1 else { throw c.fail(node, "fmod must be 0 or 1, got \(fmod)") }
            try c.elementwise(node, fmod == 1 ? "FMod" : "Mod")
        } }
        let unary: [(String, ActivationFunction, (Double) -> Double)] = [
            ("Neg", .negative, { -$0 }), ("Abs", .absolute, { abs($0) }), ("Sqrt", .squareRoot, { $0.squareRoot() }),
            ("Exp", .exponential, { Foundation.exp($0) }), ("Log", .logarithm, { Foundation.log($0) }), ("Reciprocal", .reciprocal, { 1 / $0 }),
            ("Erf", .erf, { Foundation.erf($0) }), ("Softsign", .softsign, { $0 / (1 + abs($0)) }),
            ("Softplus", .softplus, { max($0, 0) + Foundation.log1p(Foundation.exp(-abs($0))) }),
            ("Mish", .mish, { $0 * Foundation.tanh(max($0, 0) + Foundation.log1p(Foundation.exp(-abs($0)))) }),
            ("Sin", .sin, { Foundation.sin($0) }), ("Cos", .cos, { Foundation.cos($0) }), ("Tan", .tan, { Foundation.tan($0) }),
            ("Asin", .asin, { Foundation.asin($0) }), ("Acos", .acos, { Foundation.acos($0) }), ("Atan", .atan, { Foundation.atan($0) }),
            ("Sinh", .sinh, { Foundation.sinh($0) }), ("Cosh", .cosh, { Foundation.cosh($0) }), ("Asinh", .asinh, { Foundation.asinh($0) }),
            ("Acosh", .acosh, { Foundation.acosh($0) }), ("Atanh", .atanh, { Foundation.atanh($0) }),
            ("Floor", .floor, { Foundation.floor($0) }), ("Ceil", .ceil, { Foundation.ceil($0) }),
            ("Round", .round, { $0.rounded(.toNearestOrEven) }), ("Sign", .sign, { $0 > 0 ? 1 : $0 < 0 ? -1 : $0 }),
        ]
        for (op, function, fold) in unary {
            table[op] = { c in { node, _ in try c.unary(node, function, fold) } }
        }
        table["Gelu"] = { c in { node, _ in
            let approximate = try NodeAttributes(node).string("approximate", "none")
            guard approximate == "none" || approximate == "tanh" else {
                throw c.fail(node, "approximate='\(approximate)' is not supported (only 'none' and 'tanh')")
            }
            try c.activation(node, approximate == "none" ? .gelu : .geluTanh)
        } }
        table["Celu"] = { c in { node, _ in
            let alpha = try NodeAttributes(node).float("alpha", 1.0)
            if alpha == 0 { throw c.fail(node, "alpha must not be 0") }
            try c.activation(node, .celu(alpha: Float(alpha)))
        } }
        table["ThresholdedRelu"] = { c in { node, _ in
            try c.activation(node, .thresholdedRelu(alpha: Float(try NodeAttributes(node).float("alpha", 1.0))))
        } }
        table["Swish"] = { c in { node, _ in
            let alpha = try NodeAttributes(node).float("alpha", 1.0)
            if alpha != 1 { throw c.fail(node, "alpha \(alpha) is not supported (only 1: SiLU)") }
            try c.activation(node, .silu)
        } }
    }

    /// ONNX operator -> the engine's element-wise operation.
    static let operations: [String: ElementwiseOperation] = [
        "Add": .add, "Sub": .subtract, "Mul": .multiply, "Div": .divide, "Max": .maximum, "Min": .minimum, "Pow": .power,
        "Sum": .add, "Mean": .mean, "Mod": .remainder, "FMod": .fmod, "Less": .less, "LessOrEqual": .lessOrEqual,
        "Greater": .greater, "GreaterOrEqual": .greaterOrEqual, "Equal": .equal, "And": .and, "Or": .or, "Xor": .xor,
    ]
    static let binaryOnly: Set<String> = ["Sub", "Div", "Pow", "Mod", "FMod", "Less", "LessOrEqual", "Greater", "GreaterOrEqual",
                                          "Equal", "And", "Or", "Xor"]

    /// Folds two constants with `op` (NumPy's semantics; integer division truncates as ONNX's).
    static func fold(_ op: String, _ a: ConstantTensor, _ b: ConstantTensor) throws -> ConstantTensor {
        switch op {
        case "Add", "Sum": return try a.combined(with: b, integer: { $0 &+ $1 }, real: +)
        case "Sub": return try a.combined(with: b, integer: { $0 &- $1 }, real: -)
        case "Mul": return try a.combined(with: b, integer: { $0 &* $1 }, real: *)
        case "Div": return try a.combined(with: b, integer: { x, y in
            guard y != 0 else { throw ImportFailure("integer division by zero") }
            return x == .min && y == -1 ? .min : x / y
        }, real: /)
        case "Max": return try a.combined(with: b, integer: { max($0, $1) }, real: { max($0, $1) })
        case "Min": return try a.combined(with: b, integer: { min($0, $1) }, real: { min($0, $1) })
        case "Pow": return try a.combined(with: b, integer: { x, y in
            guard y >= 0 else { throw ImportFailure("integers to negative integer powers are not allowed") }
            return Int64(clamping: Int(exactly: Foundation.pow(Double(x), Double(y))) ?? Int.max)
        }, real: { Foundation.pow($0, $1) })
        case "Mod", "FMod":
            if op == "Mod" && !(a.isInteger && b.isInteger) {
                throw ImportFailure("Mod of floating-point tensors needs fmod=1 (ONNX defines fmod=0 for integers only)")
            }
            return try a.combined(with: b, integer: { x, y in
                guard y != 0 else { throw ImportFailure("integer remainder of a division by zero (\(x) % 0)") }
                let r = x == .min && y == -1 ? 0 : x % y
                return op == "Mod" && r != 0 && (r < 0) != (y < 0) ? r + y : r
            }, real: { Foundation.fmod($0, $1) })
        default: throw ImportFailure("cannot fold \(op)")
        }
    }

    // MARK: Pattern lookups

    /// The node whose first output is `name`.
    func producer(_ name: String) -> Onnx_NodeProto? {
        producers[name].map { graph.node[$0] }
    }

    /// The one number constant `name` holds.
    func constantValue(_ name: String) -> Double? {
        if case .constant(let c)? = values[name], c.count == 1 { return c.doubles[0] }
        return nil
    }

    private func otherInput(_ node: Onnx_NodeProto, _ name: String) -> String? {
        guard node.input.count == 2, node.input.contains(name) else { return nil }
        return node.input[0] == name ? node.input[1] : node.input[0]
    }

    private func isShiftedRelu6(_ name: String, _ x: String) -> Bool {
        guard let clip = producer(name), clip.opType == "Clip" else { return false }
        var low: Double?, high: Double?
        if opset < 11 {
            let a = NodeAttributes(clip)
            low = try? a.float("min")
            high = try? a.float("max")
        } else {
            low = clip.input.count > 1 && !clip.input[1].isEmpty ? constantValue(clip.input[1]) : nil
            high = clip.input.count > 2 && !clip.input[2].isEmpty ? constantValue(clip.input[2]) : nil
        }
        guard low == 0, high == 6, let first = clip.input.first, let add = producer(first), add.opType == "Add" else { return false }
        guard let other = otherInput(add, x) else { return false }
        return constantValue(other) == 3
    }

    private func scaled(_ name: String) -> (String, Double) {
        if let node = producer(name), ["Mul", "Div"].contains(node.opType), node.input.count == 2 {
            if let second = constantValue(node.input[1]), second != 0 {
                return (node.input[0], node.opType == "Mul" ? second : 1 / second)
            }
            if let first = constantValue(node.input[0]), node.opType == "Mul" { return (node.input[1], first) }
        }
        return (name, 1)
    }

    private func factors(_ name: String, depth: Int = 3) -> ([String], Double) {
        if depth > 0, let node = producer(name), node.input.count == 2 {
            if node.opType == "Mul" {
                var names: [String] = [], k = 1.0
                for operand in node.input {
                    if let value = constantValue(operand) { k *= value } else {
                        let (more, moreK) = factors(operand, depth: depth - 1)
                        names += more
                        k *= moreK
                    }
                }
                return (names, k)
            }
            if node.opType == "Div", let divisor = constantValue(node.input[1]), divisor != 0 {
                let (names, k) = factors(node.input[0], depth: depth - 1)
                return (names, k / divisor)
            }
        }
        return ([name], 1)
    }

    /// (activation, x) when `node` ends one of the fused patterns.
    func fusedPattern(_ node: Onnx_NodeProto) -> (ActivationFunction, String)? {
        guard ["Mul", "Div"].contains(node.opType), let output = node.output.first else { return nil }
        let (names, k) = factors(output)
        guard names.count == 2 else { return nil }
        for (x, other) in [(names[0], names[1]), (names[1], names[0])] {
            guard let inner = producer(other), values[x] != nil else { continue }
            if k == 1 && inner.opType == "Sigmoid" && inner.input.first == x { return (.silu, x) }
            if k == 1 && inner.opType == "HardSigmoid" && inner.input.first == x {
                let a = NodeAttributes(inner)
                if let alpha = try? a.float("alpha", 0.2), let beta = try? a.float("beta", 0.5), abs(alpha - 1.0 / 6) < 1e-6, abs(beta - 0.5) < 1e-6 {
                    return (.hardSwish, x)
                }
            }
            if abs(k * 6 - 1) < 1e-6 && isShiftedRelu6(other, x) { return (.hardSwish, x) }
            if abs(k - 0.5) < 1e-6 && inner.opType == "Add" {
                guard let erfName = inner.input.first(where: { constantValue($0) == nil }),
                      let one = otherInput(inner, erfName), constantValue(one) == 1,
                      let erf = producer(erfName), erf.opType == "Erf", let erfInput = erf.input.first else { continue }
                let (source, scale) = scaled(erfInput)
                if source == x && abs(scale - 1 / 2.0.squareRoot()) < 1e-5 { return (.gelu, x) }
            }
        }
        return nil
    }

    // MARK: Binary and N-ary

    /// A constant operand of tensors of ONNX `rank` as (Anvil shape (h, w, c), values in h, w, c order).
    func anvilConstant(_ node: Onnx_NodeProto, _ constant: ConstantTensor, rank: Int) throws -> ([Int], [Float]) {
        guard constant.rank <= rank else {
            throw fail(node, "a constant of shape \(constant.shape) has more axes than the tensors (rank \(rank))")
        }
        let c = try ConstantTensor(shape: constant.shape, floats: constant.floats).reshaped([Int](repeating: 1, count: rank - constant.rank) + constant.shape)
        guard c.shape[0] == 1 else {
            throw fail(node, "a constant of shape \(constant.shape) spans the batch axis; Anvil broadcasts constants over it")
        }
        let inner = try c.reshaped(Array(c.shape.dropFirst()))
        switch rank {
        case 4:
            let t = try inner.transposed([1, 2, 0])
            return (t.shape, t.floats)
        case 3:
            let t = try inner.transposed([1, 0])
            return ([1] + t.shape, t.floats)
        case 2: return ([1, 1, c.shape[1]], c.floats)
        default: return ([1, 1, 1], c.floats)
        }
    }

    /// The broadcast of Anvil shapes (after the batch axis, aligned on their last axes); an error
    /// naming the ONNX shapes.
    func broadcastShapes(_ node: Onnx_NodeProto, _ shapes: [[Int?]], _ onnxShapes: [String]) throws -> [Int?] {
        let rank = shapes.map(\.count).max() ?? 0
        var result = [Int?](repeating: 1, count: rank)
        for shape in shapes {
            let shape = [Int?](repeating: 1, count: rank - shape.count) + shape
            for axis in 0 ..< rank {
                if shape[axis] == result[axis] || shape[axis] == 1 { continue }
                if result[axis] != 1 {
                    throw fail(node, "cannot broadcast shapes \(onnxShapes.joined(separator: " and ")): each axis must be equal or 1")
                }
                result[axis] = shape[axis]
            }
        }
        return result
    }

    /// Add/Sub/Mul/Div/Max/Min/Pow/Mod/Sum/Mean of computed tensors and at most one constant.
    func elementwise(_ node: Onnx_NodeProto, _ op: String) throws {
        var entries: [(Int, ImportedValue)] = []
        for i in node.input.indices { if let v = try value(node, i) { entries.append((i, v)) } }
        guard !entries.isEmpty else { throw fail(node, "has no inputs") }
        func constantOf(_ v: ImportedValue) -> ConstantTensor? { if case .constant(let c) = v { return c }; return nil }
        let constantsOnly = entries.compactMap { constantOf($0.1) }
        if constantsOnly.count == entries.count {
            if op == "Mean" {
                var total = constantsOnly[0]
                for v in constantsOnly.dropFirst() { total = try Self.fold("Add", total, v) }
                let n = Double(constantsOnly.count)
                try set(node, .constant(ConstantTensor(shape: total.shape, floats: total.doubles.map { Float($0 / n) })))
            } else {
                var result = constantsOnly[0]
                for v in constantsOnly.dropFirst() { result = try Self.fold(op, result, v) }
                try set(node, .constant(result))
            }
            return
        }
        if entries.count == 1 {
            // (`Sum`, `Max`, ... of one tensor: the tensor itself, held as it is.)
            try set(node, try act(node, entries[0].0, anyLayout: true))
            return
        }
        if readsPlanTensor(node) { return try elementwisePlan(node, op) }
        // (Mod with fmod=0 is ONNX's for integers: the engine's floored remainder, exact on them.)
        if Self.binaryOnly.contains(op) && entries.count != 2 { throw fail(node, "\(op) takes 2 inputs, got \(entries.count)") }
        if let (function, x) = fusedPattern(node) {
            var tensor: ComputedTensor?
            switch values[x] {
            case .flat(let flat)?: tensor = try writeFlatten(flat, node)
            case .tensor(let t)?: tensor = t
            default: tensor = nil
            }
            if let tensor {
                let name = try add(node, [tensor.name]) { Activation(function, name: $0) }
                try set(node, tensor.like(name))
                return
            }
        }
        var constants = entries.enumerated().compactMap { position, entry in constantOf(entry.1).map { (position, $0) } }
        if constants.count > 1 {
            if op == "Mean" || Self.binaryOnly.contains(op) { throw fail(node, "\(op) with \(constants.count) constant inputs is not supported") }
            var folded = constants[0].1
            for (_, v) in constants.dropFirst() { folded = try Self.fold(op, folded, v) }
            constants = [(entries.count, folded)]
        }
        var tensors = try entries.filter { constantOf($0.1) == nil }.map { try act(node, $0.0, anyLayout: true) }
        let constant = constants.first?.1
        let constantFirst = constants.first?.0 == 0
        if let constant, constant.count == 1, tensors.count == 1, op != "Mean" {
            if try scalarActivation(node, op, tensors[0], constant.doubles[0], constantFirst: constantFirst) { return }
        }
        if tensors.contains(where: { !$0.isBatchFirst || $0.rank > 4 }) {
            return try elementwiseMovedBatch(node, op, tensors, constant: constant, constantFirst: constantFirst)
        }
        tensors = try tensors.map { try toStandard(node, $0) }
        let rank = tensors.map(\.rank).max()!
        tensors = try tensors.map { try toRank(node, $0, rank) }
        if constant == nil && (op == "Add" || op == "Sum") && Set(tensors.map { Self.text($0.shape) }).count == 1 {
            let name = try add(node, tensors.map(\.name)) { Add(name: $0) }
            try set(node, tensors[0].like(name))
            return
        }
        var anvilShapes: [[Int?]] = tensors.map { Array(([1, 1, 1] + $0.shape).suffix(3)) }
        var onnxShapes = tensors.map { Self.text($0.onnxShape) }
        var parameters: [(String, [Float])] = []
        var constantShape: [Int]?
        if let constant {
            let (shape, array) = try anvilConstant(node, constant, rank: rank)
            anvilShapes.append(shape.map { $0 })
            onnxShapes.append("\(constant.shape)")
            constantShape = shape
            parameters = [("constant", array)]
        }
        let output = try broadcastShapes(node, anvilShapes, onnxShapes)
        if output.prefix(4 - rank).contains(where: { $0 != 1 }) {
            throw fail(node, "broadcasting [\(onnxShapes.joined(separator: ", "))] gives more axes than the rank-\(rank) tensors have")
        }
        let name = try addElementwise(node, op, tensors.map(\.name), parameters: parameters, constantShape: constantShape,
                                      constantFirst: constant != nil && constantFirst)
        let widest = tensors.max { $0.shape.reduce(1) { $0 * ($1 ?? 1) } < $1.shape.reduce(1) { $0 * ($1 ?? 1) } }!
        var result = widest.like(name)
        result.shape = rank > 1 ? Array(output.suffix(rank - 1)) : []
        result.anvilRank = tensors.map(\.anvilRank).max()!
        try set(node, result)
    }

    /// The element-wise operation on tensors above rank 4 or whose batch a Transpose or Reshape
    /// moved (attention scores plus a relative-position bias, `[B·windows, heads, T, T] +
    /// [heads, T, T]`): every tensor held in ONNX's order with the batch in the same place, a
    /// constant of extent 1 there.
    func elementwiseMovedBatch(_ node: Onnx_NodeProto, _ op: String, _ inputs: [ComputedTensor], constant: ConstantTensor?,
                               constantFirst: Bool) throws {
        let tensors = try inputs.map { try toONNXOrder(node, try exact(node, $0)) }
        let first = tensors[0]
        if tensors.allSatisfy(isWholeItem) {
            // Whole items: each tensor after its batch axis is ONNX's; they broadcast as ONNX's do.
            let constantShape = constant.map { $0.shape.isEmpty ? [1] : $0.shape }
            let shapes: [[Int?]] = tensors.map(\.shape) + (constantShape.map { [$0.map { $0 }] } ?? [])
            let output = try broadcastShapes(node, shapes, tensors.map { Self.text($0.onnxShape) } + (constant.map { ["\($0.shape)"] } ?? []))
            let name = try addElementwise(node, op, tensors.map(\.name), parameters: constant.map { [("constant", $0.floats)] } ?? [],
                                          constantShape: constantShape, constantFirst: constant != nil && constantFirst)
            guard !output.contains(where: { $0 == nil }) else { throw fail(node, "broadcasts tensors of open size as one item") }
            return try set(node, wholeItem(name, output.map { $0! }))
        }
        guard tensors.allSatisfy({ $0.permutation == first.permutation && $0.batchFold == first.batchFold }) else {
            throw fail(node, "combines \(tensors.map { Self.text($0.onnxShape) }.joined(separator: " and ")), which hold the batch in different axes")
        }
        let rank = first.onnxRank
        let batchAxis = first.batchFold?.axis ?? first.batchAxis!
        var parameters: [(String, [Float])] = []
        var constantShape: [Int]?
        if let constant {
            guard constant.rank <= rank else { throw fail(node, "a constant of shape \(constant.shape) has more axes than \(Self.text(first.onnxShape))") }
            let aligned = [Int](repeating: 1, count: rank - constant.rank) + constant.shape
            guard aligned[batchAxis] == 1 else {
                throw fail(node, "a constant of shape \(constant.shape) varies along axis \(batchAxis), which holds the batch of \(Self.text(first.onnxShape))")
            }
            // Each item's constant: ONNX's order, without the batch's own axis.
            let item = first.batchFold == nil ? aligned.enumerated().filter { $0.offset != batchAxis }.map(\.element) : aligned
            constantShape = item
            parameters = [("constant", constant.floats)]
        }
        let shapes: [[Int?]] = tensors.map(\.shape) + (constantShape.map { [$0.map { $0 }] } ?? [])
        let output = try broadcastShapes(node, shapes, tensors.map { Self.text($0.onnxShape) } + (constant.map { ["\($0.shape)"] } ?? []))
        let name = try addElementwise(node, op, tensors.map(\.name), parameters: parameters, constantShape: constantShape,
                                      constantFirst: constant != nil && constantFirst)
        try set(node, ComputedTensor(name, output, permutation: first.permutation, batchFold: first.batchFold))
    }

    /// The engine's Elementwise for ONNX operator `op` on the tensors `inputs`, with a constant
    /// operand of `constantShape` (first when `constantFirst`, for the operators where order matters).
    func addElementwise(_ node: Onnx_NodeProto, _ op: String, _ inputs: [String], parameters: [(String, [Float])],
                        constantShape: [Int]?, constantFirst: Bool) throws -> String {
        guard let operation = Self.operations[op] else { throw fail(node, "\(op) is not an element-wise operation") }
        let constant = try constantShape.map { try Shape(dimensions: $0) }
        let first = constantFirst && Self.binaryOnly.contains(op)
        return try add(node, inputs, parameters: parameters) { Elementwise(operation, constant: constant, constantFirst: first, name: $0) }
    }

    /// `tensor` reshaped to `rank` with axes of extent 1 after the batch axis.
    func toRank(_ node: Onnx_NodeProto, _ tensor: ComputedTensor, _ rank: Int) throws -> ComputedTensor {
        if tensor.rank == rank { return tensor }
        try requireBatchFirst(node, tensor)
        if tensor.isOpen {
            throw fail(node, "mixes tensors of ranks \(tensor.rank) and \(rank), and the one of shape \(Self.text(tensor.onnxShape)) depends on the open input size; pass --input-shape C,H,W")
        }
        let full: [Int?] = [1] + [Int?](repeating: 1, count: rank - tensor.rank) + Array(tensor.onnxShape.dropFirst())
        let permutation = ComputedTensor.standardPermutation(rank)
        var anvil = [Int?](repeating: 1, count: rank)
        for (onnxAxis, anvilAxis) in permutation.enumerated() { anvil[anvilAxis] = full[onnxAxis] }
        let target = ComputedTensor("", Array(anvil.dropFirst()), permutation: permutation)
        if !target.isONNXOrdered {
            guard case .tensor(let reshaped) = try reshapeTensor(node, .tensor(tensor), full.map { $0! }) else {
                throw fail(node, "cannot reshape to rank \(rank)")
            }
            return try toStandard(node, reshaped)
        }
        let source = try toONNXOrder(node, tensor)
        let name = try add(node, [source.name], suffix: "_rank") { Reshape(try reshapeTarget(node, Array(anvil.dropFirst())), name: $0) }
        return ComputedTensor(name, Array(anvil.dropFirst()), permutation: permutation)
    }

    /// A computed tensor with a scalar constant as one Activation where one exists.
    func scalarActivation(_ node: Onnx_NodeProto, _ op: String, _ tensor: ComputedTensor, _ k: Double, constantFirst: Bool) throws -> Bool {
        var function: ActivationFunction?
        switch op {
        case "Add", "Sum": function = .linear(a: 1, b: Float(k))
        case "Mul": function = .linear(a: Float(k), b: 0)
        case "Sub": function = constantFirst ? .linear(a: -1, b: Float(k)) : .linear(a: 1, b: Float(-k))
        case "Div" where !constantFirst && k != 0: function = .linear(a: Float(1.0 / k), b: 0)
        case "Div" where constantFirst && k == 1: function = .reciprocal
        case "Max": function = k == 0 ? .relu : .clip(min: Float(max(k, -Self.floatMax)), max: Float(Self.floatMax))
        case "Min": function = .clip(min: Float(-Self.floatMax), max: Float(min(k, Self.floatMax)))
        case "Pow" where !constantFirst:
            if k == 1 {
                try set(node, tensor)
                return true
            }
            if k == 2 {
                let name = try add(node, [tensor.name, tensor.name]) { Elementwise(.multiply, name: $0) }
                try set(node, tensor.like(name))
                return true
            }
            function = k == 0.5 ? .squareRoot : k == -1 ? .reciprocal : nil
        default: break
        }
        guard let function else { return false }
        let name = try add(node, [tensor.name]) { Activation(function, name: $0) }
        try set(node, tensor.like(name))
        return true
    }

    // MARK: Unary

    /// An Activation applying `function`; on a constant, `fold` of it.
    func unary(_ node: Onnx_NodeProto, _ function: ActivationFunction, _ fold: (Double) -> Double) throws {
        if case .constant(let c)? = try value(node, 0) {
            if c.isInteger {
                try set(node, .constant(ConstantTensor(shape: c.shape, integers: c.doubles.map { Int64(clamping: Int(exactly: fold($0).rounded(.towardZero)) ?? 0) })))
            } else {
                try set(node, .constant(c.mapped(fold)))
            }
        } else {
            try activation(node, function)
        }
    }
}
