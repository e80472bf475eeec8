/// A residual connection fused into the layer before it: an ``Add`` of the step's tail and a
/// tensor already computed (its producer comes earlier, so the other branch has run), which
/// the kernel adds while writing its output. That tensor is the step's second input.
struct ResidualAddFusion: FusionRule {
    /// The Add node.
    let node: Int
    /// The Add layer.
    let layer: Add

    /// Fuses the two-input Add that is the only reader of the tail, when its other input was
    /// computed before the step's node.
    static func fuse(into step: inout ExecutionPlan.Step, _ builder: inout PlanBuilder) {
        let graph = builder.graph, tail = builder.tail
        guard builder.absorbs(.residualAdd, at: step), let next = builder.soleConsumer(of: tail),
              let add = graph.nodes[next].layer as? Add, graph.nodes[next].inputs.count == 2,
              let other = graph.nodes[next].inputs.first(where: { $0 != tail }),
              builder.computed(other, before: step.node) else { return }
        step.fusions.append(ResidualAddFusion(node: next, layer: add))
        step.inputs.append(builder.storage[other])
        builder.extendTail(through: next, of: step)
    }

    /// The residual, read as the second input.
    func adjustReadShapes(_ shapes: inout [Shape], graph: Graph) {
        shapes.append(graph.shapes[graph.nodes[node].output])
    }

    /// The residual and the Add's own activation (``KernelContext/fusedResidual``).
    func fill(_ context: inout KernelContext, graph: Graph,
              parameters: [ObjectIdentifier: [ParameterKind: ParameterData]]) {
        context.fusedResidual = true
        context.fusedActivation = layer.activation
    }
}
