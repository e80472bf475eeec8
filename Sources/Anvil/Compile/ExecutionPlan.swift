/// What runs and where its data lives, decided from the graph alone (no parameters):
/// which nodes fuse into their producer, the order of steps, and the buffer slot of every
/// tensor, reused once a tensor is dead.
struct ExecutionPlan {
    /// A node that runs, with the nodes fused into it.
    struct Step {
        let node: Int
        /// A BatchNormalization node folded into this one.
        var foldedNormalization: Int?
        /// An Add node fused into this one: its other input is this step's second input, added
        /// before the activation.
        var fusedAdd: Int?
        /// An Activation node fused into this one (after the Add, if any).
        var fusedActivation: Int?
        /// A Transpose node (followed by a Flatten) folded into this Dense step: the step reads the
        /// Transpose's input and its weights are reordered instead of the values moved.
        var foldedTranspose: Int?
        /// A zero Pad node folded into this windowed step (a ``PadAbsorbingLayer``): the step
        /// reads the Pad's input and its window absorbs the pad.
        var foldedPad: Int?
        /// An Elementwise multiply fused into this step, which computes its gate (squeeze and
        /// excitation): the feature map is the step's last input and the step writes the product
        /// (``GatedKernel``); the gate itself is never stored.
        var fusedGate: Int?
        /// Channel Slices folded into this Concatenate step, by the position of the input they
        /// produced: the step reads each slice's input and joins the slice's window of channels.
        var foldedSlices: [Int: Int] = [:]
        /// A ChannelShuffle fused into this Concatenate step (after its epilogue): the
        /// concatenation writes each joined channel where the shuffle moves it (ShuffleNet's
        /// concatenation → shuffle), so the joined order is never stored.
        var fusedShuffle: Int?
        /// Whether the step only writes its node's value, known when the plan was built (a shape
        /// computation read by a layer that runs): it has no inputs.
        var writesKnownValue = false
        /// Tensors read (already resolved through fusion).
        var inputs: [Int]
        /// Tensor written.
        var output: Int
    }

    let steps: [Step]
    /// For each graph tensor, the tensor whose buffer holds it (itself unless fused away).
    let storage: [Int]
    /// Slot of each stored tensor (`-1` for tensors never stored).
    let slot: [Int]
    /// Floats per image of each slot.
    let slotSizes: [Int]

    /// Floats per image for all activation buffers.
    var floatsPerImage: Int { saturatingSum(slotSizes) }

