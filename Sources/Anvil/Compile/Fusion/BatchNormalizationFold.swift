/// A ``BatchNormalization`` after a layer that absorbs it, folded into the layer's step as a
/// per-channel affine map (``KernelContext/foldedAffine``).
struct BatchNormalizationFold: FusionRule {
    /// The BatchNormalization node.
    let node: Int
    /// The BatchNormalization layer.
    let layer: BatchNormalization

    /// Fuses the BatchNormalization that is the only reader of the step's output.
    static func fuse(into step: inout ExecutionPlan.Step, _ builder: inout PlanBuilder) {
        guard builder.absorbs(.batchNormalization, at: step), let next = builder.soleConsumer(of: builder.tail),
              let normalization = builder.graph.nodes[next].layer as? BatchNormalization else { return }
        step.fusions.append(BatchNormalizationFold(node: next, layer: normalization))
        builder.extendTail(through: next, of: step)
    }

    /// The affine map of the normalization's loaded parameters, over the layer's output.
    func fill(_ context: inout KernelContext, graph: Graph,
              parameters: [ObjectIdentifier: [ParameterKind: ParameterData]]) throws {
        let normalization = graph.nodes[node]
        let normalizationContext = KernelContext(layerName: normalization.name, inputShapes: [context.outputShape],
                                                 outputShape: graph.shapes[normalization.output], layout: context.layout,
                                                 parameters: parameters[ObjectIdentifier(layer)] ?? [:])
        context.foldedAffine = try layer.affine(normalizationContext)
    }
}
