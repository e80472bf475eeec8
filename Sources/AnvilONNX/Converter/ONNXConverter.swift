import Anvil
import Foundation

/// Converts an ONNX graph into Anvil layers (weights in layout "pytorch"), NCHW mapped to
/// Anvil's NHWC; the Python front end (Scripts/anvil_convert/from_onnx.py) runs it through
/// `anvil convert`. The operator families live in `Operators/` as extensions, a file per family.
///
/// A node that cannot be converted does not stop the conversion: its error is kept, its outputs
/// become placeholders of the shape the file records for them (`value_info`), or are blocked,
/// and the nodes after it are still checked. At the end one error lists every blocker.
final class ONNXConverter {
    /// The ONNX graph (its initializers apart, in ``initializers``).
    let graph: Onnx_GraphProto
    /// The graph's initializers, decoded one at a time by ``convert()``.
    let initializers: ONNXInitializers
    /// The default-domain opset.
    let opset: Int
    /// Whether the graph is imported as one item: every input whole after a batch axis of 1
    /// (``BatchFold`` at ONNX axis 0), for fixed-shape graphs whose first axes are not one batch.
    var isUnbatched: Bool
    /// The graph being built.
    var builder: ModelBuilder
    /// C, H, W filling in open input dimensions.
    let inputShape: (Int, Int, Int)?
    /// Reads tensor values (initializers, Constant nodes).
    let decoding: TensorDecoding
    /// ONNX tensor name -> what it is.
    var values: [String: ImportedValue] = [:]
    /// ONNX tensor name -> indices of nodes reading it (-1: a graph output).
    var consumers: [String: [Int]] = [:]
    /// Indices of nodes folded into an earlier one.
    var skip: Set<Int> = []
    /// Node index -> pads of a Pad folded into it.
    var pendingPads: [Int: [Int]] = [:]
    /// Every error met, one line each.
    var blockers: [String] = []
    /// Nodes not checked because they read only blocked values.
    var unchecked = 0
    /// Static ONNX shapes of values that are blocked (refused graph inputs, failed nodes), for
    /// checking the nodes after them.
    var knownShapes: [String: [Int]] = [:]
    /// ONNX graph output name -> the tensor written as that Anvil output.
    var outputTensors: [String: ComputedTensor] = [:]
    /// Index of the node being converted.
    var currentIndex = 0
    /// Whether every data input declares its first axis as a number (a graph exported at one
    /// batch size), so ONNX defines the graph at that size only.
    lazy var batchIsFixed: Bool = {
        let data = graph.input.filter { input in
            if case .tensor? = values[input.name] { return true }
            return false
        }
        return !data.isEmpty && data.allSatisfy { $0.type.tensorType.shape.dim.first?.knownValue.map { $0 > 0 } ?? false }
    }()
    /// First output name -> producing node index.
    lazy var producers: [String: Int] = {
        var result: [String: Int] = [:]
        for (i, node) in graph.node.enumerated() where !node.output.isEmpty && result[node.output[0]] == nil {
            result[node.output[0]] = i
        }
        return result
    }()
    /// Static shapes recorded in the file (value_info and outputs), for placeholders.
    lazy var recordedShapes: [String: [Int]] = {
        var result: [String: [Int]] = [:]
        for info in graph.valueInfo + graph.output where info.type.isTensor && info.type.tensorType.hasShape {
            let dims = info.type.tensorType.shape.dim
            if dims.allSatisfy({ $0.knownValue.map { $0 >= 0 && $0 < 1 << 31 } ?? false }) {
                result[info.name] = dims.map { Int($0.dimValue) }
            }
        }
        return result
    }()

