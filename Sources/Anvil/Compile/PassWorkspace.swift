/// The buffers that run a batch's first steps a few images at a time (``BatchPasses``): room for
/// one pass's images laid out as the model's buffer plan lays out a batch, the kernel arguments
/// of those steps for a full pass and for the last, shorter one, and the copies that move each
/// pass's inputs in from the whole batch's buffers and its results out to them.
///
/// Only what crosses the passes' edge is copied: the model inputs the passed steps read, and the
/// tensors they write that a later step reads or the model returns. The plan keeps those tensors
/// live past the passed steps, so no passed step overwrites them before they are copied out.
final class PassWorkspace: @unchecked Sendable {
    // @unchecked Sendable: raw pointers, used by one run at a time like its ``CompiledModel/Workspace``.

    /// One tensor moved between a pass's buffer and the whole batch's.
    struct Copy {
        let floatsPerImage: Int
        let pass: UnsafeMutablePointer<Float>
        let whole: UnsafeMutablePointer<Float>
    }

    let plan: BatchPasses
    let batch: Int
    /// The bytes of `memory`.
    let byteCount: Int
    let memory: UnsafeMutablePointer<Float>
    /// The arguments of steps `0 ..< plan.stepCount` for `plan.size` images.
    let io: [KernelIO]
    /// The same for the last pass's images (equal to `io` when the batch divides evenly).
    let lastIO: [KernelIO]
    /// Model inputs kept whole in the pass memory before the first pass (`pass` is the staging
    /// buffer), because a pass's results would overwrite them in the whole batch's buffers.
    let stagedInputs: [Copy]
    /// Per pass: the model inputs the passed steps read (from the staging buffer if staged).
    let inputCopies: [Copy]
    /// Per pass: the tensors written by the passed steps that a later step reads or the model returns.
    let outputCopies: [Copy]

    /// Allocates the pass buffers. `whole` gives a tensor's buffer in the whole batch's workspace.
    init(model: CompiledModel, passes: BatchPasses, batch: Int, whole: (Int) -> UnsafeMutablePointer<Float>) throws {
        self.plan = passes
        self.batch = batch
        let size = passes.size
        let lastSize = batch - (passes.count(batch: batch) - 1) * size
        let passed = model.steps[0 ..< passes.stepCount]
        let read = Set(passed.flatMap(\.inputs))
        let inputs = model.inputTensors.filter(read.contains)
        let readLater = Set(model.steps[passes.stepCount...].flatMap(\.inputs)).union(model.outputTensors)
        var outputs: [Int] = []
        for step in passed where readLater.contains(step.output) && !outputs.contains(step.output) { outputs.append(step.output) }
        // The buffer plan may give a copied-out tensor the slot of a model input that no step
        // after the passes reads: a pass's results would then overwrite images of that input
        // the later passes still copy in. Such inputs are staged whole before the first pass.
        func wholeRange(_ tensor: Int) -> Range<UnsafeMutablePointer<Float>> {
            whole(tensor) ..< whole(tensor) + batch * model.shapes[tensor].count
        }
        let staged = inputs.filter { input in outputs.contains { wholeRange($0).overlaps(wholeRange(input)) } }

        let scratch = passed.map { max($0.kernel.scratchCount(batch: size), $0.kernel.scratchCount(batch: lastSize)) }.max() ?? 0
        // The whole batch's workspace has checked these products against overflow for more images.
        let activations = model.floatsPerImage * size
        let staging = staged.map { batch * model.shapes[$0].count }
        let scratchOffset = activations + staging.reduce(0, +)
        let floats = scratchOffset + scratch + 1
        let bytes = floats * MemoryLayout<Float>.stride
        guard let raw = LargeAllocation.allocate(bytes: bytes) else {
            throw AnvilError(.invalidInput, "batch \(batch) needs more buffer memory than can be allocated (passes of \(size) images)")
        }
        self.byteCount = bytes
        let memory = raw.bindMemory(to: Float.self, capacity: floats)
        memory.initialize(repeating: 0, count: floats)
        self.memory = memory
        let scratchStart = memory + scratchOffset
        func buffer(_ tensor: Int) -> UnsafeMutablePointer<Float> {
            memory + model.buffers.offset(of: tensor, batch: size)
        }
        func arguments(images: Int) -> [KernelIO] {
            passed.map { step in
                KernelIO(inputs: step.inputs.map { UnsafePointer(buffer($0)) }, output: buffer(step.output),
                         scratch: scratchStart, batch: images, inputShapes: step.inputShapes,
                         outputShape: step.outputShape)
            }
        }
        io = arguments(images: size)
        lastIO = lastSize == size ? io : arguments(images: lastSize)

        var stagingBuffers: [Int: UnsafeMutablePointer<Float>] = [:]
        var next = memory + activations
        for (tensor, floats) in zip(staged, staging) { stagingBuffers[tensor] = next; next += floats }
        stagedInputs = staged.map { Copy(floatsPerImage: model.shapes[$0].count, pass: stagingBuffers[$0]!, whole: whole($0)) }
        inputCopies = inputs.map { Copy(floatsPerImage: model.shapes[$0].count, pass: buffer($0), whole: stagingBuffers[$0] ?? whole($0)) }
        outputCopies = outputs.map { Copy(floatsPerImage: model.shapes[$0].count, pass: buffer($0), whole: whole($0)) }
    }

    /// Runs the passed steps pass by pass: copies each pass's inputs in, calls `runStep` with each
    /// step's index and arguments, copies its results out.
    func run(_ runStep: (Int, KernelIO) -> Void) {
        for index in stagedInputs.indices {
            let copy = stagedInputs[index]
            copy.pass.update(from: copy.whole, count: batch * copy.floatsPerImage)
        }
        for pass in 0 ..< plan.count(batch: batch) {
            let start = pass * plan.size, images = min(plan.size, batch - start)
            // Index loops: a debug build's `for copy in inputCopies` allocates an iterator box.
            for index in inputCopies.indices {
                let copy = inputCopies[index]
                copy.pass.update(from: copy.whole + start * copy.floatsPerImage, count: images * copy.floatsPerImage)
            }
            let arguments = images == plan.size ? io : lastIO
            for index in arguments.indices { runStep(index, arguments[index]) }
            for index in outputCopies.indices {
                let copy = outputCopies[index]
                (copy.whole + start * copy.floatsPerImage).update(from: copy.pass, count: images * copy.floatsPerImage)
            }
        }
    }

    deinit { LargeAllocation.release(memory, bytes: byteCount) }
}
