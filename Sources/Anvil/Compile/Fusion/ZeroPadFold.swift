/// A zero ``Pad`` before a convolution or counting average pooling (a ``PadAbsorbingLayer``),
/// folded into it: the layer's window takes the pad into its own padding and reads the
/// unpadded tensor.
struct ZeroPadFold: FusionRule {
    /// The Pad node.
    let node: Int
    /// The Pad's input, which the windowed layer reads instead.
    let unpaddedTensor: Int
    /// The rows and columns the window absorbs.
    let pad: AbsorbedPad

    /// Folds a zero Pad whose only reader is a one-input windowed layer whose window can absorb it.
    static func foldIntoConsumer(at index: Int, _ builder: inout PlanBuilder) -> Bool {
        let graph = builder.graph, node = graph.nodes[index]
        guard let pad = (node.layer as? Pad)?.absorbablePad, let next = builder.soleConsumer(of: node.output),
              graph.nodes[next].inputs.count == 1, let absorbing = graph.nodes[next].layer as? any PadAbsorbingLayer,
              let window = absorbing.absorbableWindow(over: graph.shapes[node.output]),
              window.canAbsorb(pad) else { return false }
        builder.fused.insert(index)
        builder.keep(ZeroPadFold(node: index, unpaddedTensor: node.inputs[0], pad: pad), forStepOf: next)
        return true
    }

    /// Points the windowed layer's step at the unpadded tensor.
    static func fuse(into step: inout ExecutionPlan.Step, _ builder: inout PlanBuilder) {
        for fold in builder.matches(keptFor: step.node, as: Self.self) {
            step.fusions.append(fold)
            step.inputs = [builder.storage[fold.unpaddedTensor]]
        }
    }

    /// The unpadded tensor.
    func adjustReadShapes(_ shapes: inout [Shape], graph: Graph) {
        shapes[0] = graph.shapes[unpaddedTensor]
    }

    /// The pad to absorb (``KernelContext/absorbedPad``).
    func fill(_ context: inout KernelContext, graph: Graph,
              parameters: [ObjectIdentifier: [ParameterKind: ParameterData]]) {
        context.absorbedPad = pad
    }
}
