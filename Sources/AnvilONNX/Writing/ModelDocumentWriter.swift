import Anvil
import Foundation

/// Collects inputs, layers and parameter tensors of a model file (docs/model-format.md) and
/// writes model.json + weights.bin exactly as the Python writer (Scripts/anvil_convert/writer.py)
/// does: the same names, option members, tensor order and blob layout.
struct ModelDocumentWriter {
    /// The model's name.
    var name: String
    /// The weight layout ("pytorch" for ONNX).
    var layout: String
    /// The inputs: name, shape after the batch axis (nil: open) and element type.
    private(set) var inputs: [(name: String, shape: [Int?], elementType: ElementType)] = []
    /// The layers as model-file JSON objects, in order.
    private(set) var layers: [[(String, JSONValue)]] = []
    /// The output names.
    private(set) var outputs: [String] = []
    /// The parameter tensors, in the order written.
    private(set) var tensors: [(name: String, values: [Float])] = []
    private var tensorNames: Set<String> = []
    private(set) var names: Set<String> = []

    /// An empty document named `name` with weights in `layout`.
    init(name: String, layout: String) {
        self.name = name
        self.layout = layout
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

    /// Reserves `name` (a placeholder later layers may read; never written).
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
        inputs.append((name, shape, elementType))
    }

    /// The format version the document needs: 1 (what the Python writer writes) while every
    /// input is a float32 image, sequence or vector with known channels, else 2.
    var version: Int {
        let versionOne = inputs.allSatisfy {
            $0.elementType == .float32 && (1 ... 3).contains($0.shape.count) && $0.shape.last! != nil && !($0.shape.count == 1 && $0.shape[0] == nil)
        }
        return versionOne ? 1 : ModelFile.version
    }

    /// A layer with its options (in order; nil options left out).
    mutating func addLayer(_ name: String, type: String, inputs: [String], options: [(String, JSONValue)]) throws {
        guard !names.contains(name) else { throw ImportFailure("the name '\(name)' is used twice") }
        for source in inputs where !names.contains(source) {
            throw ImportFailure("layer '\(name)' reads '\(source)', which has not been written yet")
        }
        names.insert(name)
        layers.append([("name", .string(name)), ("type", .string(type)), ("inputs", .array(inputs.map { .string($0) }))] + options)
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
    mutating func prune() throws {
        var byName: [String: [String]] = [:]
        for layer in layers {
            if case .string(let name)? = layer.first(where: { $0.0 == "name" })?.1,
               case .array(let sources)? = layer.first(where: { $0.0 == "inputs" })?.1 {
                byName[name] = sources.compactMap { if case .string(let s) = $0 { return s }; return nil }
            }
        }
        var needed: Set<String> = [], stack = outputs
        while let name = stack.popLast() {
            guard needed.insert(name).inserted else { continue }
            stack += byName[name] ?? []
        }
        let layerName: ([(String, JSONValue)]) -> String = { layer in
            if case .string(let name)? = layer.first?.1 { return name }
            return ""
        }
        let dropped = Set(layers.map(layerName).filter { !needed.contains($0) })
        layers.removeAll { dropped.contains(layerName($0)) }
        let droppedTensors = Set(dropped.flatMap { name in ParameterKind.allCases.map(\.suffix).map { "\(name)_\($0)" } })
        tensors.removeAll { droppedTensors.contains($0.name) }
    }

    /// The model-file JSON; its blob index places ``tensors`` one after another, in order.
    func document(blobName: String = "weights.bin") throws -> JSONValue {
        guard !outputs.isEmpty else { throw ImportFailure("the model has no outputs") }
        var index: [(String, JSONValue)] = []
        var offset = 0
        for (name, values) in tensors {
            index.append((name, .object([("offset", .int(offset * 4)), ("count", .int(values.count))])))
            offset += values.count
        }
        var root: [(String, JSONValue)] = [
            ("format", .string("anvil.model")), ("version", .int(version)), ("name", .string(name)),
            ("inputs", .array(inputs.map { input in
                var members: [(String, JSONValue)] = [("name", .string(input.name)), ("shape", .array(input.shape.map { $0.map(JSONValue.int) ?? .null }))]
                if input.elementType != .float32 { members.append(("elementType", .string(input.elementType.rawValue))) }
                return .object(members)
            })),
            ("layers", .array(layers.map { .object($0) })),
            ("outputs", .array(outputs.map { .string($0) })),
        ]
        if !tensors.isEmpty {
            root.append(("parameters", .object([
                ("layout", .string(layout)),
                ("source", .object([("type", .string("blob")), ("path", .string(blobName)), ("tensors", .object(index))])),
            ])))
        }
        return .object(root)
    }
}
