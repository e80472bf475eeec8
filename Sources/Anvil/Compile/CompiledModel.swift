import Foundation

/// A model ready to run: kernels in order and where their tensors live (``BufferPlan``).
/// Immutable, so any number of threads can run it at once; each run borrows a ``Workspace`` for
/// its batch size from a pool, so after the first call at a batch size `run` allocates nothing. A large batch runs its
/// first steps a few images at a time (``BatchPasses``).
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
    /// Where each tensor lives in a workspace.
    let buffers: BufferPlan
    /// Floats per image of a workspace's buffers.
    var floatsPerImage: Int { buffers.workspaceFloatsPerImage }
    /// Floats per image each step reads and writes, and its parameter floats (for ``BatchPasses``).
    let stepFootprints: [Int]
    let stepParameters: [Int]
    /// Idle workspaces of the batch sizes used lately (bounded in count and bytes).
    let pool = WorkspacePool()

    /// The steps of `plan` with their kernels built, and their buffers planned from what each
    /// kernel writes in place (``Kernel/inPlaceInput``).
    init(graph: Graph, plan: ExecutionPlan, steps: [Step]) {
        self.steps = steps
        self.stepNodes = plan.steps.map(\.node)
        self.inputTensors = Array(0 ..< graph.inputCount)
        self.outputTensors = graph.outputs.map { plan.storage[$0] }
        self.shapes = graph.shapes
        self.outputShapes = graph.outputs.map { graph.shapes[$0] }
        self.buffers = BufferPlan(graph: graph, plan: plan, inPlaceInputs: steps.map(\.kernel.inPlaceInput))
        self.stepFootprints = steps.map { saturatingSum($0.inputShapes.map(\.count) + [$0.outputShape.count]) }
        self.stepParameters = plan.steps.map { step in
            let node = graph.nodes[step.node]
            return saturatingSum(node.layer.parameters(for: node.inputs.map { graph.shapes[$0] }).map(\.count))
        }
    }

    /// How a batch of `batch` images runs: which first steps go a few images at a time.
    func passes(batch: Int) -> BatchPasses? {
        BatchPasses.plan(footprints: stepFootprints, parameters: stepParameters, batch: batch,
                         budgetBytes: BatchPasses.budgetOverride ?? BatchPasses.defaultBudgetBytes)
    }

    /// Runs the model. `fill` copies the inputs into the workspace's input buffers, `drain`
    /// reads the outputs; both get one pointer per input/output.
    func run(batch: Int, fill: ([UnsafeMutablePointer<Float>]) -> Void, drain: ([UnsafePointer<Float>]) -> Void) throws {
        let workspace = try take(batch: batch)
        fill(workspace.inputs)
        execute(workspace) { index, io in steps[index].kernel.run(io) }
        drain(workspace.outputs)
        give(workspace)
    }

    /// Calls `runStep` with every step's index and arguments in order, the first steps pass by
    /// pass when the workspace has passes.
    private func execute(_ workspace: Workspace, _ runStep: (Int, KernelIO) -> Void) {
        var first = 0
        if let passes = workspace.passes {
            passes.run(runStep)
            first = passes.plan.stepCount
        }
        for index in first ..< steps.count { runStep(index, workspace.io[index]) }
    }

    /// Runs the steps `iterations` times on a workspace for `batch` and returns each step's
    /// median time in seconds, summed over its passes (inputs are whatever the workspace holds).
    func profile(batch: Int, iterations: Int) throws -> [Double] {
        let workspace = try take(batch: batch)
        defer { give(workspace) }
        var samples = Array(repeating: [Double](), count: steps.count)
        let clock = ContinuousClock()
        for _ in 0 ..< max(1, iterations) {
            var times = Array(repeating: 0.0, count: steps.count)
            execute(workspace) { index, io in
                let elapsed = clock.measure { steps[index].kernel.run(io) }
                times[index] += Double(elapsed.components.attoseconds) * 1e-18 + Double(elapsed.components.seconds)
            }
            for index in times.indices { samples[index].append(times[index]) }
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
        /// The bytes of `memory` and of the pass buffers.
        let byteCount: Int
        let memory: UnsafeMutablePointer<Float>
        let io: [KernelIO]
        let inputs: [UnsafeMutablePointer<Float>]
        let outputs: [UnsafePointer<Float>]
        /// The buffers that run the first steps a few images at a time, if the batch does.
        let passes: PassWorkspace?

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
            let memory = raw.bindMemory(to: Float.self, capacity: floats)
            memory.initialize(repeating: 0, count: floats)
            self.memory = memory
            func buffer(_ tensor: Int) -> UnsafeMutablePointer<Float> {
                memory + model.buffers.offset(of: tensor, batch: batch)
            }
            io = model.steps.map { step in
                KernelIO(inputs: step.inputs.map { UnsafePointer(buffer($0)) }, output: buffer(step.output),
                         scratch: memory + activations, batch: batch, inputShapes: step.inputShapes,
                         outputShape: step.outputShape)
            }
            inputs = model.inputTensors.map(buffer)
            outputs = model.outputTensors.map { UnsafePointer(buffer($0)) }
            do {
                passes = try model.passes(batch: batch).map { try PassWorkspace(model: model, passes: $0, batch: batch, whole: buffer) }
            } catch {
                LargeAllocation.release(memory, bytes: bytes)
                throw error
            }
            self.wholeBytes = bytes
            self.byteCount = bytes + (passes?.byteCount ?? 0)
        }

        /// The bytes of `memory` alone.
        private let wholeBytes: Int

        deinit { LargeAllocation.release(memory, bytes: wholeBytes) }
    }
}
