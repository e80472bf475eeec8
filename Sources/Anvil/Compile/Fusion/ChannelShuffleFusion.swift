/// ShuffleNet's concatenation along the channels → ``ChannelShuffle``, fused into the
/// ``Concatenate``: one pass that writes the joined channels in shuffled order instead of a
/// copy and a permutation.
struct ChannelShuffleFusion: FusionRule {
    /// The ChannelShuffle node.
    let node: Int
    /// The ChannelShuffle layer.
    let layer: ChannelShuffle

    /// Fuses the ChannelShuffle that is the only reader of a concatenation of several inputs
    /// along the channels (after its epilogue).
    static func fuse(into step: inout ExecutionPlan.Step, _ builder: inout PlanBuilder) {
        let graph = builder.graph, node = graph.nodes[step.node]
        guard let concatenate = node.layer as? Concatenate, node.inputs.count > 1,
              concatenate.joinsChannels(rank: graph.shapes[node.output].rank),
              let next = builder.soleConsumer(of: builder.tail),
              let shuffle = graph.nodes[next].layer as? ChannelShuffle else { return }
        step.fusions.append(ChannelShuffleFusion(node: next, layer: shuffle))
        builder.extendTail(through: next, of: step)
    }

    /// The shuffle's groups (``KernelContext/fusedShuffleGroups``).
    func fill(_ context: inout KernelContext, graph: Graph,
              parameters: [ObjectIdentifier: [ParameterKind: ParameterData]]) {
        context.fusedShuffleGroups = layer.groups
    }

    /// `kernel`, once it reports the shuffle: a shuffle cannot be applied after it in place.
    func finish(_ kernel: any Kernel, context: KernelContext, outputShape: Shape) throws -> any Kernel {
        guard (kernel as? any EpilogueReportingKernel)?.appliedShuffleGroups == layer.groups else {
            throw AnvilError(.internalError, "layer '\(context.layerName)': the compiler fused a channel shuffle of \(layer.groups) groups that its kernel does not apply")
        }
        return kernel
    }
}
