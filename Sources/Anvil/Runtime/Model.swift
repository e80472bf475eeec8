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
public final class Model: Sendable {
    let graph: Graph
    let plan: ExecutionPlan
    private let compiled = TracedMutex<CompiledModel?>(nil)

    /// Builds a model with one input and one output; throws for an impossible graph,
    /// naming the layer and the shapes at fault.
    public convenience init(input: Input, output: SymbolicTensor) throws {
        try self.init(inputs: [input], outputs: [output])
    }

    /// Builds a model with several inputs and outputs (a detector returning boxes and scores).
    public init(inputs: [Input], outputs: [SymbolicTensor]) throws {
        let graph = try Graph(inputs: inputs, outputs: outputs)
        self.graph = graph
        plan = ExecutionPlan(graph: graph)
        inputShapes = (0 ..< graph.inputCount).map { graph.shapes[$0] }
        outputShapes = graph.outputs.map { graph.shapes[$0] }
    }

    /// The shape of one image of each input.
    public let inputShapes: [Shape]
    /// The shape of one image of each output.
    public let outputShapes: [Shape]
    /// The input names.
    public var inputNames: [String] { graph.inputNames }
    /// The names of the tensors returned by `predict` (layer or input names).
    public var outputNames: [String] { graph.outputs.map { graph.name(ofTensor: $0) } }

    /// Every layer application in execution order, with its resolved name and shapes.
    public var layers: [LayerInfo] {
        var seen = Set<ObjectIdentifier>()
        return graph.nodes.map { node in
            let inputs = node.inputs.map { graph.shapes[$0] }
            let output = graph.shapes[node.output]
            let first = seen.insert(ObjectIdentifier(node.layer)).inserted
            return LayerInfo(name: node.name, layer: node.layer, inputNames: node.inputs.map { graph.name(ofTensor: $0) },
                             inputShapes: inputs, outputShape: output,
                             parameters: first ? node.layer.parameters(for: inputs) : [],
                             sharesParameters: !first, macs: node.layer.macs(for: inputs, output: output))
        }
    }

    /// Parameters in all layers (a shared layer counts once).
    public var parameterCount: Int { saturatingSum(layers.map(\.parameterCount)) }

    /// Multiply-accumulates per image.
    public var macs: Int { saturatingSum(layers.map(\.macs)) }

    /// Bytes of activation buffers per image, after buffer reuse (the peak Anvil allocates).
    public var activationBytesPerImage: Int { saturatingProduct(plan.floatsPerImage, MemoryLayout<Float>.size) }

    /// Whether `compile` has succeeded.
    public var isCompiled: Bool { compiled.withLock { $0 != nil } }

    /// Loads every parameter through `parameters` — called once per tensor with the layer's
    /// name, the expected element count and the kind — and prepares the kernels.
    ///
    /// On failure the model is left as it was (compiled or not).
    public func compile(layout: WeightLayout = .forge, validateParameters: Bool = false,
                        parameters: @escaping (String, Int, ParameterKind) throws -> ParameterData) throws {
        try compile(layout: layout, validateParameters: validateParameters, from: ClosureParameterSource(parameters))
    }

    /// Loads every parameter from `source` and prepares the kernels. Strict: a missing
    /// tensor, a wrong size, or (when the source can list its tensors) a tensor no layer
    /// uses is an error. With `validateParameters`, NaN and infinity are errors too.
    ///
    /// On failure the model is left as it was (compiled or not).
    public func compile(layout: WeightLayout = .forge, validateParameters: Bool = false,
                        from source: any ParameterSource) throws {
        let result = try Compiler(graph: graph, plan: plan, layout: layout, validateParameters: validateParameters)
            .compile(source)
        compiled.withLock { $0 = result }
    }

    func compiledModel() throws -> CompiledModel {
        guard let model = compiled.withLock({ $0 }) else {
            throw AnvilError(.notCompiled, "the model must be compiled before predict")
        }
        return model
    }
}
