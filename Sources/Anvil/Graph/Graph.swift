/// A network as Anvil computes it: tensors numbered inputs first, then one per node in
/// topological order, every shape inferred and every layer named.
struct Graph {
    /// One application of a layer.
    struct Node {
        let layer: any Layer
        let name: String
        let inputs: [Int]
        let output: Int
    }

    let inputNames: [String]
    let nodes: [Node]
    let outputs: [Int]
    /// The shape of every tensor. In a graph with open inputs (``isOpen``) these are the shapes
    /// at the first probe size (``probeSizes``), only good for what does not depend on the size;
    /// ``resolved(inputShapes:)`` gives the graph at a concrete size.
    let shapes: [Shape]
    /// The value of every tensor known when the plan is built (a shape computation), `nil` for
    /// the tensors computed at `predict`. Like ``shapes``, at the first probe size in an open graph.
    let values: [TensorValue?]
    /// Every tensor's shape with the dimensions that depend on an open input size as `nil`.
    let openShapes: [OpenShape]
    /// The inputs as declared (open dimensions `nil`).
    let inputPatterns: [OpenShape]

    /// True when an input has an open dimension (stored: read on allocation-free paths).
    let isOpen: Bool

    /// The two sizes open dimensions take to find which shapes depend on them: a dimension that
    /// differs between the two inferences is open. Large, unequal and rich in powers of two, so
    /// every stride divides them and no window is too large.
    static let probeSizes: [(height: Int, width: Int)] = [(512, 768), (1024, 1280)]

    var inputCount: Int { inputNames.count }

    func name(ofTensor tensor: Int) -> String {
        tensor < inputCount ? inputNames[tensor] : nodes[tensor - inputCount].name
    }

    func node(producing tensor: Int) -> Node? {
        tensor < inputCount ? nil : nodes[tensor - inputCount]
    }

    /// Collects the tensors `outputs` depend on, sorts them, names them and infers shapes.
    init(inputs: [Input], outputs: [SymbolicTensor]) throws {
        guard !inputs.isEmpty else { throw AnvilError(.invalidGraph, "a model needs at least one input") }
        guard !outputs.isEmpty else { throw AnvilError(.invalidGraph, "a model needs at least one output") }
        var index: [ObjectIdentifier: Int] = [:]
        for (i, input) in inputs.enumerated() {
            guard index.updateValue(i, forKey: ObjectIdentifier(input)) == nil else {
                throw AnvilError(.invalidGraph, "input \(i + 1) is listed twice")
            }
        }
        // Iterative post-order walk from the outputs: a node is emitted after its inputs.
        var order: [SymbolicTensor] = []
        var onPath: Set<ObjectIdentifier> = []
        var stack: [(SymbolicTensor, Bool)] = outputs.reversed().map { ($0, false) }
        while let (tensor, expanded) = stack.popLast() {
            let id = ObjectIdentifier(tensor)
            if expanded {
                onPath.remove(id)
                if index[id] == nil {
                    index[id] = inputs.count + order.count
                    order.append(tensor)
                }
                continue
            }
            if index[id] != nil { continue }
            switch tensor.origin {
            case .input(let shape, let name):
                throw AnvilError(.invalidGraph, "an output depends on input '\(name ?? "unnamed")' \(shape), which is not one of the model's inputs")
            case .layer(let layer, let sources):
                guard !onPath.contains(id) else {
                    throw AnvilError(.invalidGraph, "the graph has a cycle through layer '\(layer.name ?? layer.typeName)'")
                }
                onPath.insert(id)
                stack.append((tensor, true))
                for source in sources.reversed() { stack.append((source, false)) }
            }
        }
        // An input no output depends on is allowed (ONNX's `Shape(x)` of a fixed-size x): predict
        // checks its shape and ignores its values.

        inputNames = try Self.inputNames(inputs)
        let names = try Self.layerNames(order, reserved: Set(inputNames))
        var nodes: [Node] = []
        for (position, tensor) in order.enumerated() {
            guard case .layer(let layer, let sources) = tensor.origin else { continue }
            nodes.append(Node(layer: layer, name: names[position], inputs: sources.map { index[ObjectIdentifier($0)]! },
                              output: inputs.count + nodes.count))
        }
        self.nodes = nodes
        self.outputs = outputs.map { index[ObjectIdentifier($0)]! }
        let patterns = inputs.map(\.openShape)
        let declaredNames = inputNames
        inputPatterns = patterns
        isOpen = patterns.contains { $0.isOpen }
        for (i, input) in inputs.enumerated() {
            let pattern = input.openShape
            guard pattern.rank <= Shape.maximumRank, pattern.dimensions.allSatisfy({ ($0 ?? 1) > 0 }) else {
                throw AnvilError(.invalidShape, "input '\(inputNames[i])' has invalid shape \(pattern)")
            }
        }
        guard patterns.contains(where: \.isOpen) else {
            (shapes, values) = try Self.inferShapes(nodes: nodes, inputNames: declaredNames, inputShapes: inputs.map(\.shape))
            openShapes = shapes.map(OpenShape.init)
            return
        }
        // Open inputs: infer at two probe sizes; what differs between them is open.
        let probes = try Self.probeSizes.map { size in
            let probeShapes = patterns.map {
                $0.filled(height: size.height, width: size.width, channels: size.width)
            }
            do {
                return try Self.inferShapes(nodes: nodes, inputNames: declaredNames, inputShapes: probeShapes)
            } catch let error as AnvilError {
                throw AnvilError(error.code, "with the open input size set to \(size.height)×\(size.width) to infer shapes: \(error.message)")
            }
        }
        (shapes, values) = probes[0]
        openShapes = zip(probes[0].shapes, probes[1].shapes).map(Self.openDimensions)
    }

