/// An ``ExecutionPlan`` being built, as the fusion rules see it: the graph and who reads each
/// tensor, the nodes fused so far, where each tensor is stored, and the matches kept for the
/// step of a later node.
struct PlanBuilder {
    let graph: Graph
    /// How many nodes read each tensor.
    private let consumers: [Int]
    /// The model's output tensors.
    private let outputs: Set<Int>
    /// For each graph tensor, the tensor whose buffer holds it (itself unless fused away).
    var storage: [Int]
    /// Nodes fused into the step of another node: they make no step of their own.
    var fused = Set<Int>()
    /// The last tensor the step being built computes before any gate multiplies it: its node's
    /// output, or that of the last node fused after it (``extendTail(through:of:)``).
    var tail = 0
    /// Matches waiting for the step of the node they fold into, by that node, in match order.
    private var kept: [Int: [any FusionRule]] = [:]

    /// Nothing fused yet over `graph`: every tensor in its own buffer.
    init(graph: Graph) {
        self.graph = graph
        var consumers = [Int](repeating: 0, count: graph.shapes.count)
        for node in graph.nodes { for input in node.inputs { consumers[input] += 1 } }
        self.consumers = consumers
        outputs = Set(graph.outputs)
        storage = Array(0 ..< graph.shapes.count)
    }

    /// The single node consuming `tensor`, if it has exactly one and is not a model output.
    func soleConsumer(of tensor: Int) -> Int? {
        guard consumers[tensor] == 1, !outputs.contains(tensor) else { return nil }
        return graph.nodes.firstIndex { $0.inputs.contains(tensor) }
    }

    /// Whether `tensor` was computed before node `index` runs (a model input or an earlier node's output).
    func computed(_ tensor: Int, before index: Int) -> Bool {
        tensor < graph.inputCount || tensor - graph.inputCount < index
    }

    /// Whether `step`'s layer is a ``FusableLayer`` without an activation of its own that
    /// declares `capability`: the condition of the epilogue rules.
    func absorbs(_ capability: FusionCapabilities, at step: ExecutionPlan.Step) -> Bool {
        guard let fusable = graph.nodes[step.node].layer as? any FusableLayer else { return false }
        return fusable.activation == .none && fusable.absorbs.contains(capability)
    }

    /// Keeps `match`, made at an earlier node, for the step of `node` (``matches(keptFor:as:)``).
    mutating func keep(_ match: any FusionRule, forStepOf node: Int) {
        kept[node, default: []].append(match)
    }

    /// The matches of `rule` kept for the step of `node`, in match order.
    func matches<Rule: FusionRule>(keptFor node: Int, as rule: Rule.Type) -> [Rule] {
        (kept[node] ?? []).compactMap { $0 as? Rule }
    }

    /// Fuses node `next`, which reads the tail, into `step` after the work fused so far: its
    /// output becomes the tail, held in the buffer of the step's node.
    mutating func extendTail(through next: Int, of step: ExecutionPlan.Step) {
        fused.insert(next)
        tail = graph.nodes[next].output
        storage[tail] = graph.nodes[step.node].output
    }
}
