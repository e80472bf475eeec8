// Running a compiled model: batches in and out, profiling, and the workspaces kept between runs.

extension Model {
    /// Runs a batch through a single-input, single-output model.
    public func predict(_ input: Tensor) throws -> Tensor {
        guard graph.inputCount == 1, graph.outputs.count == 1 else {
            throw AnvilError(.invalidInput, "the model has \(graph.inputCount) inputs and \(graph.outputs.count) outputs; use predict(_: [Tensor])")
        }
        return try predict([input])[0]
    }

    /// Runs a batch: one tensor per input (all with the same batch size), one per output.
    ///
    /// With open inputs the tensors' shapes set the size (the first call at a size builds its
    /// plan and kernels, see ``Model``); the outputs have the shapes of that size.
    public func predict(_ inputs: [Tensor]) throws -> [Tensor] {
        let compilation = try self.compilation()
        guard inputs.count == graph.inputCount else {
            throw AnvilError(.invalidInput, "the model has \(graph.inputCount) input(s), \(inputs.count) given")
        }
        let batch = inputs[0].batch
        for (i, tensor) in inputs.enumerated() {
            try checkInput(i, shape: tensor.shape, batch: tensor.batch, count: tensor.values.count, expectedBatch: batch)
        }
        let model = graph.inputCount == 1 ? try compilation.model(for: inputs[0].shape) : try compilation.model(for: inputs.map(\.shape))
        var results = model.outputShapes.map { Tensor(zeros: $0, batch: batch) }
        try model.run(batch: batch, fill: { buffers in
            for (buffer, tensor) in zip(buffers, inputs) {
                tensor.values.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: $0.count) }
            }
        }, drain: { buffers in
            for (i, buffer) in buffers.enumerated() {
                results[i].values.withUnsafeMutableBufferPointer { $0.baseAddress!.update(from: buffer, count: $0.count) }
            }
        })
        return results
    }

    /// Runs a batch of `batch` images of a single-input, single-output model from and into
    /// memory you own; performs no heap allocation after the first call with this batch size.
    /// A model with an open input size needs ``predict(_:shape:batch:into:)``.
    public func predict(_ input: UnsafeBufferPointer<Float>, batch: Int, into output: UnsafeMutableBufferPointer<Float>) throws {
        guard !graph.isOpen else {
            throw AnvilError(.invalidInput, "input '\(graph.inputNames[0])' has an open size \(openInputShapes[0]); use predict(_:shape:batch:into:) to give it")
        }
        try predict(input, shape: inputShapes[0], batch: batch, into: output)
    }

    /// Runs a batch of `batch` images of `shape` (one image's height × width × channels) of a
    /// single-input, single-output model from and into memory you own: `output` holds `batch`
    /// images of ``outputShapes(forInputShapes:)``. For a model with an open input size this
    /// sets the size; performs no heap allocation after the first call with this size and batch.
    public func predict(_ input: UnsafeBufferPointer<Float>, shape: Shape, batch: Int,
                        into output: UnsafeMutableBufferPointer<Float>) throws {
        let compilation = try self.compilation()
        guard graph.inputCount == 1, graph.outputs.count == 1 else {
            throw AnvilError(.invalidInput, "the model has \(graph.inputCount) inputs and \(graph.outputs.count) outputs")
        }
        try checkInput(0, shape: shape, batch: batch, count: input.count, expectedBatch: batch)
        let model = try compilation.model(for: shape)
        let outputShape = model.outputShapes[0]
        let (needed, overflow) = batch.multipliedReportingOverflow(by: outputShape.count)
        guard !overflow, output.count == needed, let outputBase = output.baseAddress, let inputBase = input.baseAddress else {
            throw AnvilError(.invalidInput, "output buffer has \(output.count) floats; batch \(batch) × \(outputShape) needs \(needed)")
        }
        try model.run(batch: batch, fill: { $0[0].update(from: inputBase, count: input.count) },
                  drain: { outputBase.update(from: $0[0], count: needed) })
    }

    /// Times each compiled step over `iterations` runs at batch size `batch` (on zero-filled
    /// inputs) and returns the medians, in execution order. A model with open inputs needs
    /// `inputShapes`, the size to time.
    public func profile(batch: Int = 1, iterations: Int = 10, inputShapes shapes: [Shape]? = nil) throws -> [LayerTiming] {
        let model = try compiledModel(batch: batch, inputShapes: shapes, purpose: "profile")
        return zip(model.stepNodes, try model.profile(batch: batch, iterations: iterations)).map { node, seconds in
            LayerTiming(name: graph.nodes[node].name, typeName: graph.nodes[node].layer.typeName, seconds: seconds)
        }
    }

    /// How `predict` runs a batch of `batch` images at `inputShapes` (needed with an open input
    /// size): `nil` when every step runs on the whole batch at once, else the first steps that run a
    /// few images at a time (``BatchPasses``). Compiles the size's kernels if they are not yet.
    public func batchPasses(batch: Int, inputShapes shapes: [Shape]? = nil) throws -> BatchPasses? {
        try compiledModel(batch: batch, inputShapes: shapes, purpose: "plan a batch").passes(batch: batch)
    }

    /// The compiled model at `shapes` (the fixed size if `nil`), for `profile` and `batchPasses`:
    /// checks that an open size has its shapes, that they fit the model, and that `batch` ≥ 1.
    private func compiledModel(batch: Int, inputShapes shapes: [Shape]?, purpose: String) throws -> CompiledModel {
        guard shapes != nil || !graph.isOpen else {
            throw AnvilError(.invalidInput, "the model has an open input size \(openInputShapes.map(\.description).joined(separator: ", ")); give the input shapes to \(purpose)")
        }
        for (i, shape) in (shapes ?? []).enumerated() where i < graph.inputCount {
            try checkInput(i, shape: shape, batch: max(batch, 1), count: shape.count * max(batch, 1), expectedBatch: max(batch, 1))
        }
        let model = try compilation().model(for: shapes ?? inputShapes)
        guard batch >= 1 else { throw AnvilError(.invalidInput, "batch must be at least 1, got \(batch)") }
        return model
    }

    /// Frees the per-batch-size buffers kept between calls (of every cached size, with open inputs).
    public func releaseWorkspaces() {
        switch try? compilation() {
        case .fixed(let model): model.releaseWorkspaces()
        case .open(let open): for model in open.cache.models { model.releaseWorkspaces() }
        case nil: break
        }
    }

    private func checkInput(_ index: Int, shape: Shape, batch: Int, count: Int, expectedBatch: Int) throws {
        let name = graph.inputNames[index]
        let expected = graph.inputPatterns[index]
        guard batch >= 1 else { throw AnvilError(.invalidInput, "input '\(name)': batch must be at least 1, got \(batch)") }
        guard batch == expectedBatch else {
            throw AnvilError(.invalidInput, "input '\(name)' has batch \(batch), the first input has \(expectedBatch)")
        }
        guard expected.accepts(shape) else {
            throw AnvilError(.invalidInput, "input '\(name)' expects images of shape \(expected), got \(shape)")
        }
        guard shape.isValid else {
            throw AnvilError(.invalidInput, "input '\(name)': invalid image shape \(shape); every dimension must be positive")
        }
        let (needed, overflow) = batch.multipliedReportingOverflow(by: shape.count)
        guard !overflow, count == needed else {
            throw AnvilError(.invalidInput, "input '\(name)': batch \(batch) × \(shape) needs \(overflow ? "too many" : String(needed)) values, got \(count)")
        }
    }
}

extension Model {
    /// Runs a batch through a single-input, single-output model without blocking the caller's
    /// thread: the pass runs on Anvil's own threads while the task is suspended, so async code (a
    /// server's request handlers) keeps Swift's cooperative pool free. Cancelling the task before
    /// the pass starts throws `CancellationError` and the pass never runs; a pass already running
    /// completes and its result is returned. Thread-safe: any number of predictions may be in
    /// flight at once; each gets exactly its own result.
    public func prediction(for input: Tensor) async throws -> Tensor {
        try await onPredictionThread { try self.predict(input) }
    }

    /// Runs a batch (one tensor per input, one per output) as ``predict(_:)-([Tensor])`` does,
    /// on Anvil's own threads while the task is suspended (see ``prediction(for:)-(Tensor)``).
    public func prediction(for inputs: [Tensor]) async throws -> [Tensor] {
        try await onPredictionThread { try self.predict(inputs) }
    }

    /// `work` on a ``PredictionThreads`` thread, the task suspended meanwhile; cancellation-aware.
    private func onPredictionThread<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
        try Task.checkCancellation()
        let job = PredictionJob(work)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { job.start($0) }
        } onCancel: {
            job.cancel()
        }
    }
}