    /// `a` with the dimensions that differ in `b` open.
    private static func openDimensions(_ a: Shape, _ b: Shape) -> OpenShape {
        guard a.rank == b.rank else { return OpenShape(dimensions: a.dimensions.map { _ in nil }, elementType: a.elementType) }
        return OpenShape(dimensions: zip(a.dimensions, b.dimensions).map { $0 == $1 ? $0 : nil }, elementType: a.elementType)
    }

    private init(inputNames: [String], nodes: [Node], outputs: [Int], shapes: [Shape], values: [TensorValue?],
                 inputPatterns: [OpenShape]) {
        self.inputNames = inputNames
        self.nodes = nodes
        self.outputs = outputs
        self.shapes = shapes
        self.values = values
        self.openShapes = shapes.map(OpenShape.init)
        self.inputPatterns = inputPatterns
        self.isOpen = inputPatterns.contains { $0.isOpen }
    }

    /// The graph at concrete input sizes: every shape inferred for `inputShapes`. Throws when an
    /// input does not match its declared shape, or when a layer cannot take the size (naming
    /// the size and the layer).
    func resolved(inputShapes: [Shape]) throws -> Graph {
        guard inputShapes.count == inputCount else {
            throw AnvilError(.invalidInput, "the model has \(inputCount) input(s), \(inputShapes.count) given")
        }
        for (i, shape) in inputShapes.enumerated() {
            guard shape.isValid else {
                throw AnvilError(.invalidInput, "input '\(inputNames[i])': invalid image shape \(shape); every dimension must be positive")
            }
            guard inputPatterns[i].accepts(shape) else {
                throw AnvilError(.invalidInput, "input '\(inputNames[i])' expects images of shape \(inputPatterns[i]), got \(shape)")
            }
        }
        let shapes: [Shape], values: [TensorValue?]
        do {
            (shapes, values) = try Self.inferShapes(nodes: nodes, inputNames: inputNames, inputShapes: inputShapes)
        } catch let error as AnvilError {
            let sizes = inputShapes.map { "\($0.height)×\($0.width)" }.joined(separator: ", ")
            throw AnvilError(error.code, "input size \(sizes) does not fit the model: \(error.message)")
        }
        return Graph(inputNames: inputNames, nodes: nodes, outputs: outputs, shapes: shapes, values: values,
                     inputPatterns: inputShapes.map(OpenShape.init))
    }

