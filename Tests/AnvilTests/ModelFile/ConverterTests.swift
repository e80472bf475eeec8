import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Models converted from Keras, Caffe and ONNX by `Scripts/convert_*.py` (fixtures made by
/// `Scripts/fixtures/converter_fixtures.py`): each runs a real photograph and must reproduce the source
/// framework's output.
@Suite struct ConverterTests {
    static let cases = ["caffe_resnet", "caffe_vgg16", "keras_functional", "keras_sequential", "onnx_helper", "onnx_torch",
                        "onnx_layers", "torch_layers", "keras_layers"]
    static let root = Fixtures.root.appendingPathComponent("converters")

    /// Indices of the `k` largest values, largest first.
    static func top(_ values: [Float], _ k: Int) -> [Int] {
        Array(values.indices.sorted { values[$0] > values[$1] || (values[$0] == values[$1] && $0 < $1) }.prefix(k))
    }

    @Test func fixturesArePresent() {
        for name in Self.cases {
            for file in ["model.json", "weights.bin", "input.f32", "expected.f32"] {
                #expect(FileManager.default.fileExists(atPath: Self.root.appendingPathComponent("\(name)/\(file)").path), "\(name)/\(file)")
            }
        }
    }

    @Test(arguments: cases)
    func matchesSourceFramework(_ name: String) throws {
        let directory = Self.root.appendingPathComponent(name)
        let file = try ModelFile(contentsOf: directory.appendingPathComponent("model.json"))
        let model = try file.compiledModel(validateParameters: true)
        let input = try Tensor(batch: 1, shape: model.inputShapes[0], values: Fixtures.floats(directory.appendingPathComponent("input.f32")))
        let output = try model.predict(input)
        let expected = try Fixtures.floats(directory.appendingPathComponent("expected.f32"))
        try #require(output.values.count == expected.count, "\(name): \(output.values.count) outputs, expected \(expected.count)")
        let range = expected.max()! - expected.min()!
        let worst = zip(output.values, expected).map { abs($0 - $1) }.max()!
        let k = expected.count >= 5 ? 5 : 1
        let agree = Self.top(output.values, k) == Self.top(expected, k)
        print("converter fixture \(name): \(file.layout.rawValue) layout, \(model.layers.count) layers, max abs diff \(worst) "
              + "= \(worst / range) x range \(range); top-\(k) \(agree ? "identical" : "DIFFERENT") \(Self.top(output.values, k))")
        #expect(worst <= 1e-3 * range, "\(name): max abs diff \(worst) exceeds 1e-3 x range \(range)")
        #expect(agree, "\(name): top-\(k) \(Self.top(output.values, k)) vs expected \(Self.top(expected, k))")
    }

    @Test(arguments: cases)
    func batchesGiveTheSameResult(_ name: String) throws {
        let directory = Self.root.appendingPathComponent(name)
        let model = try ModelFile(contentsOf: directory.appendingPathComponent("model.json")).compiledModel()
        let image = try Fixtures.floats(directory.appendingPathComponent("input.f32"))
        let single = try model.predict(Tensor(batch: 1, shape: model.inputShapes[0], values: image))
        let mirrored = image.reversed().map { $0 * 0.5 }
        let pair = try model.predict(Tensor(batch: 2, shape: model.inputShapes[0], values: image + mirrored))
        // Batched GEMMs may sum in another order: equal to float rounding.
        let range = single.values.max()! - single.values.min()!
        let worst = zip(pair.image(0), single.values).map { abs($0 - $1) }.max()!
        #expect(worst <= 1e-5 * range, "\(name): batch of 2 differs by \(worst)")
    }

    @Test func layoutsAreDeclared() throws {
        let layouts = try Self.cases.map { name in
            (name, try ModelFile(contentsOf: Self.root.appendingPathComponent("\(name)/model.json")).layout)
        }
        for (name, layout) in layouts {
            #expect(layout == (name.hasPrefix("keras") ? .tensorflow : .pytorch), "\(name)")
        }
    }

    static func document(layers: String) -> JSONValue? {
        let text = """
        { "format": "anvil.model", "version": 1,
          "inputs": [ { "name": "image", "shape": [8, 8, 3] } ],
          "layers": [ \(layers) ],
          "outputs": ["last"] }
        """
        return try? JSONValue.parse(Data(text.utf8), source: "inline")
    }

    @Test func unknownLayerTypeIsAClearError() throws {
        let json = try #require(Self.document(layers: """
            { "name": "last", "type": "SpatialTransformer", "inputs": ["image"], "size": 5 }
            """))
        let error = #expect(throws: AnvilError.self) {
            try ModelFile(json: json, source: "converted.json", directory: URL(fileURLWithPath: "/tmp"))
        }
        #expect(error?.code == .invalidFile)
        #expect(error?.message.contains("layer 'last'") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("unknown layer type 'SpatialTransformer'") == true, "\(error?.message ?? "")")
    }

    @Test func unknownActivationIsAClearError() throws {
        let json = try #require(Self.document(layers: """
            { "name": "last", "type": "Activation", "inputs": ["image"], "function": "swooshy" }
            """))
        let error = #expect(throws: AnvilError.self) {
            try ModelFile(json: json, source: "converted.json", directory: URL(fileURLWithPath: "/tmp"))
        }
        #expect(error?.message.contains("layer 'last'") == true)
        #expect(error?.message.contains("unknown activation 'swooshy'") == true)
    }

    @Test func convertedModelWithAMissingTensorNamesIt() throws {
        // The Keras fixture's graph with one blob entry removed.
        let url = Self.root.appendingPathComponent("keras_sequential/model.json")
        var text = try String(contentsOf: url, encoding: .utf8)
        let json = try JSONValue.parse(Data(text.utf8), source: url.path)
        guard case .object(let tensors)? = json["parameters"]?["source"]?["tensors"], let first = tensors.first?.0 else {
            Issue.record("no tensors in \(url.path)")
            return
        }
        text = text.replacingOccurrences(of: "\"\(first)\":", with: "\"renamed_\(first)\":")
        let edited = try JSONValue.parse(Data(text.utf8), source: "edited")
        let file = try ModelFile(json: edited, source: "edited", directory: url.deletingLastPathComponent())
        let error = #expect(throws: AnvilError.self) { try file.compiledModel() }
        #expect(error?.code == .missingParameter)
        #expect(error?.message.contains("'\(first)'") == true, "\(error?.message ?? "")")
    }
}
