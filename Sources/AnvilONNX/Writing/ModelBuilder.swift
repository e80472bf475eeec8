import Anvil
import Foundation

/// The converted graph as it is built: inputs, Anvil `Layer` values by name, their parameter
/// tensors and the outputs. ``graph()`` links them into symbolic tensors; the model file is
/// then written by the engine's own coding (`Model.modelFileJSON`), so the importer has no
/// format of its own.
struct ModelBuilder {
    /// One layer as converted: its name, the layer and the names it reads.
    struct Entry {
        /// The layer's name (also the tensor it writes).
        let name: String
        /// The layer.
        let layer: any Layer
        /// The inputs or layers it reads, in order.
        let inputs: [String]
    }

    /// The model's name.
    var name: String
    /// The inputs: name and shape after the batch axis (open axes, element type).
    private(set) var inputs: [(name: String, shape: OpenShape)] = []
    /// The layers, in order.
    private(set) var layers: [Entry] = []
    /// The output names.
    private(set) var outputs: [String] = []
    /// The parameter tensors, in the order written.
    private(set) var tensors: [(name: String, values: [Float])] = []
    private var tensorNames: Set<String> = []
    private(set) var names: Set<String> = []

    /// An empty model named `name`.
    init(name: String) {
        self.name = name
    }

    /// `wanted` sanitised (letters, digits, `_ . -`), with `_2`, `_3`, ... appended if taken.
    func uniqueName(_ wanted: String) -> String {
        var cleaned = String(String.UnicodeScalarView(wanted.unicodeScalars.map { scalar in
            (scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "_.-".unicodeScalars.contains(scalar))) ? scalar : "_"
        }))
        while cleaned.hasPrefix("_") { cleaned.removeFirst() }
        while cleaned.hasSuffix("_") { cleaned.removeLast() }
        let base = cleaned.isEmpty ? "layer" : cleaned
        var name = base, k = 2
        while names.contains(name) {
            name = "\(base)_\(k)"
            k += 1
        }
        return name
    }

    /// Reserves `name` (a placeholder later layers may read; never built).
    mutating func reserve(_ name: String) {
        names.insert(name)
    }

    /// A graph input: its axes after the batch axis (0 to 7), any of them open.
    mutating func addInput(_ name: String, shape: [Int?], elementType: ElementType = .float32) throws {
        guard !names.contains(name) else { throw ImportFailure("the name '\(name)' is used twice") }
        guard shape.count < Shape.maximumRank, !shape.contains(where: { $0 != nil && $0! <= 0 }) else {
            throw ImportFailure("input '\(name)' needs 0 to \(Shape.maximumRank - 1) positive axes after the batch axis (any may be None: open), got \(shape.map { $0.map(String.init) ?? "None" })")
        }
        names.insert(name)
        inputs.append((name, OpenShape(dimensions: shape, elementType: elementType)))
    }

    /// A layer named `name` reading `inputs` (each an input or a layer added before).
    mutating func addLayer(_ name: String, _ layer: any Layer, inputs: [String]) throws {
        guard !names.contains(name) else { throw ImportFailure("the name '\(name)' is used twice") }
        for source in inputs where !names.contains(source) {
            throw ImportFailure("layer '\(name)' reads '\(source)', which has not been written yet")
        }
        names.insert(name)
        layers.append(Entry(name: name, layer: layer, inputs: inputs))
    }

    /// A parameter tensor, flattened in row-major order; an error for non-finite values.
    mutating func addTensor(_ name: String, _ values: [Float]) throws {
        guard !tensorNames.contains(name) else { throw ImportFailure("tensor '\(name)' is written twice") }
        guard values.allSatisfy(\.isFinite) else { throw ImportFailure("tensor '\(name)' has non-finite values") }
        tensorNames.insert(name)
        tensors.append((name, values))
    }

    /// The graph outputs, each an input or a layer already added.
    mutating func setOutputs(_ outputNames: [String]) throws {
        for output in outputNames where !names.contains(output) {
            throw ImportFailure("output '\(output)' is neither an input nor a layer")
        }
        outputs = outputNames
    }

    /// Drops layers (and their tensors) that no output depends on. An input no output depends on
    /// stays (a graph returning only its input's shape): `predict` takes it as ONNX Runtime does.
    mutating func prune() {
        let sources = Dictionary(layers.map { ($0.name, $0.inputs) }, uniquingKeysWith: { first, _ in first })
        var needed: Set<String> = [], stack = outputs
        while let name = stack.popLast() {
            guard needed.insert(name).inserted else { continue }
            stack += sources[name] ?? []
        }
        let dropped = Set(layers.map(\.name).filter { !needed.contains($0) })
        layers.removeAll { dropped.contains($0.name) }
        let droppedTensors = Set(dropped.flatMap { name in ParameterKind.allCases.map(\.suffix).map { "\(name)_\($0)" } })
        tensors.removeAll { droppedTensors.contains($0.name) }
    }

    /// The graph: the inputs and the outputs' symbolic tensors, every layer linked to what it
    /// reads (layers come in an order where each reads only what is already built).
    func graph() throws -> (inputs: [Input], outputs: [SymbolicTensor]) {
        guard !outputs.isEmpty else { throw ImportFailure("the model has no outputs") }
        var built: [String: SymbolicTensor] = [:]
        var graphInputs: [Input] = []
        for (name, shape) in inputs {
            let input = Input(shape: shape, name: name)
            graphInputs.append(input)
            built[name] = input
        }
        for entry in layers {
            let sources = try entry.inputs.map { source in
                guard let tensor = built[source] else {
                    throw ImportFailure("layer '\(entry.name)' reads '\(source)', which is neither an input nor a layer")
                }
                return tensor
            }
            built[entry.name] = sources.count == 1 ? (sources[0] --> entry.layer) : (sources --> entry.layer)
        }
        let graphOutputs = try outputs.map { name in
            guard let tensor = built[name] else { throw ImportFailure("output '\(name)' is neither an input nor a layer") }
            return tensor
        }
        return (graphInputs, graphOutputs)
    }
}