    /// Every tensor's shape and known value, inputs first, for inputs of `inputShapes`.
    private static func inferShapes(nodes: [Node], inputNames: [String], inputShapes: [Shape]) throws -> (shapes: [Shape], values: [TensorValue?]) {
        var shapes = inputShapes
        var values = [TensorValue?](repeating: nil, count: inputShapes.count)
        for (i, shape) in shapes.enumerated() where !shape.isValid {
            throw AnvilError(.invalidShape, "input '\(inputNames[i])' has invalid shape \(shape)")
        }
        for node in nodes {
            let layer = node.layer, name = node.name
            let inputShapes = node.inputs.map { shapes[$0] }
            let inputValues = node.inputs.map { values[$0] }
            let shape: Shape, value: TensorValue?
            do {
                guard layer.inputCountRange.contains(inputShapes.count) else {
                    let range = layer.inputCountRange
                    let expected = range.upperBound == Int.max ? "at least \(range.lowerBound)" : range.count == 1 ? "\(range.lowerBound)" : "\(range.lowerBound)-\(range.upperBound)"
                    throw AnvilError(.invalidGraph, "takes \(expected) input(s), was given \(inputShapes.count)")
                }
                if !layer.acceptsTypedInputs, let typed = inputShapes.firstIndex(where: { $0.elementType != .float32 }) {
                    throw AnvilError(.invalidShape, "takes float32 tensors; input \(typed + 1) is \(inputShapes[typed].elementType)")
                }
                shape = try layer.outputShape(for: inputShapes, values: inputValues)
                value = try layer.value(for: inputShapes, values: inputValues)
                if let value, value.shape != shape {
                    throw AnvilError(.internalError, "its value has shape \(value.shape), its output shape is \(shape)")
                }
            } catch let error as AnvilError {
                throw AnvilError(error.code, "layer '\(name)' (\(layer.typeName)) on input \(inputShapes.map(\.description).joined(separator: ", ")): \(error.message)")
            }
            // An empty known value (the shape of a rank-1 tensor, an empty range) is a valid shape computation.
            guard shape.isValid || (value != nil && shape.dimensions.allSatisfy { $0 >= 0 } && shape.rank <= Shape.maximumRank) else {
                throw AnvilError(.invalidShape, "layer '\(name)' (\(layer.typeName)) on input \(inputShapes.map(\.description).joined(separator: ", ")) gives invalid shape \(shape)")
            }
            shapes.append(shape)
            values.append(value)
        }
        return (shapes, values)
    }

    private static func inputNames(_ inputs: [Input]) throws -> [String] {
        var names: [String] = []
        for (i, input) in inputs.enumerated() {
            let name = input.name ?? (inputs.count == 1 ? "input" : "input_\(i + 1)")
            guard !names.contains(name) else { throw AnvilError(.invalidGraph, "two inputs are named '\(name)'") }
            names.append(name)
        }
        return names
    }

    /// User names where given; otherwise `<prefix>_<n>`, counted per prefix in topological
    /// order, skipping names already taken. A layer instance applied twice keeps one name.
    private static func layerNames(_ order: [SymbolicTensor], reserved: Set<String>) throws -> [String] {
        var owner: [String: ObjectIdentifier] = [:]
        for name in reserved { owner[name] = ObjectIdentifier(Graph.self) }
        var layers: [(any Layer)] = []
        for tensor in order { if case .layer(let layer, _) = tensor.origin { layers.append(layer) } }
        for layer in layers {
            guard let name = layer.name else { continue }
            guard !name.isEmpty else { throw AnvilError(.invalidGraph, "a layer of type \(layer.typeName) has an empty name") }
            if let existing = owner[name], existing != ObjectIdentifier(layer) {
                throw AnvilError(.invalidGraph, "two different layers are named '\(name)'")
            }
            owner[name] = ObjectIdentifier(layer)
        }
        var assigned: [ObjectIdentifier: String] = [:]
        var counters: [String: Int] = [:]
        return layers.map { layer in
            let id = ObjectIdentifier(layer)
            if let name = layer.name { return name }
            if let name = assigned[id] { return name }
            var n = counters[layer.namePrefix, default: 0]
            var candidate: String
            repeat {
                n += 1
                candidate = "\(layer.namePrefix)_\(n)"
            } while owner[candidate] != nil
            counters[layer.namePrefix] = n
            owner[candidate] = id
            assigned[id] = candidate
            return candidate
        }
    }
}