    /// ONNX operator -> the input positions that must be constants: a graph input read only
    /// there is a weight fed as a graph input.
    static let constantInputs: [String: Set<Int>] = [
        "Conv": [1, 2], "ConvTranspose": [1, 2], "Gemm": [1, 2],
        "BatchNormalization": [1, 2, 3, 4], "InstanceNormalization": [1, 2], "LayerNormalization": [1, 2],
        "GroupNormalization": [1, 2], "PRelu": [1], "Clip": [1, 2], "Resize": [1, 2, 3], "Upsample": [1],
        "Reshape": [1], "Pad": [1, 2, 3], "Slice": [1, 2, 3, 4], "Split": [1], "Squeeze": [1],
        "Unsqueeze": [1], "Expand": [1], "Tile": [1], "Trilu": [1], "TopK": [1], "CumSum": [1], "CumProd": [1],
        "GatherElements": [1], "GatherND": [1], "ScatterND": [1], "ScatterElements": [1], "Scatter": [1], "OneHot": [1, 2], "Compress": [1], "ReverseSequence": [1],
        "Dropout": [1, 2], "CenterCropPad": [1], "Col2Im": [1, 2], "DeformConv": [1, 3], "MaxUnpool": [2], "ReduceSum": [1], "ReduceMean": [1],
        "ReduceMax": [1], "ReduceMin": [1], "ReduceProd": [1], "ReduceL1": [1], "ReduceL2": [1], "ReduceLogSum": [1],
        "ReduceLogSumExp": [1], "ReduceSumSquare": [1],
    ]

    /// A converter for `model`; `directory` resolves external data.
    init(model: Onnx_ModelProto, initializers: ONNXInitializers, name: String?, inputShape: (Int, Int, Int)?, directory: URL?,
         unbatched: Bool = false) {
        graph = model.graph
        isUnbatched = unbatched
        self.initializers = initializers
        opset = Int(model.opsetImport.first { $0.domain == "" || $0.domain == "ai.onnx" }?.version ?? 13)
        let graphName = model.graph.name
        builder = ModelBuilder(name: name ?? (graphName.isEmpty ? "onnx" : graphName))
        self.inputShape = inputShape
        decoding = TensorDecoding(directory: directory)
    }

    // MARK: - Helpers

    /// "node '<name>' (<op>)": the node named by its name or first output.
    func describe(_ node: Onnx_NodeProto) -> String {
        let label = !node.name.isEmpty ? node.name : (node.output.first ?? "?")
        return "node '\(label)' (\(node.opType))"
    }

    /// The failure for `node`, its message prefixed by the node.
    func fail(_ node: Onnx_NodeProto, _ message: String) -> ImportFailure {
        ImportFailure("\(describe(node)): \(message)")
    }

    /// A unique Anvil name for the node's layer (its name or first output, without a leading '/').
    func layerName(_ node: Onnx_NodeProto, suffix: String = "") -> String {
        var base = !node.name.isEmpty ? node.name : (node.output.first ?? node.opType)
        while base.hasPrefix("/") { base.removeFirst() }
        return builder.uniqueName(base + suffix)
    }

    /// Adds the layer `make` builds, named for `node` (the name is passed to `make`), with its
    /// parameter tensors (`<name>_<kind>`); returns the Anvil name.
    @discardableResult
    func add(_ node: Onnx_NodeProto, _ inputs: [String], parameters: [(String, [Float])] = [], suffix: String = "",
             _ make: (String) throws -> any Layer) throws -> String {
        let name = layerName(node, suffix: suffix)
        try builder.addLayer(name, try make(name), inputs: inputs)
        for (key, values) in parameters { try builder.addTensor("\(name)_\(key)", values) }
        return name
    }

    /// `shape` as a Reshape target: an open axis as -1 (inferred from the count); an error when
    /// more than one is open.
    func reshapeTarget(_ node: Onnx_NodeProto, _ shape: [Int?]) throws -> [Int] {
        guard shape.filter({ $0 == nil }).count <= 1 else {
            throw fail(node, "would reshape to \(Self.text(shape)), which has more than one open axis; pass --input-shape C,H,W")
        }
        return shape.map { $0 ?? -1 }
    }

