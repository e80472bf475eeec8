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
    public func predict(_ inputs: [Tensor]) throws -> [Tensor] {
        let model = try compiledModel()
        guard inputs.count == graph.inputCount else {
            throw AnvilError(.invalidInput, "the model has \(graph.inputCount) input(s), \(inputs.count) given")
        }
        let batch = inputs[0].batch
        for (i, tensor) in inputs.enumerated() {
            try checkInput(i, shape: tensor.shape, batch: tensor.batch, count: tensor.values.count, expectedBatch: batch)
        }
        var results = outputShapes.map { Tensor(zeros: $0, batch: batch) }
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
    public func predict(_ input: UnsafeBufferPointer<Float>, batch: Int, into output: UnsafeMutableBufferPointer<Float>) throws {
        let model = try compiledModel()
        guard graph.inputCount == 1, graph.outputs.count == 1 else {
            throw AnvilError(.invalidInput, "the model has \(graph.inputCount) inputs and \(graph.outputs.count) outputs")
        }
        try checkInput(0, shape: inputShapes[0], batch: batch, count: input.count, expectedBatch: batch)
        let (needed, overflow) = batch.multipliedReportingOverflow(by: outputShapes[0].count)
        guard !overflow, output.count == needed, let outputBase = output.baseAddress, let inputBase = input.baseAddress else {
            throw AnvilError(.invalidInput, "output buffer has \(output.count) floats; batch \(batch) × \(outputShapes[0]) needs \(needed)")
        }
        try model.run(batch: batch, fill: { $0[0].update(from: inputBase, count: input.count) },
                  drain: { outputBase.update(from: $0[0], count: needed) })
    }

    /// Times each compiled step over `iterations` runs at batch size `batch` (on zero-filled
    /// inputs) and returns the medians, in execution order.
    public func profile(batch: Int = 1, iterations: Int = 10) throws -> [LayerTiming] {
        let model = try compiledModel()
        guard batch >= 1 else { throw AnvilError(.invalidInput, "batch must be at least 1, got \(batch)") }
        return zip(model.stepNodes, try model.profile(batch: batch, iterations: iterations)).map { node, seconds in
            LayerTiming(name: graph.nodes[node].name, typeName: graph.nodes[node].layer.typeName, seconds: seconds)
        }
    }

    /// Frees the per-batch-size buffers kept between calls.
    public func releaseWorkspaces() {
        (try? compiledModel())?.releaseWorkspaces()
    }

    private func checkInput(_ index: Int, shape: Shape, batch: Int, count: Int, expectedBatch: Int) throws {
        let name = graph.inputNames[index]
        let expected = graph.shapes[index]
        guard batch >= 1 else { throw AnvilError(.invalidInput, "input '\(name)': batch must be at least 1, got \(batch)") }
        guard batch == expectedBatch else {
            throw AnvilError(.invalidInput, "input '\(name)' has batch \(batch), the first input has \(expectedBatch)")
        }
        guard shape == expected else {
            throw AnvilError(.invalidInput, "input '\(name)' expects images of shape \(expected), got \(shape)")
        }
        let (needed, overflow) = batch.multipliedReportingOverflow(by: expected.count)
        guard !overflow, count == needed else {
            throw AnvilError(.invalidInput, "input '\(name)': batch \(batch) × \(expected) needs \(overflow ? "too many" : String(needed)) values, got \(count)")
        }
    }
}
