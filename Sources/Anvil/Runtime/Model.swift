import Synchronization

/// A network: built from symbolic tensors, compiled with parameters, then run.
///
/// ```swift
/// let input = Input(width: 28, height: 28, channels: 1)
/// let output = input
///     --> Convolution(kernel: (5, 5), channels: 32, activation: .relu, name: "conv1")
///     --> MaxPooling(kernel: (2, 2), stride: (2, 2))
///     --> Dense(neurons: 10, name: "fc")
///     --> Softmax()
/// let model = try Model(input: input, output: output)
/// try model.compile(from: try DirectoryParameterSource(directory: weights))
/// let probabilities = try model.predict(images)
/// ```
///
/// A compiled model can be used from many threads at once.
///
/// An ``Input`` may leave its height and width open (`Input(channels: 3)`): the model is then
/// compiled once, parameters loaded once, and `predict` takes images of any size that fits its
/// layers. The plan, kernels and buffers of each size are built when it is first met and kept for
/// the ``defaultCachedSizes`` (or `cachedSizes` given to `compile`) sizes used most recently.
public final class Model: Sendable {
    let graph: Graph
    /// The execution plan; for a model with open inputs, its steps (the same at every size) but
    /// not its buffer sizes.
    let plan: ExecutionPlan
    private let compiled = TracedMutex<Compilation?>(nil)

    /// What `compile` made: one compiled model, or (open inputs) the per-size cache.
    enum Compilation: Sendable {
        case fixed(CompiledModel)
        case open(OpenCompiledModel)

        /// The compiled model for one input of `shape` (checked by the caller): a fixed-size
        /// model's own, or the open model's for that size (allocation-free once it is built).
        func model(for shape: Shape) throws -> CompiledModel {
            switch self {
            case .fixed(let model): return model
            case .open(let open): return try open.model(for: shape)
            }
        }

        /// The compiled model for inputs of `shapes` (checked by the caller).
        func model(for shapes: [Shape]) throws -> CompiledModel {
            switch self {
            case .fixed(let model): return model
            case .open(let open): return try open.model(for: shapes)
            }
        }
    }

    /// How many input sizes a model with open inputs keeps compiled by default (see `compile`).
    public static let defaultCachedSizes = 8

    /// Builds a model with one input and one output; throws for an impossible graph,
    /// naming the layer and the shapes at fault.
    public convenience init(input: Input, output: SymbolicTensor) throws {
        try self.init(inputs: [input], outputs: [output])
    }

    /// Builds a model with several inputs and outputs (a detector returning boxes and scores).
    /// An input no output depends on is allowed: `predict` checks its shape and ignores its values.
    public init(inputs: [Input], outputs: [SymbolicTensor]) throws {
        let graph = try Graph(inputs: inputs, outputs: outputs)
        self.graph = graph
        plan = ExecutionPlan(graph: graph)
        openInputShapes = (0 ..< graph.inputCount).map { graph.openShapes[$0] }
        openOutputShapes = graph.outputs.map { graph.openShapes[$0] }
        inputShapes = openInputShapes.map(Self.zeroOpen)
        outputShapes = openOutputShapes.map(Self.zeroOpen)
    }

    /// An open shape with its open dimensions as 0.
    static func zeroOpen(_ shape: OpenShape) -> Shape {
        shape.filled(height: 0, width: 0)
    }

    /// The shape of one image of each input (an open dimension is 0; see ``openInputShapes``).
    public let inputShapes: [Shape]
    /// The shape of one image of each output (a dimension that depends on an open input size
    /// is 0; see ``openOutputShapes`` and ``outputShapes(forInputShapes:)``).
    public let outputShapes: [Shape]
    /// The shape of one image of each input, open dimensions `nil`.
    public let openInputShapes: [OpenShape]
    /// The shape of one image of each output, dimensions that depend on an open input size `nil`.
    public let openOutputShapes: [OpenShape]
    /// True when an input's height or width is open: `predict` takes any size that fits.
    public var hasOpenInputs: Bool { graph.isOpen }

    /// The output shapes for inputs of `inputShapes` (one image each); throws when a shape does
    /// not match its input or does not fit a layer, naming the size and the layer.
    public func outputShapes(forInputShapes inputShapes: [Shape]) throws -> [Shape] {
        let resolved = try graph.resolved(inputShapes: inputShapes)
        return resolved.outputs.map { resolved.shapes[$0] }
    }
    /// The input names.
    public var inputNames: [String] { graph.inputNames }
    /// The names of the tensors returned by `predict` (layer or input names).
    public var outputNames: [String] { graph.outputs.map { graph.name(ofTensor: $0) } }

    /// Every layer application in execution order, with its resolved name and shapes. With open
    /// inputs, open dimensions are 0 in the shapes (see ``LayerInfo/openOutputShape``), and MACs
    /// that depend on the size are 0 (``LayerInfo/macsDependOnInputSize``); ``layers(forInputShapes:)``
    /// gives them at a size.
    public var layers: [LayerInfo] {
        guard graph.isOpen else { return Self.layerInfos(graph) }
        let size = Graph.probeSizes[1]
        let other = try? graph.resolved(inputShapes: graph.inputPatterns.map {
            $0.filled(height: size.height, width: size.width, channels: size.width)
        })
        let otherInfos = other.map(Self.layerInfos)
        return Self.layerInfos(graph).enumerated().map { index, info in
            let openInputs = graph.nodes[index].inputs.map { graph.openShapes[$0] }
            let openOutput = graph.openShapes[graph.nodes[index].output]
            let macsOpen = otherInfos.map { $0[index].macs != info.macs } ?? true
            let parametersOpen = otherInfos.map { $0[index].parameters != info.parameters } ?? true
            return LayerInfo(name: info.name, layer: info.layer, inputNames: info.inputNames,
                             inputShapes: openInputs.map(Self.zeroOpen), outputShape: Self.zeroOpen(openOutput),
                             parameters: info.parameters, sharesParameters: info.sharesParameters,
                             macs: macsOpen ? 0 : info.macs, openOutputShape: openOutput,
                             macsDependOnInputSize: macsOpen, parametersDependOnInputSize: parametersOpen)
        }
    }