    /// The enumeration case `raw` names (an attribute's value mapped to an option); an error
    /// naming the node and `what` when none does.
    func choice<T: RawRepresentable & CaseIterable>(_ node: Onnx_NodeProto, _ raw: String, _ what: String) throws -> T where T.RawValue == String {
        guard let value = T(rawValue: raw) else {
            throw fail(node, "\(what) '\(raw)' is not supported (\(T.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return value
    }

    /// Input `index` of the node, or nil when absent.
    func value(_ node: Onnx_NodeProto, _ index: Int) throws -> ImportedValue? {
        guard index < node.input.count, !node.input[index].isEmpty else { return nil }
        let name = node.input[index]
        guard let value = values[name] else {
            throw fail(node, "reads '\(name)', which is neither a graph input, an initializer nor an earlier node's output")
        }
        return value
    }

    /// Input `index` as a computed tensor (a pending flatten written; moved to the standard layout unless `anyLayout`).
    func act(_ node: Onnx_NodeProto, _ index: Int = 0, anyLayout: Bool = false) throws -> ComputedTensor {
        switch try value(node, index) {
        case .flat(let flat): return try writeFlatten(flat, node)
        case .tensor(let tensor): return anyLayout ? tensor : try toStandard(node, tensor)
        default:
            throw fail(node, "input \(index) ('\(index < node.input.count ? node.input[index] : "")') must be a computed tensor, not a constant")
        }
    }

    /// Input `index` as a computed tensor or a pending flatten (not written).
    func actOrFlat(_ node: Onnx_NodeProto, _ index: Int = 0) throws -> ImportedValue {
        let value = try value(node, index)
        if case .flat = value { return value! }
        return .tensor(try act(node, index, anyLayout: true))
    }

    /// Input `index` as a constant; nil when absent and not `required`.
    func const(_ node: Onnx_NodeProto, _ index: Int, required: Bool = true) throws -> ConstantTensor? {
        guard let value = try value(node, index) else {
            if required { throw fail(node, "input \(index) is missing") }
            return nil
        }
        guard case .constant(let constant) = value else {
            throw fail(node, "input \(index) ('\(node.input[index])') must be a constant (an initializer)")
        }
        return constant
    }

    /// Input `index` as a required constant.
    func constant(_ node: Onnx_NodeProto, _ index: Int) throws -> ConstantTensor {
        try const(node, index, required: true)!
    }

    /// `tensor` with the Anvil tensor of ONNX's rank (a Reshape after a global pooling's vector).
    func exact(_ node: Onnx_NodeProto, _ tensor: ComputedTensor) throws -> ComputedTensor {
        if tensor.anvilRank == tensor.rank { return tensor }
        let name = try add(node, [tensor.name], suffix: "_rank") { Reshape(try reshapeTarget(node, tensor.shape), name: $0) }
        return ComputedTensor(name, tensor.shape, permutation: tensor.permutation)
    }

    /// `tensor` moved so that ONNX axis i sits at Anvil axis target[i] (the batch's axis at 0,
    /// where it is one; a folded batch stays folded).
    func transpose(_ node: Onnx_NodeProto, _ tensor: ComputedTensor, to target: [Int]) throws -> ComputedTensor {
        guard target.count == tensor.onnxRank, tensor.batchAxis.map({ target[$0] == 0 }) ?? !target.contains(0) else {
            throw fail(node, "its input would need the batch axis moved (layout \(tensor.permutation)\(tensor.batchFold.map { ", the batch folded into axis \($0.axis)" } ?? ""))")
        }
        // Anvil axis j of the result is Anvil axis permutation[j] of the input.
        var permutation = [Int](repeating: 0, count: tensor.rank)
        for (onnxAxis, anvilAxis) in target.enumerated() { permutation[anvilAxis] = tensor.permutation[onnxAxis] }
        let full = tensor.fullShape
        let shape = permutation.dropFirst().map { full[$0] }
        let moved = permutation.filter { full[$0] != 1 }
        if moved == moved.sorted() && (shape == tensor.shape || !shape.contains(where: { $0 == nil })) {
            if shape == tensor.shape { return ComputedTensor(tensor.name, shape, permutation: target, anvilRank: tensor.anvilRank, batchFold: tensor.batchFold) }
            let name = try add(node, [tensor.name], suffix: "_layout") { Reshape(try reshapeTarget(node, shape), name: $0) }
            return ComputedTensor(name, shape, permutation: target, batchFold: tensor.batchFold)
        }
        let source = try exact(node, tensor)
        let name = try add(node, [source.name], suffix: "_layout") { Transpose(permutation: permutation, name: $0) }
        return ComputedTensor(name, shape, permutation: target, batchFold: tensor.batchFold)
    }

    /// `tensor` in the standard (channels-last) layout; an error when its batch is not first.
    func toStandard(_ node: Onnx_NodeProto, _ tensor: ComputedTensor) throws -> ComputedTensor {
        if tensor.isStandard { return tensor }
        try requireBatchFirst(node, tensor)
        return try transpose(node, tensor, to: ComputedTensor.standardPermutation(tensor.rank))
    }

    /// An error unless ONNX axis 0 of `tensor` is the batch.
    func requireBatchFirst(_ node: Onnx_NodeProto, _ tensor: ComputedTensor) throws {
        if tensor.isBatchFirst { return }
        let place = tensor.batchFold.map { "folded into axis \($0.axis)" } ?? "at axis \(tensor.batchAxis ?? 0)"
        throw fail(node, "needs the batch as the first axis of its input \(Self.text(tensor.onnxShape)), which holds it \(place) (a Transpose or Reshape moved it); Anvil runs this operator batch first")
    }

    /// `tensor` held in ONNX's own axis order (the batch where it is).
    func toONNXOrder(_ node: Onnx_NodeProto, _ tensor: ComputedTensor) throws -> ComputedTensor {
        let order = tensor.onnxOrder
        return tensor.permutation == order ? tensor : try transpose(node, tensor, to: order)
    }

    /// Writes the Flatten a pending flatten stands for, once.
    func writeFlatten(_ flat: PendingFlatten, _ node: Onnx_NodeProto) throws -> ComputedTensor {
        if let written = flat.written { return written }
        var source = flat.source
        try requireBatchFirst(node, source)
        let name: String
        if source.isSpatial {
            name = try add(node, [source.name], suffix: "_flatten") { Flatten(order: .channelsFirst, name: $0) }
        } else {
            source = try toONNXOrder(node, source)
            name = try add(node, [source.name], suffix: "_flatten") { Flatten(name: $0) }
        }
        let written = ComputedTensor(name, flat.shape)
        flat.written = written
        return written
    }

    /// An error unless `tensor` is a 4-D NCHW image.
    func requireSpatial(_ node: Onnx_NodeProto, _ tensor: ComputedTensor) throws {
        guard tensor.isSpatial else { throw fail(node, "needs a 4-D NCHW input, got shape \(Self.text(tensor.onnxShape))") }
    }

    /// Whether the window input is a 3-D NCL sequence (true) or a 4-D image (false); an error otherwise.
    func windowed(_ node: Onnx_NodeProto, _ tensor: ComputedTensor) throws -> Bool {
        if tensor.isStandard && (tensor.rank == 3 || tensor.rank == 4) { return tensor.rank == 3 }
        throw fail(node, "needs a 4-D NCHW or 3-D NCL input, got shape \(Self.text(tensor.onnxShape))")
    }

    /// Records `value` as output `index`; an error when a later output is used and was not set.
    func set(_ node: Onnx_NodeProto, _ value: ImportedValue, index: Int = 0) throws {
        guard index < node.output.count else { throw fail(node, "has no output \(index)") }
        values[node.output[index]] = value
        for extra in node.output.dropFirst(index + 1) where !extra.isEmpty && !(consumers[extra] ?? []).isEmpty && values[extra] == nil {
            throw fail(node, "its output '\(extra)' is used, and Anvil computes only the first output")
        }
    }

    /// Records a computed tensor as the node's output.
    func set(_ node: Onnx_NodeProto, _ tensor: ComputedTensor) throws {
        try set(node, .tensor(tensor))
    }

    /// A shape as Python prints it ([1, 3, None, None]).
    static func text(_ shape: [Int?]) -> String {
        "[" + shape.map { $0.map(String.init) ?? "None" }.joined(separator: ", ") + "]"
    }

    // MARK: - Conversion

    /// Converts every node in graph order; returns the writer with outputs set and pruned, or
    /// throws one ``ONNXImportError`` listing every blocker.
    func convert() throws -> ModelBuilder {
        for position in 0 ..< initializers.count {
            try initializers.take(position) { initializer, rawData in
                do {
                    values[initializer.name] = .constant(try decoding.constant(initializer, what: "initializer '\(initializer.name)'",
                                                                               rawData: rawData))
                } catch let failure as ImportFailure {
                    blockers.append(failure.message)
                    values[initializer.name] = .blocked
                }
            }
        }
        for (index, node) in graph.node.enumerated() {
            for name in node.input { consumers[name, default: []].append(index) }
        }
        for output in graph.output { consumers[output.name, default: []].append(-1) }
        if !isUnbatched && firstAxesAreNotABatch { isUnbatched = true }
        for input in graph.input where values[input.name] == nil {
            do {
                if let weight = weightUse(input.name) { throw ImportFailure(weight) }
                try addInput(input)
            } catch let failure as ImportFailure {
                blockers.append(failure.message)
                values[input.name] = .blocked
                if input.type.isTensor, input.type.tensorType.hasShape {
                    let dims = input.type.tensorType.shape.dim.map { $0.knownValue }
                    if dims.allSatisfy({ $0 != nil && $0! >= 0 && $0! < 1 << 31 }) { knownShapes[input.name] = dims.map { Int($0!) } }
                }
            }
        }
        try checkBatchAgreement()
        try checkGraphOrder()
        for (index, node) in graph.node.enumerated() where !skip.contains(index) {
            currentIndex = index
            if node.input.contains(where: { name in
                guard !name.isEmpty, case .blocked? = values[name] else { return false }
                return true
            }) {
                unchecked += 1
                block(node)
                continue
            }
            do {
                guard node.domain.isEmpty || node.domain == "ai.onnx" else {
                    throw fail(node, "operators of domain '\(node.domain)' are not supported")
                }
                // (A node without outputs, found by the onnx fuzz target: Fuzz/regressions/onnx.)
                guard !node.output.isEmpty, !node.output[0].isEmpty else { throw fail(node, "has no output") }
                guard let handler = Self.handlers[node.opType] else {
                    throw fail(node, "this operator is not supported by the Anvil converter (see docs/converters.md)")
                }
                try handler(self)(node, index)
            } catch let failure as ImportFailure {
                let message = failure.message.hasPrefix("node '") ? failure.message : openOrGeneric(node, failure.message)
                blockers.append(message)
                block(node)
            } catch let error as AnvilError {
                blockers.append("\(describe(node)): \(error.message)")
                block(node)
            }
        }
        var outputs: [String] = []
        for output in graph.output {
            var tensor: ComputedTensor
            // A fixed-shape graph returning a value known from shapes (`Shape(x)`, its first axis
            // the batch's extent) is ONNX's at that batch: converted as one item, where it is exact.
            switch values[output.name] {
            case .constant?, .planned?:
                if !isUnbatched && inputsAreFixed {
                    blockers.append("graph output '\(output.name)' is known from the shapes alone; it is converted as one item")
                    continue
                }
            default: break
            }
            switch values[output.name] {
            case .tensor(let t)? where !t.isPlaceholder: tensor = t
            case .flat(let flat)?: tensor = try flat.written ?? writeFlatten(flat, graph.node.last ?? Onnx_NodeProto())
            case .blocked?: continue
            case .tensor?: continue
            case .constant(let constant)?:
                // A value the graph computes from shapes and constants only: written as a Constant,
                // the whole tensor one item (each batch item holds it).
                let node = producer(output.name) ?? Onnx_NodeProto()
                do {
                    tensor = try wholeItem(writeConstant(node, constant), constant.shape)
                } catch let failure as ImportFailure {
                    blockers.append(failure.message)
                    continue
                }
            case .planned(let plan)?:
                let node = producer(output.name) ?? Onnx_NodeProto()
                do {
                    guard !plan.shape.contains(where: { $0 == nil }) else {
                        throw fail(node, "its graph output '\(output.name)' is a shape computation of open rank")
                    }
                    tensor = try wholeItem(engineName(node, plan, what: "its graph output '\(output.name)'"), plan.shape.map { $0! })
                } catch let failure as ImportFailure {
                    blockers.append(failure.message)
                    continue
                }
            default:
                blockers.append("graph output '\(output.name)' was never computed")
                continue
            }
            if tensor.batchFold?.wholeItem == true || (tensor.onnxRank == 0 && tensor.rank == 1) {
                // One item: the tensor after its batch axis of 1 is ONNX's, in ONNX's order.
                outputs.append(tensor.name)
                outputTensors[output.name] = tensor
                continue
            }
            if !tensor.isBatchFirst {
                let place = tensor.batchFold.map { "folded into axis \($0.axis)" } ?? "at axis \(tensor.batchAxis ?? 0)"
                let source = producer(output.name).map { describe($0) + ": its" } ?? "the"
                blockers.append("\(source) graph output '\(output.name)' of shape \(Self.text(tensor.onnxShape)) holds the batch \(place); Anvil's outputs keep the batch axis first")
                continue
            }
            if !tensor.isStandard {
                do { tensor = try toStandard(graph.node.last ?? Onnx_NodeProto(), tensor) } catch let failure as ImportFailure {
                    blockers.append(failure.message)
                    continue
                }
            }
            outputs.append(tensor.name)
            outputTensors[output.name] = tensor
        }
        if !blockers.isEmpty { throw Self.blockerError(blockers, unchecked: unchecked) }
        do {
            try builder.setOutputs(outputs)
            builder.prune()
        } catch let failure as ImportFailure {
            throw ONNXImportError(failure.message, blockers: [failure.message])
        }
        return builder
    }

    /// The message for a helper's failure without a node prefix: the open-size advice when the
    /// node reads a tensor of open size, else "cannot be converted (...)".
    private func openOrGeneric(_ node: Onnx_NodeProto, _ message: String) -> String {
        let readsOpen = node.input.contains { name in
            switch values[name] {
            case .tensor(let t)?: return t.isOpen
            case .flat(let f)?: return f.source.isOpen
            default: return false
            }
        }
        if readsOpen {
            return "\(describe(node)): cannot take an open input size (its output depends on the height/width); pass --input-shape C,H,W"
        }
        return "\(describe(node)): cannot be converted (\(message))"
    }

    /// Rejects graphs whose nodes read a value produced only later (a cycle or an unsorted graph):
    /// ONNX requires topological order.
    private func checkGraphOrder() throws {
        var known = Set(values.keys)
        var later: [String: Int] = [:]
        for (index, node) in graph.node.enumerated() {
            for output in node.output where !output.isEmpty && later[output] == nil { later[output] = index }
        }
        for node in graph.node {
            for name in node.input where !name.isEmpty && !known.contains(name) && later[name] != nil {
                throw ONNXImportError("\(describe(node)): reads '\(name)' before the node that computes it (the graph is not in topological order, or has a cycle)")
            }
            for output in node.output { known.insert(output) }
        }
    }

    /// Operators whose output has their first input's shape: a failed one's output gets that
    /// shape, so the nodes after it are still checked (the Python converter asks ONNX's shape
    /// inference; the file's value_info is used first here too).
    static let shapePreserving: Set<String> = [
        "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "BatchNormalization", "Cast", "CastLike", "Ceil", "Celu",
        "Clip", "Cos", "Cosh", "Dropout", "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid", "HardSwish", "Hardmax",
        "Identity", "InstanceNormalization", "IsInf", "IsNaN", "LayerNormalization", "LeakyRelu", "Log", "LogSoftmax",
        "LpNormalization", "LRN", "MeanVarianceNormalization", "Mish", "Neg", "Not", "PRelu", "Reciprocal", "Relu", "Round",
        "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Softmax", "Softplus", "Softsign", "Sqrt", "Swish", "Tan",
        "Tanh", "ThresholdedRelu", "GroupNormalization",
    ]

    /// Operators whose output is the broadcast of their inputs (element-wise arithmetic,
    /// comparisons, logic, Where).
    static let broadcasting: Set<String> = [
        "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Mod", "Less", "LessOrEqual", "Greater",
        "GreaterOrEqual", "Equal", "And", "Or", "Xor", "Where", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
    ]

    /// The static ONNX shape of a failed node's output `index`: recorded in the file, or its
    /// first input's for a shape-preserving operator.
    func inferredShape(_ node: Onnx_NodeProto, output index: Int) -> [Int]? {
        if let dims = recordedShapes[node.output[index]] { return dims }
        guard index == 0 else { return nil }
        if Self.broadcasting.contains(node.opType) {
            // Element-wise operators and comparisons: the broadcast of their inputs' shapes.
            var shape: [Int] = []
            for name in node.input where !name.isEmpty {
                guard let dims = staticShape(of: name), let combined = try? ConstantTensor.broadcastShape(shape, dims) else { return nil }
                shape = combined
            }
            return shape
        }
        guard Self.shapePreserving.contains(node.opType), let first = node.input.first else { return nil }
        return staticShape(of: first)
    }

    /// The static ONNX shape of tensor `name` when known: a converted tensor's, a constant's, a
    /// graph input's declared one (even when refused), or one inferred for a failed node.
    func staticShape(of name: String) -> [Int]? {
        switch values[name] {
        case .tensor(let t)? where !t.isOpen: return t.onnxShape.map { $0! }
        case .constant(let c)?: return c.shape
        default: return knownShapes[name] ?? recordedShapes[name]
        }
    }

    /// After `node` failed: each output becomes a placeholder of its known shape, or blocked.
    func block(_ node: Onnx_NodeProto) {
        for (index, output) in node.output.enumerated() where !output.isEmpty {
            let inferred = inferredShape(node, output: index)
            if let inferred { knownShapes[output] = inferred }
            guard let dims = inferred, (1 ... 4).contains(dims.count) else {
                values[output] = .blocked
                continue
            }
            let shape: [Int?] = (Array(dims.dropFirst(2)) + Array(dims.dropFirst().prefix(1))).map { $0 }
            if shape.contains(0) {
                values[output] = .blocked
                continue
            }
            let label = builder.uniqueName(output)
            builder.reserve(label)
            var placeholder = ComputedTensor(label, shape)
            placeholder.isPlaceholder = true
            values[output] = .tensor(placeholder)
        }
    }

    /// The error for a graph input read only where ONNX takes a constant, else nil.
    func weightUse(_ name: String) -> String? {
        var uses: [String] = []
        for index in Set(consumers[name] ?? []).sorted() {
            if index < 0 { return nil }
            let node = graph.node[index]
            let slots = node.input.indices.filter { node.input[$0] == name }
            guard slots.allSatisfy({ Self.constantInputs[node.opType]?.contains($0) ?? false }) else { return nil }
            uses.append("input \(slots[0]) of \(describe(node))")
        }
        guard !uses.isEmpty else { return nil }
        return "input '\(name)' is a weight fed as a graph input (read as \(uses.joined(separator: ", ")), which must be a constant): export with the parameters stored in the file (torch.onnx.export(..., export_params=True)), or make it an initializer: append numpy_helper.from_array(value, '\(name)') to graph.initializer and remove '\(name)' from graph.input"
    }

    /// Whether `tensor` is held whole after a batch axis of 1 (the graph converted as one item):
    /// a whole item, or a scalar of such a graph, which has no axis to hold a batch.
    func isWholeItem(_ tensor: ComputedTensor) -> Bool {
        tensor.batchFold?.wholeItem == true || (isUnbatched && tensor.onnxRank == 0)
    }

    /// The Anvil tensor `name` holding an ONNX tensor of `shape` whole after a batch axis of 1.
    func wholeItem(_ name: String, _ shape: [Int]) -> ComputedTensor {
        ComputedTensor(name, shape.map { $0 }, permutation: Array(shape.indices).map { $0 + 1 }, anvilRank: shape.count + 1,
                       batchFold: shape.isEmpty ? nil : BatchFold(axis: 0, inner: shape[0], wholeItem: true))
    }

    /// The data inputs (tensors not given by initializers): name and ONNX shape (nil: open).
    var dataInputShapes: [(name: String, dims: [Int64?])] {
        graph.input.filter { input in
            guard input.type.isTensor else { return false }
            switch values[input.name] {
            case nil, .tensor?: return true
            default: return false
            }
        }
        .map { input in (input.name, input.type.tensorType.shape.dim.map { dim in dim.knownValue.flatMap { $0 > 0 ? $0 : nil } }) }
    }

    /// Whether every data input has a fixed shape (ONNX defines the graph at that size only).
    var inputsAreFixed: Bool {
        let inputs = dataInputShapes
        return !inputs.isEmpty && inputs.allSatisfy { !$0.dims.contains(nil) }
    }

    /// Whether the fixed-shape inputs cannot share a batch axis: first axes that differ (a mask
    /// of [T, T] beside [1, T, D]) or an input of one axis.
    var firstAxesAreNotABatch: Bool {
        guard inputsAreFixed else { return false }
        let inputs = dataInputShapes
        return Set(inputs.compactMap { $0.dims.first ?? nil }).count > 1 || inputs.contains { $0.dims.count <= 1 }
    }

    /// An error when two data inputs declare different fixed first axes: Anvil takes every
    /// input's first axis as the batch (a mask of [T, T] beside [B, T, D] has none).
    func checkBatchAgreement() throws {
        guard !isUnbatched else { return }
        var first: (name: String, extent: Int64)?
        for input in graph.input where input.type.isTensor {
            guard case .tensor? = values[input.name], let dim = input.type.tensorType.shape.dim.first,
                  let extent = dim.knownValue, extent > 0 else { continue }
            if let first, first.extent != extent {
                throw ImportFailure("inputs '\(first.name)' and '\(input.name)' have first axes \(first.extent) and \(extent); Anvil takes every input's first axis as the batch, so they must agree")
            }
            if first == nil { first = (input.name, extent) }
        }
    }

    /// Adds a graph input: [N, C, H, W], [N, C, L] or [N, F]; open sizes stay open.
    func addInput(_ input: Onnx_ValueInfoProto) throws {
        guard input.type.isTensor else {
            throw ImportFailure("input '\(input.name)' is not a tensor (a sequence, map or optional)")
        }
        let tensorType = input.type.tensorType
        guard let elementType = TensorDecoding.engineType(tensorType.elemType) else {
            throw ImportFailure("input '\(input.name)' holds \(TensorDecoding.typeName(tensorType.elemType)) values; Anvil's inputs are floating point, integers or truth values")
        }
        let dims: [Int?] = try tensorType.shape.dim.map { dim in
            // paddle2onnx and some TensorFlow exporters write an open dimension as -1, others as 0
            // (an input of no values has nothing to infer on).
            guard let value = dim.knownValue, value != -1, value != 0 else { return nil }
            guard value > 0, value <= 1 << 24 else {
                throw ImportFailure("input '\(input.name)' has dimension \(value) in its shape (at most \(1 << 24))")
            }
            return Int(value)
        }
        let name = builder.uniqueName(input.name)
        if isUnbatched, !dims.contains(where: { $0 == nil }) {
            let whole = dims.map { $0! }
            try builder.addInput(name, shape: whole, elementType: elementType)
            values[input.name] = .tensor(wholeItem(name, whole))
            return
        }
        switch dims.count {
        case 4:
            var (c, h, w) = (dims[1], dims[2], dims[3])
            if let given = inputShape { (c, h, w) = (given.0, given.1, given.2) }
            guard let channels = c else {
                throw ImportFailure("input '\(input.name)' has open channels \(Self.text(dims)); pass --input-shape C,H,W")
            }
            try builder.addInput(name, shape: [h, w, channels], elementType: elementType)
            values[input.name] = .tensor(ComputedTensor(name, [h, w, channels]))
        case 3 where dims[1] != nil:
            try builder.addInput(name, shape: [dims[2], dims[1]], elementType: elementType)
            values[input.name] = .tensor(ComputedTensor(name, [dims[2], dims[1]]))
        case 1, 2, 5 ... Shape.maximumRank:
            // A batch of scalars, of vectors, or of tensors of rank 4 and more: held in ONNX's order.
            let rest = Array(dims.dropFirst())
            try builder.addInput(name, shape: rest, elementType: elementType)
            values[input.name] = .tensor(ComputedTensor(name, rest))
        case 0:
            throw ImportFailure("input '\(input.name)' is a scalar (no axes); Anvil's inputs have a batch axis first (if '\(input.name)' is a weight or a setting, store it as an initializer)")
        default:
            throw ImportFailure("input '\(input.name)' has shape \(Self.text(dims)), an NCL sequence with open channels (axis 1); export it with the channels fixed")
        }
    }

    /// One error listing every blocker.
    static func blockerError(_ blockers: [String], unchecked: Int) -> ONNXImportError {
        let later = "\(unchecked) later node\(unchecked != 1 ? "s" : "") read only what \(blockers.count == 1 ? "this" : "these") could not produce and \(unchecked == 1 ? "was" : "were") not checked"
        if blockers.count == 1 {
            return ONNXImportError(blockers[0] + (unchecked > 0 ? " (\(later))" : ""), blockers: blockers)
        }
        var lines = ["\(blockers.count) blockers (every one this run found):"] + blockers.map { "  \($0)" }
        if unchecked > 0 { lines.append("  (\(later))") }
        return ONNXImportError(lines.joined(separator: "\n"), blockers: blockers)
    }

    /// Operator name -> handler.
    nonisolated(unsafe) static let handlers: [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void] = {
        var table: [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void] = [:]
        registerConstantOperators(&table)
        registerLayerOperators(&table)
        registerSpatialAndNormalizationOperators(&table)
        registerElementwiseOperators(&table)
        registerLayoutOperators(&table)
        registerShapeComputationOperators(&table)
        registerLogicOperators(&table)
        registerReductionOperators(&table)
        registerEinsumOperators(&table)
        registerIndexingOperators(&table)
        registerFunctionOperators(&table)
        registerLinearAlgebraOperators(&table)
        registerDetectionOperators(&table)
        registerUnpoolingOperators(&table)
        registerCol2ImOperators(&table)
        return table
    }()
}

extension ONNXConverter {
    /// The ONNX operators (default domain) the importer converts, sorted.
    static var supportedOperators: [String] { handlers.keys.sorted() }
}
