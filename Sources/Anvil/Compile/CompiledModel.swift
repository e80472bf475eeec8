import Foundation

/// A model ready to run: kernels in order and a buffer plan. Immutable, so any number of
/// threads can run it at once; each run borrows a ``Workspace`` for its batch size from a
/// pool, so after the first call at a batch size `run` allocates nothing.
final class CompiledModel: Sendable {
    struct Step: Sendable {
        let kernel: any Kernel
        let inputs: [Int]
        let output: Int
        let inputShapes: [Shape]
        let outputShape: Shape
    }

    let steps: [Step]
    /// The graph node index of each step (for names in profiles).
    let stepNodes: [Int]
    let inputTensors: [Int]
    let outputTensors: [Int]
    let shapes: [Shape]
    /// The shape of one image of each model output.
    let outputShapes: [Shape]
    let slot: [Int]
    let slotOffsets: [Int]
    let floatsPerImage: Int
    /// Idle workspaces of the batch sizes used lately (bounded in count and bytes).
    let pool = WorkspacePool()

    init(graph: Graph, plan: ExecutionPlan, steps: [Step]) {
        self.steps = steps
        self.stepNodes = plan.steps.map(\.node)
        self.inputTensors = Array(0 ..< graph.inputCount)
        self.outputTensors = graph.outputs.map { plan.storage[$0] }
        self.shapes = graph.shapes
        self.outputShapes = graph.outputs.map { graph.shapes[$0] }
        self.slot = plan.slot
        var offsets: [Int] = []
        var total = 0
        // Every buffer starts on a 64-byte boundary (sizes rounded up to 16 floats, a 64-byte
        // aligned base): a 256-bit load from a buffer 16 bytes off a boundary splits a cache
        // line every other time, which cost the depthwise kernel 15–60%.
        for size in plan.slotSizes { offsets.append(total); total += (size + 15) / 16 * 16 }
        self.slotOffsets = offsets
        self.floatsPerImage = total
    }

    /// Runs the model. `fill` copies the inputs into the workspace's input buffers, `drain`
    /// reads the outputs; both get one pointer per input/output.
    func run(batch: Int, fill: ([UnsafeMutablePointer<Float>]) -> Void, drain: ([UnsafePointer<Float>]) -> Void) throws {
        let workspace = try take(batch: batch)
        fill(workspace.inputs)
        for index in steps.indices { steps[index].kernel.run(workspace.io[index]) }
        drain(workspace.outputs)
        give(workspace)
    }

    /// Runs the steps `iterations` times on a workspace for `batch` and returns each step's
    /// median time in seconds (inputs are whatever the workspace holds).
    func profile(batch: Int, iterations: Int) throws -> [Double] {
        let workspace = try take(batch: batch)
        defer { give(workspace) }
        var samples = Array(repeating: [Double](), count: steps.count)
        let clock = ContinuousClock()
        for _ in 0 ..< max(1, iterations) {
            for (index, (step, io)) in zip(steps, workspace.io).enumerated() {
                let elapsed = clock.measure { step.kernel.run(io) }
                samples[index].append(Double(elapsed.components.attoseconds) * 1e-18 + Double(elapsed.components.seconds))
            }
        }
        return samples.map { $0.sorted()[$0.count / 2] }
    }

    /// An idle workspace for `batch`, or a new one.
    private func take(batch: Int) throws -> Workspace {
        try pool.take(batch: batch) ?? Workspace(model: self, batch: batch)
    }

    private func give(_ workspace: Workspace) {
        pool.give(workspace)
    }

    /// Frees every pooled workspace.
    func releaseWorkspaces() {
        pool.removeAll()
    }

    /// Buffers for one batch size, and the kernel arguments pointing into them.
    final class Workspace: @unchecked Sendable {
        // @unchecked Sendable: the buffers are raw pointers. A workspace is used by one run at a
        // time: `run` takes it from the pool (under the pool's lock) and gives it back when
        // done, so no two threads ever touch its memory at once; its fields are `let`s.

        let batch: Int
        /// The bytes of `memory`.
        let byteCount: Int
        let memory: UnsafeMutablePointer<Float>
        let io: [KernelIO]
        let inputs: [UnsafeMutablePointer<Float>]
        let outputs: [UnsafePointer<Float>]

        /// Allocates the buffers; throws when they would not fit in memory (a huge batch).
        init(model: CompiledModel, batch: Int) throws {
            self.batch = batch
            let scratch = model.steps.map { $0.kernel.scratchCount(batch: batch) }.max() ?? 0
            let (activations, overflow1) = model.floatsPerImage.multipliedReportingOverflow(by: batch)
            let (floats, overflow2) = activations.addingReportingOverflow(min(scratch, Int.max - 1) + 1)
            let (bytes, overflow3) = floats.multipliedReportingOverflow(by: MemoryLayout<Float>.stride)
            guard !overflow1, !overflow2, !overflow3 else {
                throw AnvilError(.invalidInput, "batch \(batch) needs more buffer memory than can be allocated (\(model.floatsPerImage) floats per image)")
            }
            // OpenBLAS takes 32-bit sizes and kernels pass it batch × pixels as a GEMM dimension:
            // a larger batch would trap converting to Int32, so it is refused, before allocating.
            let pixels = model.shapes.map { $0.height * $0.width }.max() ?? 0
            let (rows, overflow4) = pixels.multipliedReportingOverflow(by: batch)
            guard !overflow4, rows <= Int(Int32.max) else {
                throw AnvilError(.invalidInput, "batch \(batch) is too large: \(batch) × \(pixels) pixels exceeds \(Int32.max), the limit of OpenBLAS's 32-bit sizes; split the batch")
            }
            guard let raw = LargeAllocation.allocate(bytes: bytes) else {
                throw AnvilError(.invalidInput, "batch \(batch) needs more buffer memory than can be allocated (\(model.floatsPerImage) floats per image)")
            }
            self.byteCount = bytes
            let memory = raw.bindMemory(to: Float.self, capacity: floats)
            memory.initialize(repeating: 0, count: floats)
            self.memory = memory
            func buffer(_ tensor: Int) -> UnsafeMutablePointer<Float> {
                memory + model.slotOffsets[model.slot[tensor]] * batch
            }
            io = model.steps.map { step in
                KernelIO(inputs: step.inputs.map { UnsafePointer(buffer($0)) }, output: buffer(step.output),
                         scratch: memory + activations, batch: batch, inputShapes: step.inputShapes,
                         outputShape: step.outputShape)
            }
            inputs = model.inputTensors.map(buffer)
            outputs = model.outputTensors.map { UnsafePointer(buffer($0)) }
        }

        deinit { LargeAllocation.release(memory, bytes: byteCount) }
    }
}
