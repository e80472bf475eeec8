/// An ``Activation`` fused into the layer before it, applied last (after a residual Add, if
/// any, unless that Add has an activation of its own).
struct ActivationFusion: FusionRule {
    /// The Activation node.
    let node: Int
    /// The Activation layer.
    let layer: Activation

    /// Fuses the Activation that is the only reader of the tail.
    static func fuse(into step: inout ExecutionPlan.Step, _ builder: inout PlanBuilder) {
        // An Add with its own activation already ends the step.
        let activationDone = step.fusions(ResidualAddFusion.self).contains { $0.layer.activation != .none }
        guard !activationDone, builder.absorbs(.activation, at: step), let next = builder.soleConsumer(of: builder.tail),
              let activation = builder.graph.nodes[next].layer as? Activation else { return }
        step.fusions.append(ActivationFusion(node: next, layer: activation))
        builder.extendTail(through: next, of: step)
    }

    /// The activation to end with (``KernelContext/fusedActivation``).
    func fill(_ context: inout KernelContext, graph: Graph,
              parameters: [ObjectIdentifier: [ParameterKind: ParameterData]]) {
        context.fusedActivation = layer.function
    }
}