    /// Every layer application at concrete input sizes (for a model with open inputs; a fixed
    /// model's ``layers`` for its own sizes).
    public func layers(forInputShapes inputShapes: [Shape]) throws -> [LayerInfo] {
        Self.layerInfos(try graph.resolved(inputShapes: inputShapes))
    }

    private static func layerInfos(_ graph: Graph) -> [LayerInfo] {
        var seen = Set<ObjectIdentifier>()
        return graph.nodes.map { node in
            let inputs = node.inputs.map { graph.shapes[$0] }
            let output = graph.shapes[node.output]
            let first = seen.insert(ObjectIdentifier(node.layer)).inserted
            return LayerInfo(name: node.name, layer: node.layer, inputNames: node.inputs.map { graph.name(ofTensor: $0) },
                             inputShapes: inputs, outputShape: output,
                             parameters: first ? node.layer.parameters(for: inputs) : [],
                             sharesParameters: !first, macs: node.layer.macs(for: inputs, output: output),
                             openOutputShape: OpenShape(output), macsDependOnInputSize: false,
                             parametersDependOnInputSize: false)
        }
    }

    /// Parameters in all layers (a shared layer counts once).
    public var parameterCount: Int { saturatingSum(layers.map(\.parameterCount)) }

    /// Multiply-accumulates per image (with open inputs, only those that do not depend on the size).
    public var macs: Int { saturatingSum(layers.map(\.macs)) }

    /// Bytes of activation buffers per image, after buffer reuse, before any kernel writes in
    /// place (once compiled, an output written over its residual can save a buffer); 0 with open
    /// inputs (see ``activationBytesPerImage(forInputShapes:)``).
    public var activationBytesPerImage: Int {
        graph.isOpen ? 0 : saturatingProduct(BufferPlan(graph: graph, plan: plan).floatsPerImage, MemoryLayout<Float>.size)
    }

    /// Multiply-accumulates per image at concrete input sizes.
    public func macs(forInputShapes inputShapes: [Shape]) throws -> Int {
        saturatingSum(try layers(forInputShapes: inputShapes).map(\.macs))
    }

    /// Bytes of activation buffers per image at concrete input sizes.
    public func activationBytesPerImage(forInputShapes inputShapes: [Shape]) throws -> Int {
        let resolved = try graph.resolved(inputShapes: inputShapes)
        return saturatingProduct(BufferPlan(graph: resolved, plan: ExecutionPlan(graph: resolved)).floatsPerImage,
                                 MemoryLayout<Float>.size)
    }

    /// Whether `compile` has succeeded.
    public var isCompiled: Bool { compiled.withLock { $0 != nil } }

    /// Loads every parameter through `parameters` — called once per tensor with the layer's
    /// name, the expected element count and the kind — and prepares the kernels.
    ///
    /// On failure the model is left as it was (compiled or not).
    public func compile(layout: WeightLayout = .forge, validateParameters: Bool = false,
                        cachedSizes: Int = Model.defaultCachedSizes,
                        parameters: @escaping (String, Int, ParameterKind) throws -> ParameterData) throws {
        try compile(layout: layout, validateParameters: validateParameters, cachedSizes: cachedSizes,
                    from: ClosureParameterSource(parameters))
    }

    /// Loads every parameter from `source` and prepares the kernels. Strict: a missing
    /// tensor, a wrong size, or (when the source can list its tensors) a tensor no layer
    /// uses is an error. With `validateParameters`, NaN and infinity are errors too.
    ///
    /// On failure the model is left as it was (compiled or not).
    ///
    /// With open inputs, parameters are loaded (and checked) once here, and a layer whose
    /// parameter count depends on the open size (a `Dense` after `Flatten`) is an error; each
    /// input size's kernels are built at its first `predict` and the `cachedSizes` sizes used
    /// most recently are kept (least recently used dropped first, its buffers freed).
    ///
    /// With a `weightCache`, weights the kernels transform (Winograd filters) are kept there
    /// and mapped back by the next compile of the same weights (see ``WeightCache``).
    public func compile(layout: WeightLayout = .forge, validateParameters: Bool = false,
                        cachedSizes: Int = Model.defaultCachedSizes, weightCache: WeightCache? = nil,
                        from source: any ParameterSource) throws {
        let compiler = Compiler(graph: graph, plan: plan, layout: layout, validateParameters: validateParameters,
                                weightCache: weightCache)
        let result: Compilation
        if graph.isOpen {
            guard cachedSizes >= 1 else { throw AnvilError(.invalidOption, "cachedSizes must be at least 1, got \(cachedSizes)") }
            result = .open(try compiler.compileOpen(source, cachedSizes: cachedSizes))
        } else {
            result = .fixed(try compiler.compile(source))
        }
        compiled.withLock { $0 = result }
    }

    func compilation() throws -> Compilation {
        guard let compilation = compiled.withLock({ $0 }) else {
            throw AnvilError(.notCompiled, "the model must be compiled before predict")
        }
        return compilation
    }

    /// The input sizes whose plans and kernels are kept, most recently used first (empty for a
    /// fixed-size or uncompiled model).
    public var cachedInputShapes: [[Shape]] {
        guard let compilation = try? compilation(), case .open(let open) = compilation else { return [] }
        return open.cache.shapes
    }
}