    init(graph: Graph) {
        let tensorCount = graph.shapes.count
        var consumers = [Int](repeating: 0, count: tensorCount)
        for node in graph.nodes { for input in node.inputs { consumers[input] += 1 } }
        let outputs = Set(graph.outputs)
        /// The single node consuming `tensor`, if it has exactly one and is not a model output.
        func soleConsumer(of tensor: Int) -> Int? {
            guard consumers[tensor] == 1, !outputs.contains(tensor) else { return nil }
            return graph.nodes.firstIndex { $0.inputs.contains(tensor) }
        }

        var storage = Array(0 ..< tensorCount)
        var fused = Set<Int>()
        var steps: [Step] = []
        var transposeFolds: [Int: Int] = [:]  // Dense node -> the Transpose folded into it
        var padFolds: [Int: Int] = [:]  // windowed node -> the zero Pad folded into it
        var sliceFolds: [Int: [Int]] = [:]  // Concatenate node -> the channel Slices folded into it
        /// Whether `tensor` was computed before node `index` runs (a model input or an earlier node's output).
        func computed(_ tensor: Int, before index: Int) -> Bool {
            tensor < graph.inputCount || tensor - graph.inputCount < index
        }
        for (index, node) in graph.nodes.enumerated() where !fused.contains(index) {
            // A value known when the plan is built never runs; it is written by a step of its
            // own where a running layer reads it (below).
            if graph.values[node.output] != nil { continue }
            // A cast that changes no element (a mask to float32, int32 to int64) reads and
            // writes the same buffer: its output is its input's storage and nothing runs.
            if let cast = node.layer as? Cast, cast.onlyRenames(graph.shapes[node.inputs[0]].elementType),
               graph.values[node.inputs[0]] == nil {
                storage[node.output] = storage[node.inputs[0]]
                continue
            }
            // Transpose → Flatten → Dense: the Dense reads the untransposed values with its weights
            // reordered (as the "chw" flatten order does), so neither the Transpose nor the Flatten runs.
            if node.layer is Transpose, let flatten = soleConsumer(of: node.output),
               let flattenLayer = graph.nodes[flatten].layer as? Flatten, flattenLayer.order == .channelsLast,
               graph.shapes[graph.nodes[flatten].output].rank == 2,
               let dense = soleConsumer(of: graph.nodes[flatten].output), graph.nodes[dense].layer is Dense {
                fused.formUnion([index, flatten])
                transposeFolds[dense] = index
                continue
            }
            // A zero Pad before a convolution or counting average pooling: the layer's window
            // takes the pad into its own padding and reads the unpadded tensor.
            if let pad = (node.layer as? Pad)?.absorbablePad, let next = soleConsumer(of: node.output),
               graph.nodes[next].inputs.count == 1, let absorbing = graph.nodes[next].layer as? any PadAbsorbingLayer,
               let window = absorbing.absorbableWindow(over: graph.shapes[node.output]), window.canAbsorb(pad) {
                fused.insert(index)
                padFolds[next] = index
                continue
            }
            // A channel Slice read only by a concatenation along the channels (ShuffleNet's kept
            // half): the concatenation reads the slice's window of channels where they are.
            if let slice = node.layer as? Slice, slice.channelWindow(of: graph.shapes[node.inputs[0]]) != nil,
               let next = soleConsumer(of: node.output), let concatenate = graph.nodes[next].layer as? Concatenate,
               graph.nodes[next].inputs.count > 1, concatenate.joinsChannels(rank: graph.shapes[graph.nodes[next].output].rank) {
                fused.insert(index)
                sliceFolds[next, default: []].append(index)
                continue
            }
            var step = Step(node: index, inputs: node.inputs.map { storage[$0] }, output: node.output)
            for slice in sliceFolds[index] ?? [] {
                let position = node.inputs.firstIndex(of: graph.nodes[slice].output)!
                step.foldedSlices[position] = slice
                step.inputs[position] = storage[graph.nodes[slice].inputs[0]]
            }
            if let transpose = transposeFolds[index] {
                step.foldedTranspose = transpose
                step.inputs = [storage[graph.nodes[transpose].inputs[0]]]
            }
            if let pad = padFolds[index] {
                step.foldedPad = pad
                step.inputs = [storage[graph.nodes[pad].inputs[0]]]
            }
            var tail = node.output
            if let fusable = node.layer as? any FusableLayer, fusable.activation == .none {
                if fusable.absorbs.contains(.batchNormalization), let next = soleConsumer(of: tail),
                   graph.nodes[next].layer is BatchNormalization {
                    step.foldedNormalization = next
                    fused.insert(next)
                    tail = graph.nodes[next].output
                    storage[tail] = node.output
                }
                // A residual connection: `Add` of this output and a tensor already computed
                // (its producer comes earlier, so the other branch has run), into a layer
                // whose kernel adds it while writing its output.
                var activationDone = false
                if fusable.absorbs.contains(.residualAdd), let next = soleConsumer(of: tail), let add = graph.nodes[next].layer as? Add,
                   graph.nodes[next].inputs.count == 2, let other = graph.nodes[next].inputs.first(where: { $0 != tail }),
                   computed(other, before: index) {
                    step.fusedAdd = next
                    fused.insert(next)
                    step.inputs.append(storage[other])
                    tail = graph.nodes[next].output
                    storage[tail] = node.output
                    activationDone = add.activation != .none
                }
                if !activationDone, fusable.absorbs.contains(.activation), let next = soleConsumer(of: tail), graph.nodes[next].layer is Activation {
                    step.fusedActivation = next
                    fused.insert(next)
                    tail = graph.nodes[next].output
                    storage[tail] = node.output
                }
            }
            // ShuffleNet's concatenation along the channels → channel shuffle: one pass that
            // writes the joined channels in shuffled order instead of a copy and a permutation.
            if let concatenate = node.layer as? Concatenate, node.inputs.count > 1,
               concatenate.joinsChannels(rank: graph.shapes[node.output].rank),
               let next = soleConsumer(of: tail), graph.nodes[next].layer is ChannelShuffle {
                step.fusedShuffle = next
                fused.insert(next)
                tail = graph.nodes[next].output
                storage[tail] = node.output
            }
            // Squeeze and excitation: this step's output is a gate (smaller than the map it
            // scales) whose only use is a multiply with a map computed earlier; the step
            // multiplies the map by it as it finishes, so the gate needs no buffer nor step. Only
            // for a one-input layer: the map becomes the step's second input, and kernels of
            // several inputs (Add, Concatenate) read all of theirs.
            if node.inputs.count == 1, step.fusedAdd == nil, step.foldedTranspose == nil, let next = soleConsumer(of: tail),
               let multiply = graph.nodes[next].layer as? Elementwise, multiply.operation == .multiply,
               multiply.constant == nil, graph.nodes[next].inputs.count == 2,
               let map = graph.nodes[next].inputs.first(where: { $0 != tail }), computed(map, before: index),
               graph.shapes[tail].count < graph.shapes[map].count, graph.shapes[map].elementType == .float32,
               graph.shapes[graph.nodes[next].output] == graph.shapes[map] {
                step.fusedGate = next
                fused.insert(next)
                step.inputs.append(storage[map])
                step.output = graph.nodes[next].output
            }
            steps.append(step)
        }
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
