/// Where every tensor an ``ExecutionPlan`` stores lives in a workspace: a slot per buffer,
/// reused once the tensor in it is dead, and the output of a step written over one of its
/// inputs when the step's kernel declares it can (``Kernel/inPlaceInput``) and that input dies
/// there.
///
/// ``CompiledModel`` makes the one that runs, once its kernels are built and have declared what
/// they write in place. Made without declarations, it is the plan before kernels are chosen,
/// whose size ``Model/activationBytesPerImage`` reports.
struct BufferPlan: Sendable {
    /// The slot of each graph tensor (`-1` for tensors never stored: fused away, held in
    /// another tensor's buffer, or known when the plan was built and read by no step).
    let slot: [Int]
    /// Floats per image of each slot.
    let slotSizes: [Int]
    /// The first float of each slot in one image's share of a workspace: sizes rounded up to
    /// 16 floats, so that every buffer starts on a 64-byte boundary of a 64-byte aligned base (a
    /// 256-bit load from a buffer 16 bytes off a boundary splits a cache line every other time,
    /// which slows the depthwise kernel markedly).
    let slotOffsets: [Int]
    /// Floats per image of a workspace's buffers, alignment included (saturated at `Int.max`,
    /// which the workspace refuses to allocate).
    let workspaceFloatsPerImage: Int
    /// For each step, the position of the input whose buffer its output is written over, or `nil`.
    let sharedInputs: [Int?]

    /// Floats per image of all the slots (without the alignment of ``slotOffsets``).
    var floatsPerImage: Int { saturatingSum(slotSizes) }

    /// The buffers of `plan` over `graph`. `inPlaceInputs` holds, for each step, the input its
    /// kernel may write its output over (``Kernel/inPlaceInput``); empty when no kernel is built.
    ///
    /// A tensor lives from the step that writes it (model inputs: before the first step) to the
    /// last step that reads it (model outputs: to the end); a step's output takes the best-fitting
    /// slot free when it runs, or grows the largest free one, or adds one. A step writes over
    /// its in-place input instead when that input dies at the step, is not a model input (the
    /// passes of a large batch copy inputs in again; ``PassWorkspace``), is no other input of the
    /// step (its kernel reads those as it likes) and holds as many values as the output.
    init(graph: Graph, plan: ExecutionPlan, inPlaceInputs: [Int?] = []) {
        precondition(inPlaceInputs.isEmpty || inPlaceInputs.count == plan.steps.count,
                     "one in-place declaration per step")
        let steps = plan.steps
        var lastUse = [Int](repeating: -1, count: graph.shapes.count)
        for (position, step) in steps.enumerated() { for input in step.inputs { lastUse[input] = position } }
        for output in graph.outputs { lastUse[plan.storage[output]] = steps.count }

        var slot = [Int](repeating: -1, count: graph.shapes.count)
        var sizes: [Int] = []
        var free: [Int] = []
        func allocate(_ tensor: Int) {
            let size = graph.shapes[tensor].count
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
        // Inputs no step reads (a model whose output is its input) keep their slot.
        for input in 0 ..< graph.inputCount { allocate(input) }
        var sharedInputs = [Int?](repeating: nil, count: steps.count)
        for (position, step) in steps.enumerated() {
            // Each tensor once, in input order: the order slots are freed in must not depend on hashing.
            var read: [Int] = []
            for input in step.inputs where !read.contains(input) { read.append(input) }
            if let shared = inPlaceInputs.isEmpty ? nil : inPlaceInputs[position], shared >= 0, shared < step.inputs.count,
               case let tensor = step.inputs[shared], tensor >= graph.inputCount,
               step.inputs.filter({ $0 == tensor }).count == 1, lastUse[tensor] == position,
               graph.shapes[tensor].count == graph.shapes[step.output].count {
                slot[step.output] = slot[tensor]
                sharedInputs[position] = shared
                read.removeAll { $0 == tensor }
            } else {
                allocate(step.output)
            }
            read.append(step.output)
            for tensor in read where lastUse[tensor] <= position { free.append(slot[tensor]) }
        }
        self.slot = slot
        self.slotSizes = sizes
        self.sharedInputs = sharedInputs
        var offsets: [Int] = []
        var total = 0
        for size in sizes {
            offsets.append(total)
            let rounded = size > Int.max - 15 ? Int.max : (size + 15) / 16 * 16
            total = saturatingSum([total, rounded])
        }
        self.slotOffsets = offsets
        self.workspaceFloatsPerImage = total
    }

    /// The first float of `tensor`'s buffer in a workspace for `batch` images.
    func offset(of tensor: Int, batch: Int) -> Int {
        slotOffsets[slot[tensor]] * batch
    }
}
