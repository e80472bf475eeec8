/// A compiled model whose inputs have an open height or width: parameters loaded once at
/// compile; for each input size met at `predict`, the graph's shapes, the execution plan and
/// the kernels (convolution algorithms depend on sizes) are built on first use and kept in a
/// ``SizeCache`` of at most `cachedSizes` sizes, the least recently used dropped first.
///
/// Kernels of different sizes share their reordered, packed and transformed weights
/// (``SharedKernelData``), and a step whose shapes do not change with the size (a classifier
/// head after global pooling) reuses the kernel of a cached size. Thread-safe: a size is built
/// under a lock, while predictions at sizes already cached only look them up.
final class OpenCompiledModel: Sendable {
    let graph: Graph
    let layout: WeightLayout
    let parameters: [ObjectIdentifier: [ParameterKind: ParameterData]]
    /// Where transformed weights are kept between compiles, if anywhere.
    let weightCache: WeightCache?
    /// What the kernels of every size share.
    let shared = SharedKernelData()
    /// The compiled models of the sizes used most recently.
    let cache: SizeCache
    /// Held while a size is built, so two threads meeting the same new size build it once.
    private let building = TracedMutex(())

    init(graph: Graph, layout: WeightLayout, parameters: [ObjectIdentifier: [ParameterKind: ParameterData]], cachedSizes: Int,
         weightCache: WeightCache? = nil) {
        self.graph = graph
        self.weightCache = weightCache
        self.layout = layout
        self.parameters = parameters
        self.cache = SizeCache(capacity: max(1, cachedSizes))
    }

    /// The compiled model for one input of `shape` (no allocation when the size is cached).
    func model(for shape: Shape) throws -> CompiledModel {
        try cache.find { $0.count == 1 && $0[0] == shape } ?? build([shape])
    }

    /// The compiled model for inputs of `shapes`.
    func model(for shapes: [Shape]) throws -> CompiledModel {
        try cache.find { $0 == shapes } ?? build(shapes)
    }

    private func build(_ shapes: [Shape]) throws -> CompiledModel {
        try building.withLock { _ throws -> CompiledModel in
            if let model = cache.find({ $0 == shapes }) { return model }
            let resolved = try graph.resolved(inputShapes: shapes)
            let plan = ExecutionPlan(graph: resolved)
            let sizes = shapes.map { "\($0.height)×\($0.width)" }.joined(separator: ", ")
            guard plan.storedFloatsPerImage < Int.max / 16 else {
                throw AnvilError(.invalidInput, "input size \(sizes): the activations of one image are too large to allocate")
            }
            let steps: [CompiledModel.Step]
            do {
                steps = try Compiler.buildSteps(graph: resolved, plan: plan, layout: layout, parameters: parameters,
                                                shared: shared, reusing: cache.models, weightCache: weightCache)
            } catch let error as AnvilError {
                throw AnvilError(error.code, "input size \(sizes): \(error.message)")
            }
            let model = CompiledModel(graph: resolved, plan: plan, steps: steps)
            cache.insert(shapes, model)
            return model
        }
    }
}

/// The compiled models of the input sizes used most recently, at most `capacity` of them: a
/// new size beyond that drops the least recently used one (its buffers are freed once no run
/// holds it). Fixed storage under a mutex, so a hit performs no allocation.
final class SizeCache: Sendable {
    private struct Entries: ~Copyable {
        let capacity: Int
        /// The input shapes of `models[i]` (initialised for `0 ..< count`).
        let keys: UnsafeMutablePointer<[Shape]>
        let models: UnsafeMutablePointer<Unmanaged<CompiledModel>>
        let lastUse: UnsafeMutablePointer<UInt64>
        var count = 0
        var clock: UInt64 = 0

        init(capacity: Int) {
            self.capacity = capacity
            keys = .allocate(capacity: capacity)
            models = .allocate(capacity: capacity)
            lastUse = .allocate(capacity: capacity)
        }

        /// Marks entry `index` used and returns its model, retained for the caller.
        mutating func hit(_ index: Int) -> CompiledModel {
            clock &+= 1
            lastUse[index] = clock
            return models[index].takeUnretainedValue()
        }

        deinit {
            for index in 0 ..< count { models[index].release() }
            keys.deinitialize(count: count)
            keys.deallocate()
            models.deallocate()
            lastUse.deallocate()
        }
    }

    private let entries: TracedMutex<Entries>

    /// The most sizes kept.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        entries = TracedMutex(Entries(capacity: capacity))
    }

    /// The cached model whose input shapes `matches` accepts (marked used), if any.
    func find(_ matches: ([Shape]) -> Bool) -> CompiledModel? {
        entries.withLock { entries -> CompiledModel? in
            for index in 0 ..< entries.count where matches(entries.keys[index]) { return entries.hit(index) }
            return nil
        }
    }

    /// Keeps `model` for `shapes`, dropping the least recently used size when full.
    func insert(_ shapes: [Shape], _ model: CompiledModel) {
        entries.withLock { entries in
            var index = entries.count
            if entries.count == entries.capacity {
                index = (0 ..< entries.count).min { entries.lastUse[$0] < entries.lastUse[$1] }!
                entries.models[index].release()
                entries.keys[index] = shapes
            } else {
                (entries.keys + index).initialize(to: shapes)
                entries.count += 1
            }
            entries.models[index] = Unmanaged.passRetained(model)
            _ = entries.hit(index)
        }
    }

    /// Every cached model.
    var models: [CompiledModel] {
        entries.withLock { entries in (0 ..< entries.count).map { entries.models[$0].takeUnretainedValue() } }
    }

    /// The cached input sizes, most recently used first.
    var shapes: [[Shape]] {
        entries.withLock { entries in
            (0 ..< entries.count).sorted { entries.lastUse[$0] > entries.lastUse[$1] }.map { entries.keys[$0] }
        }
    }
}
