/// Squeeze and excitation: an ``Elementwise`` multiply fused into the step that computes its
/// gate. The gate (smaller than the map it scales) is used only by the multiply with a map
/// computed earlier; the step multiplies the map by it as it finishes (``GatedKernel``), so
/// the gate needs no buffer nor step. The map is the step's last input; the step writes the
/// product.
struct SqueezeExcitationGateFusion: FusionRule {
    /// The multiply node.
    let node: Int
    /// The multiply layer.
    let layer: Elementwise

    /// Fuses the multiply of the tail by a larger float32 map of the product's shape, computed
    /// earlier. Only for a one-input layer: the map becomes the step's second input, and
    /// kernels of several inputs (Add, Concatenate) read all of theirs.
    static func fuse(into step: inout ExecutionPlan.Step, _ builder: inout PlanBuilder) {
        let graph = builder.graph, tail = builder.tail
        guard graph.nodes[step.node].inputs.count == 1, step.fusions(ResidualAddFusion.self).isEmpty,
              step.fusions(TransposeFlattenFold.self).isEmpty, let next = builder.soleConsumer(of: tail),
              let multiply = graph.nodes[next].layer as? Elementwise, multiply.operation == .multiply,
              multiply.constant == nil, graph.nodes[next].inputs.count == 2,
              let map = graph.nodes[next].inputs.first(where: { $0 != tail }), builder.computed(map, before: step.node),
              graph.shapes[tail].count < graph.shapes[map].count, graph.shapes[map].elementType == .float32,
              graph.shapes[graph.nodes[next].output] == graph.shapes[map],
              // The gate multiplies in one C call per range: a broadcast of more alternations stays a step.
              Self.runsInOneCall(gate: graph.shapes[tail], map: graph.shapes[map]) else { return }
        step.fusions.append(SqueezeExcitationGateFusion(node: next, layer: multiply))
        builder.fused.insert(next)
        step.inputs.append(builder.storage[map])
        step.output = graph.nodes[next].output
    }

    /// Whether ``GatedKernel`` can multiply `map` by `gate`: their broadcast merges into the three
    /// axes one `anvil_binary` call walks.
    static func runsInOneCall(gate: Shape, map: Shape) -> Bool {
        ElementwiseKernel.broadcast(output: map, map, map.count, gate, gate.count).outer.isEmpty
    }

    /// The map, read as the last input.
    func adjustReadShapes(_ shapes: inout [Shape], graph: Graph) {
        shapes.append(graph.shapes[graph.nodes[node].output])
    }

    /// `kernel` followed by the multiply of the map by the gate it wrote.
    func finish(_ kernel: any Kernel, context: KernelContext, outputShape: Shape) throws -> any Kernel {
        try GatedKernel(inner: kernel, gate: context.outputShape, map: outputShape, activation: layer.activation)
    }
}
