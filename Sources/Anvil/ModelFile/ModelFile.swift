import Foundation

/// A model file (`docs/model-format.md`): a JSON graph plus where its parameters live.
///
/// ```swift
/// let file = try ModelFile(contentsOf: URL(fileURLWithPath: "Weights/mnist/model.json"))
/// let model = try file.compiledModel()
/// ```
public struct ModelFile {
    /// The network, not yet compiled.
    public let model: Model
    /// The label in the file, if any.
    public let name: String?
    /// The layout of the weight tensors.
    public let layout: WeightLayout
    /// The parameter source the file points to, or `nil` for a model without parameters.
    public let parameters: (any ParameterSource)?
    /// The graph's inputs and outputs, from which `Model(compiling:)` builds a model of its own.
    let inputTensors: [Input]
    let outputTensors: [SymbolicTensor]

    /// Reads and checks a model file; parameter files are opened (mapped) but not yet used.
    public init(contentsOf url: URL, loading: ParameterLoading = .memoryMapped) throws {
        // Through MappedFile, not Data(contentsOf:): only regular files (reading /dev/zero or a
        // FIFO would never end), and the same strerror messages as parameter files.
        let data: Data
        do {
            let file = try MappedFile(path: url.path)
            data = withExtendedLifetime(file) { Data(file.bytes) }
        } catch let error as AnvilError {
            throw AnvilError(.fileError, "cannot read model file: \(error.message)")
        }
        try self.init(json: try JSONValue.parse(data, source: url.path), source: url.path,
                      directory: url.deletingLastPathComponent(), loading: loading)
    }

    /// Builds from parsed JSON; relative parameter paths resolve against `directory`.
    public init(json: JSONValue, source: String, directory: URL, loading: ParameterLoading = .memoryMapped) throws {
        let root = try JSONFields(json, context: "model file '\(source)'")
        guard try root.string("format") == "anvil.model" else {
            throw AnvilError(.invalidFile, "'\(source)' is not an Anvil model file (format must be \"anvil.model\")")
        }
        let version = try Self.version(root, source: source)
        name = root.has("name") ? try root.string("name") : nil
        (model, inputTensors, outputTensors) = try Self.buildModel(root, version: version)
        if root.has("parameters") {
            let parameters = try root.object("parameters")
            let layoutName = try parameters.string("layout", default: "forge")
            guard let layout = WeightLayout(rawValue: layoutName) else {
                throw AnvilError(.invalidFile, "\(parameters.context): unknown layout '\(layoutName)' (forge, pytorch or tensorflow)")
            }
            self.layout = layout
            self.parameters = try Self.parameterSource(try parameters.object("source"), directory: directory, loading: loading)
        } else {
            layout = .forge
            parameters = nil
        }
    }

    /// A model file made in memory from a graph (by an importer such as AnvilONNX's, which builds
    /// the layers itself): `inputs` and `outputs` as for `Model(inputs:outputs:)`, `parameters`
    /// holding the tensors in `layout`. Write it with `model.writeModelFile(to:)`.
    public init(inputs: [Input], outputs: [SymbolicTensor], name: String?, layout: WeightLayout,
                parameters: (any ParameterSource)?) throws {
        model = try Model(inputs: inputs, outputs: outputs)
        inputTensors = inputs
        outputTensors = outputs
        self.name = name
        self.layout = layout
        self.parameters = parameters
    }

    /// Compiles the model with the file's parameters and returns it. Transformed weights are
    /// kept in `weightCache` (by default ``WeightCache/standard``, which `ANVIL_WEIGHT_CACHE`
    /// sets or turns off; `nil` for none), so the next compile of this file maps them.
    public func compiledModel(validateParameters: Bool = false,
                              weightCache: WeightCache? = WeightCache.standard) throws -> Model {
        try model.compile(layout: layout, validateParameters: validateParameters, weightCache: weightCache,
                          from: parameters ?? ArrayParameterSource([:]))
        return model
    }

    /// The format version this Anvil writes: 2 (inputs of any rank up to 8, open on any axis,
    /// with an element type). Version 1 files (1 to 3 axes, the last fixed, float32) still load.
    public static let version = 2

    /// The file's `version`, checked to be one this Anvil reads.
    private static func version(_ root: JSONFields, source: String) throws -> Int {
        let version = try root.int("version")
        guard version == 1 || version == Self.version else {
            throw AnvilError(.invalidFile, "'\(source)' has version \(version); this Anvil reads versions 1 and \(Self.version)")
        }
        return version
    }

    /// An input's shape as the file writes it: `shape` (the axes after the batch axis, `null`
    /// where open) and, from version 2, `elementType` (float32 when absent).
    private static func inputShape(_ fields: JSONFields, version: Int) throws -> OpenShape {
        guard version >= 2 else {
            // Version 1: 1 to 3 axes after the batch axis; all but the channels may be open.
            let shape = try fields.openIntArray("shape", counts: 1 ... 3)
            return shape.count == 3 ? OpenShape(height: shape[0], width: shape[1], channels: shape[2])
                : OpenShape(dimensions: shape)
        }
        let shape = try fields.openIntArray("shape", counts: 0 ... Shape.maximumRank - 1, lastMayBeOpen: true)
        let type = try fields.elementType("elementType", default: .float32)
        guard shape.allSatisfy({ ($0 ?? 1) > 0 }) else {
            throw AnvilError(.invalidFile, "\(fields.context): field 'shape' has a dimension that is not positive: \(shape.map { $0.map(String.init) ?? "null" })")
        }
        return OpenShape(dimensions: shape, elementType: type)
    }

