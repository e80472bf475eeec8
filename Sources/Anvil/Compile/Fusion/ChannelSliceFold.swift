/// A channel ``Slice`` read only by a ``Concatenate`` along the channels (ShuffleNet's kept
/// half), folded into the concatenation: its step reads the slice's input and joins the
/// slice's window of channels where they are.
struct ChannelSliceFold: FusionRule {
    /// The Slice node.
    let node: Int
    /// The Slice's input, which the concatenation reads instead.
    let slicedTensor: Int
    /// The position among the concatenation's inputs of the tensor the Slice produced.
    let position: Int
    /// The first channel the Slice keeps.
    let firstChannel: Int

    /// Folds a Slice of a window of channels whose only reader is a concatenation of several
    /// inputs along the channels.
    static func foldIntoConsumer(at index: Int, _ builder: inout PlanBuilder) -> Bool {
        let graph = builder.graph, node = graph.nodes[index]
        guard let slice = node.layer as? Slice, let window = slice.channelWindow(of: graph.shapes[node.inputs[0]]),
              let next = builder.soleConsumer(of: node.output), let concatenate = graph.nodes[next].layer as? Concatenate,
              graph.nodes[next].inputs.count > 1,
              concatenate.joinsChannels(rank: graph.shapes[graph.nodes[next].output].rank),
              let position = graph.nodes[next].inputs.firstIndex(of: node.output) else { return false }
        builder.fused.insert(index)
        builder.keep(ChannelSliceFold(node: index, slicedTensor: node.inputs[0], position: position,
                                      firstChannel: window.first), forStepOf: next)
        return true
    }

    /// Points the concatenation's step at the sliced tensors of the Slices folded into it.
    static func fuse(into step: inout ExecutionPlan.Step, _ builder: inout PlanBuilder) {
        for fold in builder.matches(keptFor: step.node, as: Self.self) {
            step.fusions.append(fold)
            step.inputs[fold.position] = builder.storage[fold.slicedTensor]
        }
    }

    /// The sliced tensor at the Slice's position.
    func adjustReadShapes(_ shapes: inout [Shape], graph: Graph) {
        shapes[position] = graph.shapes[slicedTensor]
    }

    /// The window of channels to read at the Slice's position (``KernelContext/foldedSliceWindows``).
    func fill(_ context: inout KernelContext, graph: Graph,
              parameters: [ObjectIdentifier: [ParameterKind: ParameterData]]) {
        context.foldedSliceWindows[position] = (firstChannel, graph.shapes[slicedTensor].channels)
    }
}
