import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Model files (`docs/model-format.md`) that are unreadable, not JSON, or JSON that does not
/// describe a network: unknown layer types, missing fields, wrong types, cycles, dangling
/// references, unused layers, bad parameter sources. Each is an `AnvilError` naming the field,
/// layer or file; nothing traps.
@Suite("Failure: model files")
struct FailureModelFileTests {
    /// A model file with one input `x` (4×4×2) and the given layers and outputs.
    static func document(layers: String, outputs: String = #"["out"]"#,
                         inputs: String = #"[{"name": "x", "shape": [4, 4, 2]}]"#, extra: String = "") -> String {
        #"{"format": "anvil.model", "version": 1, "inputs": \#(inputs), "layers": [\#(layers)], "outputs": \#(outputs)\#(extra)}"#
    }

    /// Parses `text` and builds the model file (relative paths resolve against `directory`).
    static func load(_ text: String, directory: URL = FileManager.default.temporaryDirectory) throws -> ModelFile {
        try ModelFile(json: try JSONValue.parse(Data(text.utf8), source: "test.json"), source: "test.json", directory: directory)
    }

    static let relu = #"{"name": "out", "type": "Activation", "inputs": ["x"], "function": "relu"}"#

    @Test("The base document loads (so every failure below is caused by its one change)")
    func baseLoads() throws {
        let file = try Self.load(Self.document(layers: Self.relu))
        #expect(file.model.layers.map(\.name) == ["out"])
    }

