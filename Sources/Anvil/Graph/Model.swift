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

    /// Runs a batch through a single-input, single-output model.
    public func predict(_ input: Tensor) throws -> Tensor {
        guard graph.inputCount == 1, graph.outputs.count == 1 else {
            throw AnvilError(.invalidInput, "the model has \(graph.inputCount) inputs and \(graph.outputs.count) outputs; use predict(_: [Tensor])")
        }
        return try predict([input])[0]
    }

    /// Runs a batch: one tensor per input (all with the same batch size), one per output.
    public func predict(_ inputs: [Tensor]) throws -> [Tensor] {
        let model = try compiledModel()
        guard inputs.count == graph.inputCount else {
            throw AnvilError(.invalidInput, "the model has \(graph.inputCount) input(s), \(inputs.count) given")
        }
        let batch = inputs[0].batch
        for (i, tensor) in inputs.enumerated() {
            try checkInput(i, shape: tensor.shape, batch: tensor.batch, count: tensor.values.count, expectedBatch: batch)
        }
        var results = outputShapes.map { Tensor(zeros: $0, batch: batch) }
        try model.run(batch: batch, fill: { buffers in
            for (buffer, tensor) in zip(buffers, inputs) {
                tensor.values.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: $0.count) }
            }
        }, drain: { buffers in
            for (i, buffer) in buffers.enumerated() {
                results[i].values.withUnsafeMutableBufferPointer { $0.baseAddress!.update(from: buffer, count: $0.count) }
            }
        })
        return results
    }

    /// Runs a batch of `batch` images of a single-input, single-output model from and into
    /// memory you own; performs no heap allocation after the first call with this batch size.
    public func predict(_ input: UnsafeBufferPointer<Float>, batch: Int, into output: UnsafeMutableBufferPointer<Float>) throws {
        let model = try compiledModel()
        guard graph.inputCount == 1, graph.outputs.count == 1 else {
            throw AnvilError(.invalidInput, "the model has \(graph.inputCount) inputs and \(graph.outputs.count) outputs")
        }
        try checkInput(0, shape: inputShapes[0], batch: batch, count: input.count, expectedBatch: batch)
        let (needed, overflow) = batch.multipliedReportingOverflow(by: outputShapes[0].count)
        guard !overflow, output.count == needed, let outputBase = output.baseAddress, let inputBase = input.baseAddress else {
            throw AnvilError(.invalidInput, "output buffer has \(output.count) floats; batch \(batch) × \(outputShapes[0]) needs \(needed)")
        }
        try model.run(batch: batch, fill: { $0[0].update(from: inputBase, count: input.count) },
                  drain: { outputBase.update(from: $0[0], count: needed) })
    }

    /// Times each compiled step over `iterations` runs at batch size `batch` (on zero-filled
    /// inputs) and returns the medians, in execution order.
    public func profile(batch: Int = 1, iterations: Int = 10) throws -> [LayerTiming] {
        let model = try compiledModel()
        guard batch >= 1 else { throw AnvilError(.invalidInput, "batch must be at least 1, got \(batch)") }
        return zip(model.stepNodes, try model.profile(batch: batch, iterations: iterations)).map { node, seconds in
            LayerTiming(name: graph.nodes[node].name, typeName: graph.nodes[node].layer.typeName, seconds: seconds)
        }
    }

    /// Frees the per-batch-size buffers kept between calls.
    public func releaseWorkspaces() {
        compiled.withLock { $0 }?.releaseWorkspaces()
    }

    func compiledModel() throws -> CompiledModel {
        guard let model = compiled.withLock({ $0 }) else {
            throw AnvilError(.notCompiled, "the model must be compiled before predict")
        }
        return model
    }

    private func checkInput(_ index: Int, shape: Shape, batch: Int, count: Int, expectedBatch: Int) throws {
        let name = graph.inputNames[index]
        let expected = graph.shapes[index]
        guard batch >= 1 else { throw AnvilError(.invalidInput, "input '\(name)': batch must be at least 1, got \(batch)") }
        guard batch == expectedBatch else {
            throw AnvilError(.invalidInput, "input '\(name)' has batch \(batch), the first input has \(expectedBatch)")
        }
        guard shape == expected else {
            throw AnvilError(.invalidInput, "input '\(name)' expects images of shape \(expected), got \(shape)")
        }
        let (needed, overflow) = batch.multipliedReportingOverflow(by: expected.count)
        guard !overflow, count == needed else {
            throw AnvilError(.invalidInput, "input '\(name)': batch \(batch) × \(expected) needs \(overflow ? "too many" : String(needed)) values, got \(count)")
        }
    }
}
