import Anvil
import Foundation

/// An `.onnx` file converted to Anvil layers in memory: the graph (its inputs and outputs) and
/// its parameter tensors (layout "pytorch"). Write it with ``write(to:)`` (model.json +
/// weights.bin, what `anvil convert` does, through the engine's own model-file coding), or open
/// it with ``modelFile()`` / `Model(onnx:)`.
public struct ONNXConversion: Sendable {
    /// The model's name (the graph's, unless one was given).
    public let name: String
    /// The graph's inputs, as `Model(inputs:outputs:)` takes them.
    public let inputs: [Input]
    /// The graph's outputs.
    public let outputs: [SymbolicTensor]
    /// How many layers the graph has.
    public let layerCount: Int
    /// The parameter tensors by name (`conv1_W`, ...), in the order the blob holds them.
    public private(set) var tensors: [(name: String, values: [Float])]
    /// Where each ONNX graph input and output sits in Anvil's channels-last tensors, by ONNX name.
    public let layouts: [String: ONNXTensorLayout]

    /// Converts the `.onnx` file at `url`; `name` overrides the graph's name, `inputShape`
    /// (channels, height, width) fills in open input dimensions. Throws ``ONNXImportError``
    /// naming the file, field or node(s) at fault (every blocker of the graph at once).
    public init(contentsOf url: URL, name: String? = nil, inputShape: (channels: Int, height: Int, width: Int)? = nil) throws {
        try self.init(loading: { try ONNXFile(contentsOf: url) }, name: name, inputShape: inputShape)
    }

    /// Converts a serialised ONNX `ModelProto`; external data is resolved against `directory`.
    public init(serialized data: Data, directory: URL? = nil, name: String? = nil,
                inputShape: (channels: Int, height: Int, width: Int)? = nil) throws {
        try self.init(loading: { try ONNXFile(data: data, source: "the ONNX data", directory: directory) }, name: name, inputShape: inputShape)
    }

    /// Converts the file `load` reads. A fixed-shape graph that cannot be converted with its first
    /// axis as the batch (it reduces, slices or concatenates along it, say) is converted again as
    /// one item (``ONNXConverter/isUnbatched``); the first attempt's error stands if that fails too.
    private init(loading load: () throws -> ONNXFile, name: String?, inputShape: (channels: Int, height: Int, width: Int)?) throws {
        do {
            try self.init(file: try load(), name: name, inputShape: inputShape, unbatched: false)
        } catch let error as ONNXImportError where error.retryAsOneItem {
            do {
                try self.init(file: try load(), name: name, inputShape: inputShape, unbatched: true)
            } catch is ONNXImportError {
                throw error
            }
        }
    }

    private init(file: consuming ONNXFile, name: String?, inputShape: (channels: Int, height: Int, width: Int)?, unbatched: Bool) throws {
        let source = file.source, directory = file.directory
        // The converter gets the only reference to the initializers, so each one's bytes are
        // freed as it is decoded, rather than held beside the decoded values.
        let converter = ONNXConverter(model: file.model, initializers: (consume file).initializers, name: name,
                                      inputShape: inputShape.map { ($0.channels, $0.height, $0.width) }, directory: directory,
                                      unbatched: unbatched)
        let builder: ModelBuilder
        do {
            builder = try converter.convert()
            (inputs, outputs) = try builder.graph()
        } catch let failure as ImportFailure {
            // (A graph without outputs, found by the onnx fuzz target: Fuzz/regressions/onnx.)
            throw ONNXImportError("\(source): \(failure.message)", blockers: [failure.message])
        } catch var error as ONNXImportError {
            error.retryAsOneItem = !converter.isUnbatched && converter.inputsAreFixed
            throw error
        }
        self.name = builder.name
        layerCount = builder.layers.count
        tensors = builder.tensors
        var layouts: [String: ONNXTensorLayout] = [:]
        for input in converter.graph.input {
            if case .tensor(let t)? = converter.values[input.name] { layouts[input.name] = ONNXTensorLayout(t) }
        }
        for (name, t) in converter.outputTensors { layouts[name] = ONNXTensorLayout(t) }
        self.layouts = layouts
    }

    /// The parameter tensors as a source for `Model.compile`.
    public var parameterSource: ArrayParameterSource {
        ArrayParameterSource(Dictionary(tensors.map { ($0.name, $0.values) }, uniquingKeysWith: { first, _ in first }))
    }

    /// The converted model as a ``ModelFile`` whose parameters are held in memory.
    public func modelFile() throws -> ModelFile {
        try ModelFile(inputs: inputs, outputs: outputs, name: name, layout: .pytorch, parameters: parameterSource)
    }

    /// The model-file document ``write(to:)`` writes (docs/model-format.md): the graph as the
    /// engine codes it, its `parameters` member pointing at `weights.bin`.
    public func modelFileJSON() throws -> JSONValue {
        var index: [(String, JSONValue)] = []
        var offset = 0
        for (name, values) in tensors {
            index.append((name, .object([("offset", .int(offset * 4)), ("count", .int(values.count))])))
            offset += values.count
        }
        let parameters: JSONValue? = tensors.isEmpty ? nil : .object([
            ("layout", .string(WeightLayout.pytorch.rawValue)),
            ("source", .object([("type", .string("blob")), ("path", .string("weights.bin")), ("tensors", .object(index))])),
        ])
        return try Model(inputs: inputs, outputs: outputs).modelFileJSON(name: name, parameters: parameters)
    }

    /// The converted model as a ``ModelFile``, its parameters moved (not copied) into the
    /// storage `compile` reads: how `ModelFile(onnx:)` opens a file with one copy of the weights.
    consuming func takeModelFile(source: String) throws -> ModelFile {
        let parameters = ConvertedParameterSource(taking: &tensors)
        return try ModelFile(inputs: inputs, outputs: outputs, name: name, layout: .pytorch, parameters: parameters)
    }

    /// Writes `directory`/model.json and (when there are parameters) `directory`/weights.bin;
    /// returns the model.json URL.
    @discardableResult
    public func write(to directory: URL) throws -> URL {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let modelURL = directory.appendingPathComponent("model.json")
            try Data((try modelFileJSON().serialized() + "\n").utf8).write(to: modelURL)
            if !tensors.isEmpty { try writeBlob(to: directory.appendingPathComponent("weights.bin")) }
            return modelURL
        } catch let error as AnvilError {
            throw error
        } catch {
            throw AnvilError(.fileError, "cannot write the model file into '\(directory.path)': \(error.localizedDescription)")
        }
    }
}

extension ONNXConversion {
    /// Writes ``tensors`` as little-endian float32, one after another, a megabyte at a time (no
    /// second copy of the weights in memory).
    private func writeBlob(to url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw AnvilError(.fileError, "cannot create '\(url.path)'")
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let chunkCount = 1 << 18
        var chunk: [UInt32] = []
        chunk.reserveCapacity(chunkCount)
        for (_, values) in tensors {
            var start = 0
            while start < values.count {
                let end = min(start + chunkCount, values.count)
                chunk.removeAll(keepingCapacity: true)
                for value in values[start ..< end] { chunk.append(value.bitPattern.littleEndian) }
                try chunk.withUnsafeBytes { try handle.write(contentsOf: Data($0)) }
                start = end
            }
        }
    }

    /// The ONNX operators (default domain) the importer converts, sorted (docs/converters.md
    /// says how each maps).
    public static var supportedOperators: [String] { ONNXConverter.supportedOperators }
}
