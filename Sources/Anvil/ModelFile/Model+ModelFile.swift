import Foundation

extension Model {
    /// A model of its own built from `file`'s graph and compiled with the file's parameters
    /// (what `extension Model { init(onnx:) }` in AnvilONNX uses).
    public convenience init(compiling file: ModelFile, validateParameters: Bool = false) throws {
        try self.init(inputs: file.inputTensors, outputs: file.outputTensors)
        try compile(layout: file.layout, validateParameters: validateParameters, from: file.parameters ?? ArrayParameterSource([:]))
    }

    /// The model as a model-file JSON document; `parameters` is written as the file's
    /// `parameters` member (layout and source), or left out when `nil`.
    ///
    /// A layer applied twice is written once under its name and then as `<name>_<k>` with
    /// `sharesParametersWith`. Custom layers cannot be written and throw.
    public func modelFileJSON(name: String? = nil, parameters: JSONValue? = nil) throws -> JSONValue {
        var tensorNames = graph.inputNames
        var applications: [ObjectIdentifier: Int] = [:]
        var layers: [JSONValue] = []
        for node in graph.nodes {
            let id = ObjectIdentifier(node.layer)
            let count = applications[id, default: 0] + 1
            applications[id] = count
            let written = count == 1 ? node.name : "\(node.name)_\(count)"
            tensorNames.append(written)
            var members: [(String, JSONValue)] = [("name", .string(written)),
                                                  ("inputs", .array(node.inputs.map { .string(tensorNames[$0]) }))]
            if count > 1 {
                members.append(("type", .string(try LayerCoding.fileTypeName(of: node.layer, name: node.name))))
                members.append(("sharesParametersWith", .string(node.name)))
            } else {
                members += try LayerCoding.encode(node.layer, name: node.name)
            }
            layers.append(.object(members))
        }
        var root: [(String, JSONValue)] = [("format", .string("anvil.model")), ("version", .int(ModelFile.version))]
        if let name { root.append(("name", .string(name))) }
        // Open dimensions are written as null; the element type when it is not float32.
        root.append(("inputs", .array(zip(graph.inputNames, openInputShapes).map { name, shape in
            var members: [(String, JSONValue)] = [("name", .string(name)),
                                                  ("shape", .array(shape.dimensions.map { $0.map(JSONValue.int) ?? .null }))]
            if shape.elementType != .float32 { members.append(("elementType", .string(shape.elementType.rawValue))) }
            return .object(members)
        })))
        root.append(("layers", .array(layers)))
        root.append(("outputs", .array(graph.outputs.map { .string(tensorNames[$0]) })))
        if let parameters { root.append(("parameters", parameters)) }
        return .object(root)
    }

    /// Writes the model file to `url` (see ``modelFileJSON(name:parameters:)``).
    public func writeModelFile(to url: URL, name: String? = nil, parameters: JSONValue? = nil) throws {
        let text = try modelFileJSON(name: name, parameters: parameters).serialized() + "\n"
        do {
            try text.write(to: url, atomically: true, encoding: .utf8)
        } catch {
            throw AnvilError(.fileError, "cannot write model file '\(url.path)': \(error.localizedDescription)")
        }
    }
}
