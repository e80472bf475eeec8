/// A ``Transpose`` → ``Flatten`` before a ``Dense``, folded into the Dense: its step reads the
/// untransposed values with its weights reordered (as the "chw" flatten order does), so
/// neither the Transpose nor the Flatten runs.
struct TransposeFlattenFold: FusionRule {
    /// The Transpose node.
    let node: Int
    /// The Transpose's input, which the Dense reads instead.
    let untransposedTensor: Int
    /// The Transpose layer.
    let layer: Transpose

    /// Folds a Transpose read only by a channels-last Flatten to rank 2 read only by a Dense
    /// (the Flatten with it).
    static func foldIntoConsumer(at index: Int, _ builder: inout PlanBuilder) -> Bool {
        let graph = builder.graph, node = graph.nodes[index]
        guard let transpose = node.layer as? Transpose, let flatten = builder.soleConsumer(of: node.output),
              let flattenLayer = graph.nodes[flatten].layer as? Flatten, flattenLayer.order == .channelsLast,
              graph.shapes[graph.nodes[flatten].output].rank == 2,
              let dense = builder.soleConsumer(of: graph.nodes[flatten].output),
              graph.nodes[dense].layer is Dense else { return false }
        builder.fused.formUnion([index, flatten])
        builder.keep(TransposeFlattenFold(node: index, untransposedTensor: node.inputs[0], layer: transpose),
                     forStepOf: dense)
        return true
    }

    /// Points the Dense's step at the untransposed tensor.
    static func fuse(into step: inout ExecutionPlan.Step, _ builder: inout PlanBuilder) {
        for fold in builder.matches(keptFor: step.node, as: Self.self) {
            step.fusions.append(fold)
            step.inputs = [builder.storage[fold.untransposedTensor]]
        }
    }

    /// The untransposed tensor, whose shape sets the weights' order.
    func shapeDependencies(graph: Graph) -> [Int] { [untransposedTensor] }

    /// Where each value of the flattened input is in the untransposed tensor (``KernelContext/inputOrder``).
    func fill(_ context: inout KernelContext, graph: Graph,
              parameters: [ObjectIdentifier: [ParameterKind: ParameterData]]) {
        context.inputOrder = layer.gatherOrder(input: graph.shapes[untransposedTensor])
    }
}
