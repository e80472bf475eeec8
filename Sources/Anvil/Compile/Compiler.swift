/// Turns a graph and a parameter source into a ``CompiledModel``: loads and checks every
/// parameter tensor, folds and fuses, and builds the kernels. Either everything succeeds or
/// an error is thrown and nothing is kept.
struct Compiler {
    let graph: Graph
    let plan: ExecutionPlan
    let layout: WeightLayout
    let validateParameters: Bool
    /// Where transformed weights are kept between compiles, if anywhere.
    var weightCache: WeightCache? = nil

    func compile(_ source: any ParameterSource) throws -> CompiledModel {
        _ = Compute.threadCount  // settles the thread settings (OpenBLAS single-threaded) before any kernel runs
        guard plan.storedFloatsPerImage < Int.max / 16 else {
            throw AnvilError(.invalidShape, "the activations of one image are too large to allocate")
        }
        FreedHeapMemory.release()
        let parameters = try loadParameters(source)
        let compiled = CompiledModel(graph: graph, plan: plan, steps: try Self.buildSteps(
            graph: graph, plan: plan, layout: layout, parameters: parameters, shared: nil, reusing: [],
            weightCache: weightCache))
        FreedHeapMemory.release()
        return compiled
    }

    /// Compiles a graph with open inputs: checks that no layer's parameters depend on the open
    /// size (a `Dense` after a `Flatten` of an open tensor does) and loads every parameter once.
    /// Kernels are built per input size on first use (``OpenCompiledModel``).
    func compileOpen(_ source: any ParameterSource, cachedSizes: Int) throws -> OpenCompiledModel {
        _ = Compute.threadCount
        let size = Graph.probeSizes[1]
        let other = try graph.resolved(inputShapes: graph.inputPatterns.map {
            $0.filled(height: size.height, width: size.width, channels: size.width)
        })
        for (node, otherNode) in zip(graph.nodes, other.nodes) {
            let specs = node.layer.parameters(for: node.inputs.map { graph.shapes[$0] })
            let otherSpecs = otherNode.layer.parameters(for: otherNode.inputs.map { other.shapes[$0] })
            guard specs == otherSpecs else {
                let inputs = node.inputs.map { graph.openShapes[$0].description }.joined(separator: ", ")
                throw AnvilError(.invalidShape, "layer '\(node.name)' (\(node.layer.typeName)) cannot take an open input size: the size of its parameters depends on the size of its input \(inputs); fix the input's height and width, or pool globally before it")
            }
        }
        FreedHeapMemory.release()
        let parameters = try loadParameters(source)
        return OpenCompiledModel(graph: graph, layout: layout, parameters: parameters, cachedSizes: cachedSizes,
                                 weightCache: weightCache)
    }