    /// Broken documents: label, text, code, words the message must contain.
    static let broken: [(String, String, AnvilError.Code, [String])] = [
        // Not a model file at all.
        ("empty text", "", .invalidFile, ["test.json", "not valid JSON"]),
        ("truncated JSON", #"{"format": "anvil.model", "vers"#, .invalidFile, ["not valid JSON"]),
        ("not UTF-8", "\u{FFFF}", .invalidFile, []),  // replaced below by invalid bytes
        ("an array, not an object", "[1, 2, 3]", .invalidFile, ["must be a JSON object"]),
        ("a string, not an object", #""anvil.model""#, .invalidFile, ["must be a JSON object"]),
        ("wrong format", #"{"format": "onnx", "version": 1}"#, .invalidFile, ["not an Anvil model file"]),
        ("missing format", #"{"version": 1}"#, .invalidFile, ["missing field 'format'"]),
        ("version 3", #"{"format": "anvil.model", "version": 3}"#, .invalidFile, ["version 3"]),
        ("version as a string", #"{"format": "anvil.model", "version": "1"}"#, .invalidFile, ["'version' must be an integer"]),
        ("version 1.5", #"{"format": "anvil.model", "version": 1.5}"#, .invalidFile, ["'version' must be an integer"]),
        // Inputs.
        ("missing inputs", #"{"format": "anvil.model", "version": 1, "layers": [], "outputs": []}"#, .invalidFile, ["missing field 'inputs'"]),
        ("inputs not an array", document(layers: relu, inputs: #"{"name": "x"}"#), .invalidFile, ["'inputs' must be an array"]),
        ("input without shape", document(layers: relu, inputs: #"[{"name": "x"}]"#), .invalidFile, ["input 1", "missing field 'shape'"]),
        ("input shape of 4 numbers", document(layers: relu, inputs: #"[{"name": "x", "shape": [1, 4, 4, 2]}]"#), .invalidFile,
         ["'shape' must be an array of 1 to 3 integers"]),
        ("input shape of no numbers", document(layers: relu, inputs: #"[{"name": "x", "shape": []}]"#), .invalidFile,
         ["'shape' must be an array of 1 to 3 integers"]),
        ("input shape with a string", document(layers: relu, inputs: #"[{"name": "x", "shape": [4, "4", 2]}]"#), .invalidFile,
         ["'shape' must be an array of 1 to 3 integers"]),
        ("input shape with a negative size", document(layers: relu, inputs: #"[{"name": "x", "shape": [4, -4, 2]}]"#), .invalidShape,
         ["'x'", "invalid shape"]),
        ("input shape overflowing Int", document(layers: relu, inputs: #"[{"name": "x", "shape": [4, 99999999999999999999, 2]}]"#),
         .invalidFile, ["'shape' must be an array of 1 to 3 integers"]),
        ("input shape whose product overflows", document(layers: relu, inputs: #"[{"name": "x", "shape": [4611686018427387904, 4, 2]}]"#),
         .invalidShape, ["'x'", "invalid shape"]),
        ("two inputs with one name", document(layers: relu, inputs: #"[{"name": "x", "shape": [1, 1, 1]}, {"name": "x", "shape": [1, 1, 1]}]"#),
         .invalidFile, ["two inputs are named 'x'"]),
        // Layers: structure.
        ("missing layers", #"{"format": "anvil.model", "version": 1, "inputs": [], "outputs": []}"#, .invalidFile, ["missing field 'layers'"]),
        ("a layer that is a number", document(layers: "42"), .invalidFile, ["layer 1 must be a JSON object"]),
        ("a layer without a name", document(layers: #"{"type": "Softmax", "inputs": ["x"]}"#), .invalidFile, ["layer 1", "missing field 'name'"]),
        ("a layer name that is a number", document(layers: #"{"name": 7, "type": "Softmax", "inputs": ["x"]}"#), .invalidFile,
         ["layer 1", "'name' must be a string"]),
        ("a layer without a type", document(layers: #"{"name": "out", "inputs": ["x"]}"#), .invalidFile, ["layer 'out'", "missing field 'type'"]),
        ("an unknown layer type", document(layers: #"{"name": "out", "type": "Upsample", "inputs": ["x"]}"#), .invalidFile,
         ["layer 'out'", "unknown layer type 'Upsample'"]),
        ("a layer without inputs", document(layers: #"{"name": "out", "type": "Softmax"}"#), .invalidFile, ["layer 'out'", "missing field 'inputs'"]),
        ("inputs that are not strings", document(layers: #"{"name": "out", "type": "Softmax", "inputs": [0]}"#), .invalidFile,
         ["layer 'out'", "'inputs' must be an array of strings"]),
        ("two layers with one name", document(layers: relu + ", " + relu), .invalidFile, ["'out' is used twice"]),
        ("a layer named like the input", document(layers: #"{"name": "x", "type": "Softmax", "inputs": ["x"]}"#, outputs: #"["x"]"#),
         .invalidFile, ["'x' is used twice"]),
        // Layers: options.
        ("a required option missing", document(layers: #"{"name": "out", "type": "Convolution", "inputs": ["x"], "channels": 3}"#),
         .invalidFile, ["layer 'out'", "missing field 'kernel'"]),
        ("a pair of 3 numbers", document(layers: #"{"name": "out", "type": "Convolution", "inputs": ["x"], "kernel": [3, 3, 3], "channels": 3}"#),
         .invalidFile, ["'kernel' must be an array of 2 integers"]),
        ("a pair written as a string", document(layers: #"{"name": "out", "type": "MaxPooling", "inputs": ["x"], "kernel": "2x2"}"#),
         .invalidFile, ["'kernel' must be an array"]),
        ("a fractional channel count", document(layers: #"{"name": "out", "type": "Dense", "inputs": ["x"], "neurons": 3.5}"#),
         .invalidFile, ["'neurons' must be an integer"]),
        ("a boolean as a string", document(layers: #"{"name": "out", "type": "Dense", "inputs": ["x"], "neurons": 3, "bias": "yes"}"#),
         .invalidFile, ["'bias' must be true or false"]),
        ("an unknown activation", document(layers: #"{"name": "out", "type": "Activation", "inputs": ["x"], "function": "swish"}"#),
         .invalidFile, ["unknown activation 'swish'"]),
        ("an activation object without type", document(layers: #"{"name": "out", "type": "Activation", "inputs": ["x"], "function": {"alpha": 1}}"#),
         .invalidFile, ["missing field 'type'"]),
        ("an activation constant as a string",
         document(layers: #"{"name": "out", "type": "Activation", "inputs": ["x"], "function": {"type": "elu", "alpha": "1"}}"#),
         .invalidFile, ["'alpha' must be a number"]),
        ("Activation without function", document(layers: #"{"name": "out", "type": "Activation", "inputs": ["x"]}"#),
         .invalidFile, ["missing field 'function'"]),
        ("an unknown padding", document(layers: #"{"name": "out", "type": "Convolution", "inputs": ["x"], "kernel": [3, 3], "channels": 2, "padding": "full"}"#),
         .invalidFile, ["'padding' must be \"same\", \"valid\" or [top, left, bottom, right]"]),
        ("explicit padding of 3 numbers",
         document(layers: #"{"name": "out", "type": "Convolution", "inputs": ["x"], "kernel": [3, 3], "channels": 2, "padding": [1, 1, 1]}"#),
         .invalidFile, ["'padding' must be an array of 4 integers"]),
        ("an unknown flatten order", document(layers: #"{"name": "out", "type": "Flatten", "inputs": ["x"], "order": "whc"}"#),
         .invalidFile, ["'order' must be \"hwc\" or \"chw\""]),
        ("an unknown elementwise operation", document(layers: #"{"name": "out", "type": "Elementwise", "inputs": ["x", "x"], "operation": "modulo"}"#),
         .invalidFile, ["'operation' must be one of", "\"modulo\""]),
        ("Elementwise without operation", document(layers: #"{"name": "out", "type": "Elementwise", "inputs": ["x", "x"]}"#),
         .invalidFile, ["missing field 'operation'"]),
        ("an elementwise constant of 8 axes", document(layers: #"{"name": "out", "type": "Elementwise", "inputs": ["x"], "operation": "add", "constant": [1, 1, 1, 1, 1, 1, 1, 2]}"#),
         .invalidFile, ["'constant' must be an array of 1 to 7 integers"]),
        ("ChannelShuffle with string groups", document(layers: #"{"name": "out", "type": "ChannelShuffle", "inputs": ["x"], "groups": "2"}"#),
         .invalidFile, ["'out'", "'groups' must be an integer"]),
        ("ChannelShuffle without groups", document(layers: #"{"name": "out", "type": "ChannelShuffle", "inputs": ["x"]}"#),
         .invalidFile, ["'out'", "missing field 'groups'"]),
        ("RoiAlign with an unknown mode", document(layers: #"{"name": "out", "type": "RoiAlign", "inputs": ["x", "x", "x"], "mode": "mean"}"#),
         .invalidFile, ["'out'", "'mode' must be one of \"average\", \"max\"", "\"mean\""]),
        ("DeformableConvolution without channels", document(layers: #"{"name": "out", "type": "DeformableConvolution", "inputs": ["x", "x"], "kernel": [2, 2]}"#),
         .invalidFile, ["'out'", "missing field 'channels'"]),
        ("Col2Im without imageSize", document(layers: #"{"name": "out", "type": "Col2Im", "inputs": ["x"], "block": [2, 2]}"#),
         .invalidFile, ["'out'", "missing field 'imageSize'"]),
        ("MaxPoolingIndices with a string columnMajor",
         document(layers: #"{"name": "out", "type": "MaxPoolingIndices", "inputs": ["x"], "kernel": [2, 2], "columnMajor": "yes"}"#),
         .invalidFile, ["'out'", "'columnMajor' must be"]),
        ("MaxUnpooling with an outputSize of 3 numbers",
         document(layers: #"{"name": "out", "type": "MaxUnpooling", "inputs": ["x", "x"], "kernel": [2, 2], "outputSize": [4, 4, 4]}"#),
         .invalidFile, ["'out'", "'outputSize' must be an array of 2 integers"]),
        ("Col2Im of an image, not a sequence of blocks", document(layers: #"{"name": "out", "type": "Col2Im", "inputs": ["x"], "imageSize": [4, 4], "block": [1, 1]}"#),
         .invalidShape, ["'out'", "sequence of blocks"]),
        ("Transpose of 9 axes", document(layers: #"{"name": "out", "type": "Transpose", "inputs": ["x"], "permutation": [0, 1, 2, 3, 4, 5, 6, 7, 8]}"#),
         .invalidFile, ["'out'", "'permutation' must be an array of 1 to 8 integers"]),
        ("Reshape with a float", document(layers: #"{"name": "out", "type": "Reshape", "inputs": ["x"], "shape": [2, 1.5]}"#),
         .invalidFile, ["'out'", "'shape' must be an array of 0 to 7 integers"]),
        ("Slice without axis", document(layers: #"{"name": "out", "type": "Slice", "inputs": ["x"], "start": 1}"#),
         .invalidFile, ["'out'", "missing field 'axis'"]),
        ("Unsqueeze without axes", document(layers: #"{"name": "out", "type": "Unsqueeze", "inputs": ["x"]}"#),
         .invalidFile, ["'out'", "missing field 'axes'"]),
        ("DepthToSpace with an unknown mode", document(layers: #"{"name": "out", "type": "DepthToSpace", "inputs": ["x"], "blockSize": 2, "mode": "RCD"}"#),
         .invalidFile, ["'out'", "'mode' must be \"DCR\" or \"CRD\""]),
        ("Reshape to another element count", document(layers: #"{"name": "out", "type": "Reshape", "inputs": ["x"], "shape": [5, 5]}"#),
         .invalidShape, ["'out'", "(4, 4, 2)", "[5, 5]"]),
        ("Resize without size or scale", document(layers: #"{"name": "out", "type": "Resize", "inputs": ["x"]}"#),
         .invalidFile, ["Resize needs 'size' or 'scale'"]),
        ("Resize with a region of 3 numbers",
         document(layers: #"{"name": "out", "type": "Resize", "inputs": ["x"], "size": [2, 2], "coordinates": "tfCropAndResize", "region": [0, 0, 1]}"#),
         .invalidFile, ["'out'", "field 'region' must be an array of 4 numbers"]),
        ("Resize with a region of strings",
         document(layers: #"{"name": "out", "type": "Resize", "inputs": ["x"], "size": [2, 2], "coordinates": "tfCropAndResize", "region": ["0", 0, 1, 1]}"#),
         .invalidFile, ["'out'", "field 'region' must be an array of 4 numbers"]),
        ("Resize antialias that is not a flag",
         document(layers: #"{"name": "out", "type": "Resize", "inputs": ["x"], "size": [2, 2], "antialias": 1}"#),
         .invalidFile, ["'out'", "field 'antialias' must be true or false"]),
        ("Resize with a region but half-pixel coordinates",
         document(layers: #"{"name": "out", "type": "Resize", "inputs": ["x"], "size": [2, 2], "region": [0, 0, 0.5, 0.5]}"#),
         .invalidOption, ["'out'", "region 0.0,0.0-0.5,0.5 is read only with coordinates tfCropAndResize"]),
        ("Resize antialias in nearest mode",
         document(layers: #"{"name": "out", "type": "Resize", "inputs": ["x"], "size": [2, 2], "mode": "nearest", "antialias": true}"#),
         .invalidOption, ["'out'", "antialias needs mode linear or cubic"]),
        ("Resize with unknown coordinates", document(layers: #"{"name": "out", "type": "Resize", "inputs": ["x"], "size": [2, 2], "coordinates": "corners"}"#),
         .invalidFile, ["unknown coordinates 'corners'"]),
        ("an out-of-range option", document(layers: #"{"name": "out", "type": "Convolution", "inputs": ["x"], "kernel": [0, 3], "channels": 2}"#),
         .invalidOption, ["'out'", "kernel 0x3 must be positive"]),
        ("a kernel larger than the input", document(layers: #"{"name": "out", "type": "MaxPooling", "inputs": ["x"], "kernel": [5, 5]}"#),
         .invalidShape, ["'out'", "(4, 4, 2)"]),
        ("a gigantic channel count", document(layers: #"{"name": "out", "type": "Dense", "inputs": ["x"], "neurons": 9223372036854775807}"#),
         .invalidShape, ["'out'", "too large"]),
        // References.
        ("a dangling layer input", document(layers: #"{"name": "out", "type": "Softmax", "inputs": ["nowhere"]}"#), .invalidGraph,
         ["layer 'out' reads 'nowhere', which is neither an input nor a layer"]),
        ("a dangling output", document(layers: relu, outputs: #"["out", "ghost"]"#), .invalidGraph,
         ["output 'ghost' is neither an input nor a layer"]),
        ("no outputs", document(layers: relu, outputs: "[]"), .invalidGraph, ["at least one output"]),
        ("a two-layer cycle",
         document(layers: #"{"name": "a", "type": "Add", "inputs": ["x", "out"]}, {"name": "out", "type": "Activation", "inputs": ["a"], "function": "relu"}"#),
         .invalidGraph, ["cycle"]),
        ("a layer reading itself", document(layers: #"{"name": "out", "type": "Add", "inputs": ["x", "out"]}"#), .invalidGraph, ["cycle", "'out'"]),
        ("a layer no output depends on", document(layers: relu + #", {"name": "spare", "type": "Softmax", "inputs": ["x"]}"#),
         .invalidGraph, ["no output depends on", "'spare'"]),
        ("the wrong number of inputs for a layer", document(layers: #"{"name": "out", "type": "Add", "inputs": ["x"]}"#),
         .invalidGraph, ["'out'", "at least 2"]),
        ("sharing with a missing layer",
         document(layers: #"{"name": "out", "type": "Dense", "inputs": ["x"], "sharesParametersWith": "ghost"}"#),
         .invalidFile, ["'out' shares parameters with 'ghost'"]),
        ("sharing with a layer of another type",
         document(layers: #"{"name": "d", "type": "Dense", "inputs": ["x"], "neurons": 2}, {"name": "out", "type": "PReLU", "inputs": ["d"], "sharesParametersWith": "d"}"#),
         .invalidFile, ["'out' shares parameters with 'd'"]),
        // Parameters.
        ("an unknown layout", document(layers: relu, extra: #", "parameters": {"layout": "caffe2", "source": {"type": "blob"}}"#),
         .invalidFile, ["unknown layout 'caffe2'"]),
        ("parameters without source", document(layers: relu, extra: #", "parameters": {"layout": "forge"}"#),
         .invalidFile, ["missing field 'source'"]),
        ("an unknown source type", document(layers: relu, extra: #", "parameters": {"source": {"type": "http", "path": "x"}}"#),
         .invalidFile, ["unknown parameter source type 'http'"]),
        ("a source without path", document(layers: relu, extra: #", "parameters": {"source": {"type": "blob"}}"#),
         .invalidFile, ["missing field 'path'"]),
        ("a weights directory that does not exist",
         document(layers: relu, extra: #", "parameters": {"source": {"type": "directory", "path": "no-such-weights"}}"#),
         .fileError, ["no-such-weights", "does not exist or is not a directory"]),
        ("a blob that does not exist",
         document(layers: relu, extra: #", "parameters": {"source": {"type": "blob", "path": "no-such.bin", "tensors": {}}}"#),
         .fileError, ["no-such.bin", "No such file or directory"]),
    ]

    @Test("Malformed model files: not JSON, wrong types, missing fields, unknown types, cycles, dangling references",
          arguments: broken.indices)
    func brokenDocument(_ index: Int) throws {
        let (label, text, code, mentioning) = Self.broken[index]
        let data = label == "not UTF-8" ? Data([0x7B, 0xFF, 0xFE, 0x7D]) : Data(text.utf8)
        Failure.expect(code, mentioning: mentioning, label) {
            _ = try ModelFile(json: try JSONValue.parse(data, source: "test.json"), source: "test.json",
                              directory: FileManager.default.temporaryDirectory)
        }
    }

    /// Blob indexes in the model file: everything wrong with the JSON of `tensors`.
    static let brokenIndexes: [(String, String, [String])] = [
        ("tensors not an object", #"[]"#, ["'tensors' must be a JSON object"]),
        ("an entry that is a number", #"{"out_W": 0}"#, ["tensor 'out_W' must be a JSON object"]),
        ("an entry without offset", #"{"out_W": {"count": 2}}"#, ["tensor 'out_W'", "missing field 'offset'"]),
        ("an offset as a string", #"{"out_W": {"offset": "0", "count": 2}}"#, ["'offset' must be an integer"]),
        ("a fractional offset", #"{"out_W": {"offset": 0.5, "count": 2}}"#, ["'offset' must be an integer"]),
        ("an offset beyond Int", #"{"out_W": {"offset": 9223372036854775808, "count": 2}}"#, ["'offset' must be an integer"]),
        ("an offset of 1e30", #"{"out_W": {"offset": 1e30, "count": 2}}"#, ["'offset' must be an integer"]),
        ("a count beyond Int", #"{"out_W": {"offset": 0, "count": 18446744073709551616}}"#, ["'count' must be an integer"]),
        ("a negative count", #"{"out_W": {"offset": 0, "count": -1}}"#, ["out_W", "lies outside"]),
        ("a negative offset", #"{"out_W": {"offset": -8, "count": 1}}"#, ["out_W", "lies outside"]),
        ("a count whose size overflows", #"{"out_W": {"offset": 0, "count": 4611686018427387904}}"#, ["out_W", "lies outside"]),
        ("an offset + size that overflows", #"{"out_W": {"offset": 9223372036854775800, "count": 4}}"#, ["out_W", "lies outside"]),
        ("an entry past the end", #"{"out_W": {"offset": 8, "count": 3}}"#, ["out_W", "lies outside", "(16 bytes)"]),
        ("overlapping entries", #"{"out_W": {"offset": 0, "count": 3}, "out_b": {"offset": 8, "count": 2}}"#, ["overlap"]),
        ("a misaligned offset", #"{"out_W": {"offset": 2, "count": 1}}"#, ["offset 2", "multiple of 4"]),
    ]

    @Test("Blob index in a model file: malformed JSON, past the end, overlaps, negative or gigantic sizes",
          arguments: brokenIndexes.indices)
    func brokenBlobIndex(_ index: Int) throws {
        let (label, tensors, mentioning) = Self.brokenIndexes[index]
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        try Failure.write([1, 2, 3, 4], to: dir.appendingPathComponent("w.bin"))
        let dense = #"{"name": "out", "type": "Dense", "inputs": ["x"], "neurons": 1}"#
        let text = Self.document(layers: dense, inputs: #"[{"name": "x", "shape": [1, 1, 2]}]"#,
                                 extra: #", "parameters": {"source": {"type": "blob", "path": "w.bin", "tensors": \#(tensors)}}"#)
        Failure.expect(.invalidFile, mentioning: mentioning, label) { _ = try Self.load(text, directory: dir) }
        // The same index, fixed, loads and runs: the failure above was the index's alone.
        let good = Self.document(layers: dense, inputs: #"[{"name": "x", "shape": [1, 1, 2]}]"#,
                                 extra: #", "parameters": {"source": {"type": "blob", "path": "w.bin", "tensors": {"out_W": {"offset": 0, "count": 2}, "out_b": {"offset": 8, "count": 1}}}}"#)
        let model = try Self.load(good, directory: dir).compiledModel()
        #expect(try model.predict(Tensor(batch: 1, shape: Shape(height: 1, width: 1, channels: 2), values: [1, 1])).values == [6])
    }

    @Test("Model file on disk: missing, a directory, a device, zero bytes, binary garbage")
    func modelFileOnDisk() throws {
        let dir = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(dir) }
        Failure.expect(.fileError, mentioning: ["cannot read model file", "missing.json", "No such file or directory"]) {
            _ = try ModelFile(contentsOf: dir.appendingPathComponent("missing.json"))
        }
        Failure.expect(.fileError, mentioning: ["cannot read model file", "is not a regular file"]) { _ = try ModelFile(contentsOf: dir) }
        // Reading /dev/zero to its end would never finish: refused as not a regular file.
        Failure.expect(.fileError, mentioning: ["cannot read model file", "/dev/zero", "is not a regular file"]) {
            _ = try ModelFile(contentsOf: URL(fileURLWithPath: "/dev/zero"))
        }
        let empty = dir.appendingPathComponent("empty.json")
        try Failure.write(bytes: [], to: empty)
        Failure.expect(.invalidFile, mentioning: ["empty.json", "not valid JSON"]) { _ = try ModelFile(contentsOf: empty) }
        let garbage = dir.appendingPathComponent("weights.json")
        try Failure.write((0 ..< 64).map { Float($0) }, to: garbage)
        Failure.expect(.invalidFile, mentioning: ["weights.json", "not valid JSON"]) { _ = try ModelFile(contentsOf: garbage) }
    }

    /// Deep nesting must be refused by the parser, not overflow the stack. Run in a child
    /// process so that a crash fails this test only.
    @Test("Deeply nested JSON (100,000 levels) is an error, not a stack overflow")
    func deeplyNested() async {
        await #expect(processExitsWith: .success) {
            let text = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
            do {
                _ = try JSONValue.parse(Data(text.utf8), source: "deep.json")
                exit(0)  // accepted: also fine, it is not a model file
            } catch let error as AnvilError {
                exit(error.code == .invalidFile ? 0 : 2)
            } catch {
                exit(3)
            }
        }
        // And as a layer option inside a real document.
        await #expect(processExitsWith: .success) {
            let nested = String(repeating: "{\"a\": ", count: 50_000) + "1" + String(repeating: "}", count: 50_000)
            let text = #"{"format": "anvil.model", "version": 1, "inputs": [], "layers": [], "outputs": [], "name": \#(nested)}"#
            do {
                _ = try ModelFile(json: try JSONValue.parse(Data(text.utf8), source: "deep.json"), source: "deep.json",
                                  directory: URL(fileURLWithPath: "/"))
                exit(2)
            } catch is AnvilError {
                exit(0)
            } catch {
                exit(3)
            }
        }
    }

    /// Found by Scripts/dev/fuzz.sh (graph target): a Dense layer with `leakyRelu(alpha: .nan)` was
    /// written with `"alpha": null`, a model file that then failed to load.
    @Test("Fuzz regression: writing a NaN or infinite activation constant is an error, not an unreadable file")
    func nonFiniteConstantsAreNotWritten() throws {
        for function in [ActivationFunction.leakyRelu(alpha: .nan), .clip(min: -.infinity, max: 6), .linear(a: 1, b: .infinity),
                         .elu(alpha: -.infinity), .hardSigmoid(alpha: 0.2, beta: .nan)] {
            let input = Input(width: 2, height: 2, channels: 1, name: "x")
            for layer in [Dense(neurons: 2, activation: function, name: "fc") as any Layer, Activation(function, name: "fc")] {
                let model = try Model(input: input, output: input --> layer)
                Failure.expect(.invalidOption, mentioning: ["'fc'", "NaN or infinity"], "\(function)") {
                    _ = try model.modelFileJSON()
                }
            }
        }
        // Extreme finite constants round-trip exactly.
        let input = Input(width: 2, height: 2, channels: 1, name: "x")
        let extreme = ActivationFunction.clip(min: -.greatestFiniteMagnitude, max: .leastNonzeroMagnitude)
        let model = try Model(input: input, output: input --> Activation(extreme, name: "fc"))
        let text = try model.modelFileJSON().serialized()
        let reread = try ModelFile(json: JSONValue.parse(Data(text.utf8), source: "x"), source: "x", directory: URL(fileURLWithPath: "/")).model
        #expect((reread.layers[0].layer as? Activation)?.function == extreme)
    }

    @Test("Duplicate keys, huge numbers and odd but valid JSON load or fail cleanly")
    func oddJSON() throws {
        // A duplicate key: one of the two values is used (JSON leaves this undefined); no crash.
        let duplicate = #"{"format": "anvil.model", "format": "anvil.model", "version": 1, "inputs": [{"name": "x", "shape": [1, 1, 1]}], "layers": [], "outputs": ["x"]}"#
        do { _ = try Self.load(duplicate) } catch is AnvilError {}
        // Numbers beyond Double: an error naming the field, not infinity.
        Failure.expect(.invalidFile, mentioning: []) {
            _ = try Self.load(Self.document(layers: #"{"name": "out", "type": "BatchNormalization", "inputs": ["x"], "epsilon": 1e999}"#))
        }
        // An epsilon of 1e300 becomes Float infinity, which BatchNormalization refuses.
        Failure.expect(.invalidOption, mentioning: ["'out'", "epsilon"]) {
            _ = try Self.load(Self.document(layers: #"{"name": "out", "type": "BatchNormalization", "inputs": ["x"], "epsilon": 1e300}"#))
        }
        // Unknown extra fields are ignored (forward compatibility).
        #expect(throws: Never.self) {
            _ = try Self.load(Self.document(layers: #"{"name": "out", "type": "Softmax", "inputs": ["x"], "comment": {"any": [1, 2]}}"#))
        }
    }
}
