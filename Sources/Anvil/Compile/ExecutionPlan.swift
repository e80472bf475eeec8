/// What runs, decided from the graph alone (no parameters): which nodes fuse into the step of
/// another (the rules of ``fusionRules``), the order of steps, and which tensor's buffer holds
/// each tensor (a fused node's output is its step's; a cast that only renames its input's).
struct ExecutionPlan {
    /// A node that runs, with the nodes fused into it.
    struct Step {
        let node: Int
        /// What is fused into this step, in the order the rules matched it
        /// (``ExecutionPlan/fusionRules``).
        var fusions: [any FusionRule] = []
        /// Whether the step only writes its node's value, known when the plan was built (a shape
        /// computation read by a layer that runs): it has no inputs.
        var writesKnownValue = false
        /// Tensors read (already resolved through fusion).
        var inputs: [Int]
        /// Tensor written.
        var output: Int

        /// The fusions of `rule` in this step.
        func fusions<Rule: FusionRule>(_ rule: Rule.Type) -> [Rule] { fusions.compactMap { $0 as? Rule } }
    }

    /// The steps, in the order they run.
    let steps: [Step]
    /// For each graph tensor, the tensor whose buffer holds it (itself unless fused away).
    let storage: [Int]
    /// Floats per image of every tensor a step reads or writes, of the inputs and of the outputs,
    /// summed: no less than the slots of any ``BufferPlan`` of it take, whatever its kernels
    /// write in place (checked before kernels are built, so that no buffer size overflows).
    let storedFloatsPerImage: Int

    /// The plan of `graph`: every node that runs makes a step, in graph order, with what the
    /// fusion rules fuse into it. Where the tensors live is the ``BufferPlan``'s, made once the
    /// kernels have said what they write in place.
    init(graph: Graph) {
        var builder = PlanBuilder(graph: graph)
        var steps: [Step] = []
        for (index, node) in graph.nodes.enumerated() where !builder.fused.contains(index) {
            // A value known when the plan is built never runs; it is written by a step of its
            // own where a running layer reads it (below).
            if graph.values[node.output] != nil { continue }
            // A cast that changes no element (a mask to float32, int32 to int64) reads and
            // writes the same buffer: its output is its input's storage and nothing runs.
            if let cast = node.layer as? Cast, cast.onlyRenames(graph.shapes[node.inputs[0]].elementType),
               graph.values[node.inputs[0]] == nil {
                builder.storage[node.output] = builder.storage[node.inputs[0]]
                continue
            }
            if Self.fusionRules.contains(where: { $0.foldIntoConsumer(at: index, &builder) }) { continue }
            var step = Step(node: index, inputs: node.inputs.map { builder.storage[$0] }, output: node.output)
            builder.tail = node.output
            for rule in Self.fusionRules { rule.fuse(into: &step, &builder) }
            steps.append(step)
        }
        let storage = builder.storage
        // Only the steps an output depends on run (a layer read only by a shape computation does not).
        var needed = Set(graph.outputs.map { storage[$0] })
        steps = Array(steps.reversed().filter { step in
            guard needed.contains(step.output) else { return false }
            needed.formUnion(step.inputs)
            return true
        }.reversed())
        // Known values read by a step or returned: written first by steps of their own.
        let knownRead = needed.filter { $0 >= graph.inputCount && graph.values[$0] != nil }.sorted()
        steps = knownRead.map { Step(node: $0 - graph.inputCount, writesKnownValue: true, inputs: [], output: $0) } + steps
        self.steps = steps
        self.storage = storage
        var stored = Set(graph.outputs.map { storage[$0] })
        stored.formUnion(0 ..< graph.inputCount)
        for step in steps { stored.formUnion(step.inputs); stored.insert(step.output) }
        storedFloatsPerImage = saturatingSum(stored.map { graph.shapes[$0].count })
    }
}