    /// Builds the kernels of every step of `plan`. `shared` keeps what kernels of the sizes of an
    /// open model share; a step whose shapes equal those of a step of a model in `reusing` (the
    /// same graph at another size) reuses its kernel, as the kernel depends on nothing else.
    static func buildSteps(graph: Graph, plan: ExecutionPlan, layout: WeightLayout,
                           parameters: [ObjectIdentifier: [ParameterKind: ParameterData]],
                           shared: SharedKernelData?, reusing: [CompiledModel],
                           weightCache: WeightCache?) throws -> [CompiledModel.Step] {
        var steps: [CompiledModel.Step] = []
        for (position, step) in plan.steps.enumerated() {
            let node = graph.nodes[step.node]
            let loaded = parameters[ObjectIdentifier(node.layer)] ?? [:]
            var context = KernelContext(layerName: node.name, inputShapes: node.inputs.map { graph.shapes[$0] },
                                        outputShape: graph.shapes[node.output], layout: layout, parameters: loaded)
            context.inputValues = node.inputs.map { graph.values[$0] }
            context.sharedData = shared
            context.weightCache = weightCache
            context.sharedKey = String(position)
            do {
                if step.writesKnownValue, let value = graph.values[step.output] {
                    // Integers are written as floats: exact below 2^24, which shapes and indices are.
                    steps.append(CompiledModel.Step(kernel: KnownValueKernel(values: value.floatElements), inputs: [], output: step.output,
                                                    inputShapes: [], outputShape: graph.shapes[step.output]))
                    continue
                }
                // Integer and truth tensors computed at predict are held as float32 numbers; bfloat16 is not yet.
                if let typed = (node.inputs + [node.output]).first(where: { graph.values[$0] == nil && graph.shapes[$0].elementType == .bfloat16 }) {
                    throw AnvilError(.invalidShape, "tensor '\(graph.name(ofTensor: typed))' is bfloat16 and computed at predict; layers compute float32, integers and truth values")
                }
                // The shapes of the buffers the step reads and writes (what its KernelIO holds).
                var inputShapes = context.inputShapes
                for fusion in step.fusions { fusion.adjustReadShapes(&inputShapes, graph: graph) }
                let outputShape = graph.shapes[step.output]
                // A kernel built at another size is reused where every shape it depends on matches.
                let dependencies = step.fusions.flatMap { $0.shapeDependencies(graph: graph) }
                if let other = reusing.lazy.filter({ model in dependencies.allSatisfy { model.shapes[$0] == graph.shapes[$0] } })
                    .map({ $0.steps[position] })
                    .first(where: { $0.inputShapes == inputShapes && $0.outputShape == outputShape }) {
                    steps.append(CompiledModel.Step(kernel: other.kernel, inputs: step.inputs, output: step.output,
                                                    inputShapes: inputShapes, outputShape: outputShape))
                    continue
                }
                for fusion in step.fusions { try fusion.fill(&context, graph: graph, parameters: parameters) }
                var kernel: any Kernel
                if let fusable = node.layer as? any FusableLayer {
                    // The compiler, not the layer, guarantees the fused work is done.
                    let epilogue = FusedEpilogue(foldedAffine: context.foldedAffine, addsResidual: context.fusedResidual,
                                                 activation: context.fusedActivation ?? fusable.activation)
                    kernel = try epilogue.completing(try fusable.makeFusedKernel(context), layerName: node.name)
                } else {
                    kernel = try node.layer.makeKernel(context)
                }
                for fusion in step.fusions { kernel = try fusion.finish(kernel, context: context, outputShape: outputShape) }
                steps.append(CompiledModel.Step(kernel: kernel, inputs: step.inputs, output: step.output,
                                                inputShapes: inputShapes, outputShape: outputShape))
            } catch let error as AnvilError {
                throw error.message.contains("'\(node.name)'") ? error
                    : AnvilError(error.code, "layer '\(node.name)' (\(node.layer.typeName)): \(error.message)")
            }
        }
        return steps
    }

    /// Requests every parameter of every distinct layer once; checks counts, values (when
    /// asked) and that the source holds nothing unused.
    private func loadParameters(_ source: any ParameterSource) throws -> [ObjectIdentifier: [ParameterKind: ParameterData]] {
        var loaded: [ObjectIdentifier: [ParameterKind: ParameterData]] = [:]
        var specsByLayer: [ObjectIdentifier: [ParameterSpec]] = [:]
        var used = Set<String>()
        for node in graph.nodes {
            let id = ObjectIdentifier(node.layer)
            let specs = node.layer.parameters(for: node.inputs.map { graph.shapes[$0] })
            if let previous = specsByLayer[id] {
                guard previous == specs else {
                    throw AnvilError(.invalidShape, "layer '\(node.name)' is applied twice to inputs that need different parameters (\(previous.map(\.count)) vs \(specs.map(\.count)))")
                }
                continue
            }
            specsByLayer[id] = specs
            var tensors: [ParameterKind: ParameterData] = [:]
            for spec in specs {
                let request = ParameterRequest(layer: node.name, kind: spec.kind, count: spec.count)
                // Kernels hand sizes to OpenBLAS as Int32; refuse rather than trap later.
                guard spec.count <= Int(Int32.max) else {
                    throw AnvilError(.invalidShape, "\(request) exceeds \(Int32.max) values, the limit of OpenBLAS's 32-bit sizes")
                }
                let data: ParameterData
                do {
                    data = try source.data(for: request)
                } catch let error as AnvilError {
                    throw error
                } catch {
                    throw AnvilError(.missingParameter, "cannot load \(request): \(error)")
                }
                guard data.count == spec.count, spec.count == 0 || data.buffer.baseAddress != nil else {
                    throw AnvilError(.invalidParameter, "\(request) was given \(data.count) values")
                }
                if validateParameters, let bad = data.buffer.firstIndex(where: { !$0.isFinite }) {
                    throw AnvilError(.invalidParameter, "\(request) has a non-finite value \(data.buffer[bad]) at index \(bad)")
                }
                tensors[spec.kind] = data
                used.insert(source.tensorName(for: request))
            }
            loaded[id] = tensors
        }
        if let available = source.tensorNames {
            let unused = Set(available).subtracting(used).sorted()
            if !unused.isEmpty {
                let listed = unused.prefix(5).map { "'\($0)'" }.joined(separator: ", ")
                throw AnvilError(.unusedParameter, "the parameter source holds \(unused.count) tensor(s) no layer uses: \(listed)\(unused.count > 5 ? ", ..." : "")")
            }
        }
        return loaded
    }
}