    private static func buildModel(_ root: JSONFields, version: Int) throws -> (Model, [Input], [SymbolicTensor]) {
        var tensors: [String: SymbolicTensor] = [:]
        var inputs: [Input] = []
        for (i, entry) in try root.array("inputs").enumerated() {
            let fields = try JSONFields(entry, context: "input \(i + 1)")
            let name = try fields.string("name")
            let shape = try inputShape(fields, version: version)
            guard tensors[name] == nil else { throw AnvilError(.invalidFile, "two inputs are named '\(name)'") }
            let input = Input(shape: shape, name: name)
            inputs.append(input)
            tensors[name] = input
        }
        var layerFields: [String: JSONFields] = [:]
        var order: [String] = []
        for (i, entry) in try root.array("layers").enumerated() {
            let probe = try JSONFields(entry, context: "layer \(i + 1)")
            let name = try probe.string("name")
            let fields = try JSONFields(entry, context: "layer '\(name)'")
            guard tensors[name] == nil, layerFields[name] == nil else {
                throw AnvilError(.invalidFile, "the name '\(name)' is used twice")
            }
            layerFields[name] = fields
            order.append(name)
        }
        // Create layer objects first so `sharesParametersWith` can point anywhere.
        var layers: [String: any Layer] = [:]
        for name in order {
            let fields = layerFields[name]!
            if fields.has("sharesParametersWith") { continue }
            layers[name] = try LayerCoding.decode(fields, name: name)
        }
        for name in order where layers[name] == nil {
            let fields = layerFields[name]!
            let target = try fields.string("sharesParametersWith")
            guard let shared = layers[target], let targetFields = layerFields[target],
                  try targetFields.string("type") == fields.string("type") else {
                throw AnvilError(.invalidFile, "layer '\(name)' shares parameters with '\(target)', which is not a layer of the same type that owns parameters")
            }
            layers[name] = shared
        }
        // Resolve references depth-first without recursion, detecting cycles and dangling names.
        var state: [String: Bool] = [:]  // false: in progress, true: done
        for start in order {
            var stack: [(String, Bool)] = [(start, false)]
            while let (name, expanded) = stack.popLast() {
                if tensors[name] != nil && !expanded { continue }
                let fields = layerFields[name]!
                let sources = try fields.strings("inputs")
                if expanded {
                    let layer = layers[name]!
                    tensors[name] = sources.count == 1 ? (tensors[sources[0]]! --> layer) : (sources.map { tensors[$0]! } --> layer)
                    state[name] = true
                    continue
                }
                if state[name] == false { throw AnvilError(.invalidGraph, "the graph has a cycle through layer '\(name)'") }
                state[name] = false
                stack.append((name, true))
                for source in sources.reversed() where tensors[source] == nil {
                    guard layerFields[source] != nil else {
                        throw AnvilError(.invalidGraph, "layer '\(name)' reads '\(source)', which is neither an input nor a layer")
                    }
                    if state[source] == false { throw AnvilError(.invalidGraph, "the graph has a cycle through layer '\(source)'") }
                    stack.append((source, false))
                }
            }
        }
        let outputNames = try root.strings("outputs")
        let outputs = try outputNames.map { name in
            guard let tensor = tensors[name] else { throw AnvilError(.invalidGraph, "output '\(name)' is neither an input nor a layer") }
            return tensor
        }
        let model = try Model(inputs: inputs, outputs: outputs)
        if model.layers.count != order.count {
            let reached = Set(model.layers.map(\.name))
            let unused = order.filter { !reached.contains($0) && !reached.contains(layers[$0]!.name ?? "") }
            throw AnvilError(.invalidGraph, "no output depends on layer(s) \(unused.prefix(5).map { "'\($0)'" }.joined(separator: ", "))")
        }
        return (model, inputs, outputs)
    }

    private static func parameterSource(_ fields: JSONFields, directory: URL, loading: ParameterLoading) throws -> any ParameterSource {
        let type = try fields.string("type")
        let path = try fields.string("path")
        let url = path.hasPrefix("/") ? URL(fileURLWithPath: path) : directory.appendingPathComponent(path)
        switch type {
        case "directory":
            return try DirectoryParameterSource(directory: url, prefix: try fields.string("prefix", default: ""),
                                                suffix: try fields.string("suffix", default: ""),
                                                fileExtension: try fields.string("extension", default: "bin"), loading: loading)
        case "blob":
            let tensors = try fields.object("tensors")
            guard case .object(let members) = tensors.value else { throw AnvilError(.invalidFile, "\(tensors.context) must be an object") }
            var index: [String: BlobParameterSource.Entry] = [:]
            for (name, value) in members {
                let entry = try JSONFields(value, context: "\(tensors.context), tensor '\(name)'")
                index[name] = BlobParameterSource.Entry(offset: try entry.int("offset"), count: try entry.int("count"))
            }
            return try BlobParameterSource(url: url, index: index, loading: loading)
        case "safetensors":
            let naming = try fields.string("naming", default: "pytorch")
            guard naming == "pytorch" || naming == "anvil" else {
                throw AnvilError(.invalidFile, "\(fields.context): field 'naming' must be \"pytorch\" or \"anvil\"")
            }
            return try SafetensorsParameterSource(url: url, naming: naming == "anvil" ? .anvil : .pytorch, loading: loading)
        default:
            throw AnvilError(.invalidFile, "\(fields.context): unknown parameter source type '\(type)' (directory, blob or safetensors)")
        }
    }
}
