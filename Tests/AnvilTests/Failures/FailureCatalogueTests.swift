import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// `docs/errors.md` lists every failure a user can cause with the message Anvil actually
/// produces. This suite re-creates each catalogued `AnvilError` and checks that the document's
/// row for it shows the same code and message (temporary paths written as `<dir>`), so the
/// catalogue cannot drift from the code. The detailed checks live in the suites named in
/// each row (ErrorTests, Failure*Tests).
///
/// `ANVIL_ERROR_CATALOGUE=<file> swift test --filter FailureCatalogue` writes the rows as they
/// are now (id, code, message) to `<file>`, to update the document.
@Suite("Failure: error catalogue")
struct FailureCatalogueTests {
    typealias Entry = (id: String, trigger: @Sendable (URL) throws -> Void)

    static let a = Input(width: 4, height: 4, channels: 2, name: "image")

    static func model(_ layer: any Layer) throws -> Model { try Model(input: a, output: a --> layer) }

    /// The catalogued failures, in document order. Each closure gets a fresh directory holding
    /// `Failure.writeDirectory` files (`conv_W.bin` ...) and `blob.dat` (`Failure.writeBlob`).
    static let entries: [Entry] = [
        // Building a model.
        ("graph.no-input", { _ in _ = try Model(inputs: [], outputs: [a]) }),
        ("graph.no-output", { _ in _ = try Model(inputs: [a], outputs: []) }),
        ("graph.input-twice", { _ in _ = try Model(inputs: [a, a], outputs: [a --> Activation(.relu)]) }),
        ("graph.undeclared-input", { _ in
            let ghost = Input(width: 4, height: 4, channels: 2, name: "ghost")
            _ = try Model(input: a, output: [a, ghost] --> Add())
        }),
        ("graph.input-names", { _ in
            let p = Input(width: 1, height: 1, channels: 1, name: "x"), q = Input(width: 1, height: 1, channels: 1, name: "x")
            _ = try Model(inputs: [p, q], outputs: [[p, q] --> Add()])
        }),
        ("graph.layer-names", { _ in
            _ = try Model(input: a, output: a --> Activation(.relu, name: "act") --> Activation(.tanh, name: "act"))
        }),
        ("graph.empty-name", { _ in _ = try model(Activation(.relu, name: "")) }),
        ("graph.input-shape", { _ in
            let bad = Input(width: 0, height: 4, channels: 1, name: "bad")
            _ = try Model(input: bad, output: bad --> Activation(.relu))
        }),
        ("graph.input-count", { _ in _ = try model(Add(name: "sum")) }),
        ("graph.bad-option", { _ in _ = try model(Convolution(kernel: (3, 3), channels: 0, name: "conv")) }),
        ("graph.kernel-too-large", { _ in _ = try model(MaxPooling(kernel: (5, 5), name: "pool")) }),
        ("graph.groups", { _ in _ = try model(Convolution(kernel: (3, 3), channels: 3, groups: 2, name: "conv")) }),
        ("graph.add-shapes", { _ in _ = try Model(input: a, output: [a, a --> PointwiseConvolution(channels: 3)] --> Add(name: "sum")) }),
        ("graph.concat-shapes", { _ in _ = try Model(input: a, output: [a, a --> MaxPooling(kernel: (2, 2))] --> Concatenate(name: "cat")) }),
        ("graph.too-large", { _ in _ = try model(Dense(neurons: Int.max / 2, name: "fc")) }),
        ("graph.shared-conflict", { _ in
            let b = Input(width: 4, height: 4, channels: 3, name: "other")
            let conv = Convolution(kernel: (3, 3), channels: 2, name: "shared")
            let model = try Model(inputs: [a, b], outputs: [[a --> conv, b --> conv] --> Add()])
            try model.compile(from: RandomParameterSource())
        }),
        // predict.
        ("predict.not-compiled", { _ in _ = try Failure.model().predict(Failure.input()) }),
        ("predict.input-shape", { _ in
            _ = try compiled().predict(Tensor(batch: 1, shape: Shape(height: 4, width: 4, channels: 3), values: [Float](repeating: 0, count: 48)))
        }),
        ("predict.value-count", { _ in
            var input = try Failure.input()
            input.values.removeLast()
            _ = try compiled().predict(input)
        }),
        ("predict.batch", { _ in
            var input = try Failure.input()
            input.batch = 0
            input.values = []
            _ = try compiled().predict(input)
        }),
        ("predict.tensor-count", { _ in _ = try compiled().predict([Failure.input(), Failure.input()]) }),
        ("predict.mixed-batch", { _ in
            let p = Input(width: 1, height: 1, channels: 1, name: "p"), q = Input(width: 1, height: 1, channels: 1, name: "q")
            let model = try Model(inputs: [p, q], outputs: [[p, q] --> Add()])
            try model.compile(from: ArrayParameterSource([:]))
            let shape = Shape(height: 1, width: 1, channels: 1)
            _ = try model.predict([Tensor(batch: 1, shape: shape, values: [1]), Tensor(batch: 2, shape: shape, values: [1, 2])])
        }),
        ("predict.single-on-multi", { _ in
            let p = Input(width: 1, height: 1, channels: 1, name: "p"), q = Input(width: 1, height: 1, channels: 1, name: "q")
            let model = try Model(inputs: [p, q], outputs: [[p, q] --> Add()])
            try model.compile(from: ArrayParameterSource([:]))
            _ = try model.predict(Tensor(batch: 1, shape: Shape(height: 1, width: 1, channels: 1), values: [1]))
        }),
        ("predict.output-buffer", { _ in
            let model = try compiled()
            let input = [Float](repeating: 0, count: 32)
            var output = [Float](repeating: 0, count: 3)
            try input.withUnsafeBufferPointer { i in try output.withUnsafeMutableBufferPointer { o in try model.predict(i, batch: 1, into: o) } }
        }),
        ("predict.batch-memory", { _ in
            let model = try compiled()
            let batch = Int.max / 64  // batch × 32 input floats fits; the activation buffers do not
            let storage = UnsafeMutablePointer<Float>.allocate(capacity: 1)
            defer { storage.deallocate() }
            let output = UnsafeMutableBufferPointer(start: storage, count: batch * 2)
            try model.predict(UnsafeBufferPointer(start: storage, count: batch * 32), batch: batch, into: output)
        }),
        ("predict.batch-int32", { _ in
            let model = try compiled()
            let batch = 1 << 28  // × 16 pixels = 2^32 GEMM rows
            let storage = UnsafeMutablePointer<Float>.allocate(capacity: 1)
            defer { storage.deallocate() }
            let output = UnsafeMutableBufferPointer(start: storage, count: batch * 2)
            try model.predict(UnsafeBufferPointer(start: storage, count: batch * 32), batch: batch, into: output)
        }),
        // Open input sizes.
        ("open.parameters-depend-on-size", { _ in
            let image = Input(channels: 2, name: "image")
            try Model(input: image, output: image --> Flatten(name: "flat") --> Dense(neurons: 3, name: "fc"))
                .compile(from: RandomParameterSource(seed: 1))
        }),
        ("open.size-does-not-fit", { _ in
            let image = Input(channels: 2, name: "image")
            let model = try Model(input: image, output: image --> Convolution(kernel: (5, 5), channels: 2, padding: .valid, name: "conv"))
            try model.compile(from: RandomParameterSource(seed: 1))
            _ = try model.predict(Tensor(zeros: Shape(height: 3, width: 4, channels: 2)))
        }),
        ("open.invalid-size", { _ in
            let image = Input(channels: 2, name: "image")
            let model = try Model(input: image, output: image --> Activation(.relu))
            try model.compile(from: RandomParameterSource(seed: 1))
            var output = [Float](repeating: 0, count: 4)
            try [Float](repeating: 0, count: 4).withUnsafeBufferPointer { i in
                try output.withUnsafeMutableBufferPointer { o in
                    try model.predict(i, shape: Shape(height: -2, width: -1, channels: 2), batch: 1, into: o)
                }
            }
        }),
        ("open.shape-needed", { _ in
            let image = Input(channels: 2, name: "image")
            let model = try Model(input: image, output: image --> Activation(.relu))
            try model.compile(from: RandomParameterSource(seed: 1))
            var output = [Float](repeating: 0, count: 4)
            try [Float](repeating: 0, count: 4).withUnsafeBufferPointer { i in
                try output.withUnsafeMutableBufferPointer { o in try model.predict(i, batch: 1, into: o) }
            }
        }),
        ("open.cached-sizes", { _ in
            let image = Input(channels: 2, name: "image")
            try Model(input: image, output: image --> Activation(.relu)).compile(cachedSizes: 0, from: RandomParameterSource(seed: 1))
        }),
        ("tensor.batch", { _ in _ = try Tensor(batch: 0, shape: Shape(height: 1, width: 1, channels: 1), values: []) }),
        ("tensor.count", { _ in _ = try Tensor(batch: 1, shape: Shape(height: 1, width: 1, channels: 3), values: [1, 2]) }),
        // Parameters, any source.
        ("param.missing", { _ in
            var tensors = Dictionary(uniqueKeysWithValues: Failure.tensors.map { ($0.name, $0.values) })
            tensors["fc_b"] = nil
            try Failure.model().compile(from: ArrayParameterSource(tensors))
        }),
        ("param.closure-error", { _ in
            struct Offline: Error {}
            try Failure.model().compile { _, _, _ in throw Offline() }
        }),
        ("param.count", { _ in
            var tensors = Dictionary(uniqueKeysWithValues: Failure.tensors.map { ($0.name, $0.values) })
            tensors["conv_b"] = [1, 2]
            try Failure.model().compile(from: ArrayParameterSource(tensors))
        }),
        ("param.unused", { _ in
            var tensors = Dictionary(uniqueKeysWithValues: Failure.tensors.map { ($0.name, $0.values) })
            tensors["conv2_W"] = [1]
            try Failure.model().compile(from: ArrayParameterSource(tensors))
        }),
        ("param.non-finite", { _ in
            var tensors = Dictionary(uniqueKeysWithValues: Failure.tensors.map { ($0.name, $0.values) })
            tensors["fc_W"]![5] = .nan
            try Failure.model().compile(validateParameters: true, from: ArrayParameterSource(tensors))
        }),
        ("param.variance", { _ in
            let model = try Self.model(BatchNormalization(name: "bn"))
            try model.compile(from: ArrayParameterSource(["bn_gamma": [1, 1], "bn_beta": [0, 0], "bn_mean": [0, 0], "bn_variance": [1, -2]]))
        }),
        ("param.int32", { _ in
            let wide = Input(width: 1, height: 1, channels: 1 << 16, name: "wide")
            try Model(input: wide, output: wide --> Dense(neurons: 1 << 16, name: "huge")).compile(from: RandomParameterSource())
        }),
        // One file per tensor.
        ("dir.not-a-directory", { dir in _ = try DirectoryParameterSource(directory: dir.appendingPathComponent("weights")) }),
        ("dir.missing-file", { dir in
            try FileManager.default.removeItem(at: dir.appendingPathComponent("fc_b.bin"))
            try Failure.model().compile(from: DirectoryParameterSource(directory: dir))
        }),
        ("dir.short-file", { dir in
            try Failure.write(Array(Failure.tensors[0].values.dropLast()), to: dir.appendingPathComponent("conv_W.bin"))
            try Failure.model().compile(from: DirectoryParameterSource(directory: dir))
        }),
        ("dir.long-file", { dir in
            try Failure.write(Failure.tensors[2].values + [0], to: dir.appendingPathComponent("fc_W.bin"))
            try Failure.model().compile(from: DirectoryParameterSource(directory: dir))
        }),
        ("dir.empty-file", { dir in
            try Failure.write(bytes: [], to: dir.appendingPathComponent("fc_W.bin"))
            try Failure.model().compile(from: DirectoryParameterSource(directory: dir))
        }),
        ("dir.directory-as-file", { dir in
            try FileManager.default.removeItem(at: dir.appendingPathComponent("conv_b.bin"))
            try FileManager.default.createDirectory(at: dir.appendingPathComponent("conv_b.bin"), withIntermediateDirectories: false)
            try Failure.model().compile(from: DirectoryParameterSource(directory: dir))
        }),
        ("dir.unused-file", { dir in
            try Failure.write([1], to: dir.appendingPathComponent("conv2_W.bin"))
            try Failure.model().compile(from: DirectoryParameterSource(directory: dir))
        }),
        // One blob with an index.
        ("blob.missing-file", { dir in _ = try BlobParameterSource(url: dir.appendingPathComponent("weights.bin"), index: [:]) }),
        ("blob.directory", { dir in _ = try BlobParameterSource(url: dir, index: [:]) }),
        ("blob.past-end", { dir in _ = try BlobParameterSource(url: blob(dir), index: ["fc_b": .init(offset: 616, count: 2)]) }),
        ("blob.overlap", { dir in
            _ = try BlobParameterSource(url: blob(dir), index: ["conv_W": .init(offset: 0, count: 54), "conv_b": .init(offset: 200, count: 3)])
        }),
        ("blob.negative-offset", { dir in _ = try BlobParameterSource(url: blob(dir), index: ["conv_b": .init(offset: -4, count: 3)]) }),
        ("blob.negative-count", { dir in _ = try BlobParameterSource(url: blob(dir), index: ["conv_b": .init(offset: 216, count: -3)]) }),
        ("blob.overflow", { dir in _ = try BlobParameterSource(url: blob(dir), index: ["fc_b": .init(offset: Int.max - 3, count: 2)]) }),
        ("blob.gigantic", { dir in _ = try BlobParameterSource(url: blob(dir), index: ["conv_W": .init(offset: 0, count: Int.max)]) }),
        ("blob.misaligned", { dir in _ = try BlobParameterSource(url: blob(dir), index: ["fc_b": .init(offset: 614, count: 1)]) }),
        ("blob.wrong-count", { dir in
            var index = try Failure.writeBlob(blob(dir))
            index["fc_W"]!.count = 95
            try Failure.model().compile(from: BlobParameterSource(url: blob(dir), index: index))
        }),
        ("blob.missing-entry", { dir in
            var index = try Failure.writeBlob(blob(dir))
            index["conv_b"] = nil
            try Failure.model().compile(from: BlobParameterSource(url: blob(dir), index: index))
        }),
        ("blob.unused-entry", { dir in
            var index = try Failure.writeBlob(blob(dir))
            index["conv2_W"] = .init(offset: 0, count: 0)
            try Failure.model().compile(from: BlobParameterSource(url: blob(dir), index: index))
        }),
        // Model files.
        ("file.missing", { dir in _ = try ModelFile(contentsOf: dir.appendingPathComponent("model.json")) }),
        ("file.directory", { dir in _ = try ModelFile(contentsOf: dir) }),
        ("file.device", { _ in _ = try ModelFile(contentsOf: URL(fileURLWithPath: "/dev/zero")) }),
        ("file.not-json", { _ in _ = try modelFile("{\"format\": \"anvil.model\", \"vers") }),
        ("file.not-object", { _ in _ = try modelFile("[1, 2]") }),
        ("file.format", { _ in _ = try modelFile(#"{"format": "onnx", "version": 1}"#) }),
        ("file.version", { _ in _ = try modelFile(#"{"format": "anvil.model", "version": 3}"#) }),
        ("file.missing-field", { _ in _ = try modelFile(#"{"format": "anvil.model", "version": 1, "inputs": [], "outputs": []}"#) }),
        ("file.wrong-type", { _ in _ = try modelFile(layers: #"{"name": "out", "type": "Dense", "inputs": ["x"], "neurons": 3.5}"#) }),
        ("file.pair", { _ in _ = try modelFile(layers: #"{"name": "out", "type": "MaxPooling", "inputs": ["x"], "kernel": [2, 2, 2]}"#) }),
        ("file.number-range", { _ in _ = try modelFile(layers: #"{"name": "out", "type": "BatchNormalization", "inputs": ["x"], "epsilon": 1e999}"#) }),
        ("file.unknown-layer", { _ in _ = try modelFile(layers: #"{"name": "out", "type": "Upsample", "inputs": ["x"]}"#) }),
        ("file.unknown-activation", { _ in _ = try modelFile(layers: #"{"name": "out", "type": "Activation", "inputs": ["x"], "function": "swish"}"#) }),
        ("file.unknown-padding", { _ in
            _ = try modelFile(layers: #"{"name": "out", "type": "Convolution", "inputs": ["x"], "kernel": [3, 3], "channels": 2, "padding": "full"}"#)
        }),
        ("file.duplicate-name", { _ in
            _ = try modelFile(layers: #"{"name": "out", "type": "Softmax", "inputs": ["x"]}, {"name": "out", "type": "Softmax", "inputs": ["x"]}"#)
        }),
        ("file.dangling-input", { _ in _ = try modelFile(layers: #"{"name": "out", "type": "Softmax", "inputs": ["nowhere"]}"#) }),
        ("file.dangling-output", { _ in _ = try modelFile(layers: #"{"name": "out", "type": "Softmax", "inputs": ["x"]}"#, outputs: #"["ghost"]"#) }),
        ("file.cycle", { _ in
            _ = try modelFile(layers: #"{"name": "a", "type": "Add", "inputs": ["x", "out"]}, {"name": "out", "type": "Softmax", "inputs": ["a"]}"#)
        }),
        ("file.unused-layer", { _ in
            _ = try modelFile(layers: #"{"name": "out", "type": "Softmax", "inputs": ["x"]}, {"name": "spare", "type": "Softmax", "inputs": ["x"]}"#)
        }),
        ("file.shares", { _ in _ = try modelFile(layers: #"{"name": "out", "type": "Dense", "inputs": ["x"], "sharesParametersWith": "ghost"}"#) }),
        ("file.layout", { _ in
            _ = try modelFile(layers: #"{"name": "out", "type": "Softmax", "inputs": ["x"]}"#, extra: #", "parameters": {"layout": "caffe2", "source": {}}"#)
        }),
        ("file.source-type", { _ in
            _ = try modelFile(layers: #"{"name": "out", "type": "Softmax", "inputs": ["x"]}"#,
                              extra: #", "parameters": {"source": {"type": "http", "path": "x"}}"#)
        }),
        ("file.index-type", { dir in
            _ = try modelFile(layers: #"{"name": "out", "type": "Softmax", "inputs": ["x"]}"#,
                              extra: #", "parameters": {"source": {"type": "blob", "path": "blob.dat", "tensors": {"out_W": {"offset": "0", "count": 1}}}}"#,
                              directory: dir)
        }),
        ("file.write-non-finite", { _ in _ = try model(Activation(.leakyRelu(alpha: .nan), name: "act")).modelFileJSON() }),
    ]

    /// `blob.dat`: not `.bin`, so a directory source over `dir` does not list it.
    static func blob(_ dir: URL) -> URL { dir.appendingPathComponent("blob.dat") }

    static func compiled() throws -> Model {
        let model = try Failure.model()
        try model.compile(from: Failure.arraySource)
        return model
    }

    static func modelFile(_ text: String, directory: URL = URL(fileURLWithPath: "/")) throws -> ModelFile {
        try ModelFile(json: JSONValue.parse(Data(text.utf8), source: "model.json"), source: "model.json", directory: directory)
    }

    static func modelFile(layers: String, outputs: String = #"["out"]"#, extra: String = "", directory: URL = URL(fileURLWithPath: "/")) throws -> ModelFile {
        try modelFile(#"{"format": "anvil.model", "version": 1, "inputs": [{"name": "x", "shape": [4, 4, 2]}], "layers": [\#(layers)], "outputs": \#(outputs)\#(extra)}"#,
                      directory: directory)
    }

    /// The error each entry produces now: `(type.code, message with the directory as <dir>)`.
    static func produce(_ entry: Entry) throws -> (String, String) {
        let dir = try Failure.temporaryDirectory("catalogue")
        defer { Failure.cleanUp(dir) }
        try Failure.writeDirectory(dir)
        _ = try Failure.writeBlob(blob(dir))
        do {
            try entry.trigger(dir)
            return ("nothing thrown", "")
        } catch let error as AnvilError {
            return ("AnvilError.\(error.code)", error.message.replacingOccurrences(of: dir.path, with: "<dir>"))
        } catch {
            return ("\(type(of: error))", "\(error)")
        }
    }

    @Test("Every catalogued AnvilError is produced as docs/errors.md shows it")
    func documentMatchesCode() throws {
        try ErrorCatalogue.expectDocumented(Self.entries, id: { $0.id }, produce: Self.produce)
    }
}
