/// What runs and where its data lives, decided from the graph alone (no parameters):
/// which nodes fuse into the step of another (the rules of ``fusionRules``), the order of
/// steps, and the buffer slot of every tensor, reused once a tensor is dead.
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
    /// Slot of each stored tensor (`-1` for tensors never stored).
    let slot: [Int]
    /// Floats per image of each slot.
    let slotSizes: [Int]

    /// Floats per image for all activation buffers.
    var floatsPerImage: Int { saturatingSum(slotSizes) }

    /// The plan of `graph`: every node that runs makes a step, in graph order, with what the
    /// fusion rules fuse into it; buffers as ``slots(graph:steps:storage:inPlace:)`` assigns them.
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
        (slot, slotSizes) = Self.slots(graph: graph, steps: steps, storage: storage, inPlace: [])
    }

    private init(steps: [Step], storage: [Int], slot: [Int], slotSizes: [Int]) {
        self.steps = steps
        self.storage = storage
        self.slot = slot
        self.slotSizes = slotSizes
    }

    /// The same plan with the output of each step in `inPlace` written over its residual (its
    /// second input) where that is the residual's last use and nothing else reads the buffer:
    /// the kernel reads each residual value before it writes the output value in its place
    /// (``EpilogueReportingKernel/addsResidualInPlace``). One stream through memory instead of
    /// two: the output lines need no read for ownership and are the residual's, already
    /// fetched (most help where the buffers are out of cache, as in the 1×1 layers that end a
    /// ResNet block).
    func sharingResidualBuffers(graph: Graph, inPlace: Set<Int>) -> ExecutionPlan {
        guard !inPlace.isEmpty else { return self }
        let (slot, sizes) = Self.slots(graph: graph, steps: steps, storage: storage, inPlace: inPlace)
        return ExecutionPlan(steps: steps, storage: storage, slot: slot, slotSizes: sizes)
    }

    /// The buffer slot of every stored tensor and each slot's floats per image: a tensor lives
    /// from the step that writes it to the last step that reads it, and a dead tensor's slot is
    /// reused (best fit). A step in `inPlace` writes into its residual's slot when the residual
    /// dies there, is not a model input and is not also one of the step's other inputs.
    private static func slots(graph: Graph, steps: [Step], storage: [Int], inPlace: Set<Int>) -> (slot: [Int], sizes: [Int]) {
        let tensorCount = graph.shapes.count
        // Liveness: a tensor lives from the step that writes it to the last step that reads
        // it; model inputs are written before step 0, outputs live to the end.
        var lastUse = [Int](repeating: -1, count: tensorCount)
        for (position, step) in steps.enumerated() { for input in step.inputs { lastUse[input] = position } }
        for output in graph.outputs { lastUse[storage[output]] = steps.count }
        var slot = [Int](repeating: -1, count: tensorCount)
        var sizes: [Int] = []
        var free: [Int] = []
        func allocate(_ tensor: Int) {
            let size = graph.shapes[tensor].count
            // Best fit among free slots; otherwise grow the largest free one or add a slot.
            if let best = free.filter({ sizes[$0] >= size }).min(by: { sizes[$0] < sizes[$1] }) {
                slot[tensor] = best
                free.removeAll { $0 == best }
            } else if let largest = free.max(by: { sizes[$0] < sizes[$1] }) {
                sizes[largest] = size
                slot[tensor] = largest
                free.removeAll { $0 == largest }
            } else {
                slot[tensor] = sizes.count
                sizes.append(size)
            }
        }
        for input in 0 ..< graph.inputCount { allocate(input) }
        for (position, step) in steps.enumerated() {
            let residual = step.inputs.count == 2 ? step.inputs[1] : -1
            if inPlace.contains(position), residual >= graph.inputCount, residual != step.inputs[0],
               lastUse[residual] == position, graph.shapes[residual].count == graph.shapes[step.output].count {
                slot[step.output] = slot[residual]
                for tensor in Set(step.inputs) where tensor != residual && lastUse[tensor] <= position {
                    free.append(slot[tensor])
                }
                if lastUse[step.output] <= position { free.append(slot[step.output]) }
                continue
            }
            allocate(step.output)
            for tensor in Set(step.inputs) + [step.output] where lastUse[tensor] <= position {
                free.append(slot[tensor])
            }
        }
        // Inputs no step reads (a model whose output is its input) keep their slot.
        return (slot, sizes)
    }
}
