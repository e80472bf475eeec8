import Foundation
import SwiftProtobuf
import Testing
@testable import AnvilONNX
@testable import AnvilTestSupport

/// `.onnx` files opened from Swift against ONNX Runtime's outputs on the same files
/// (Scripts/fixtures/make_onnx_swift_fixtures.py): PyTorch exports with the fused patterns,
/// weights as external data, an open input size.
@Suite struct ONNXModelTests {
    /// A PyTorch export (hard-swish, SiLU, SE, channel shuffle through a shape subgraph,
    /// permute → LayerNorm → permute, GELU's erf formula, flatten → Linear) matches ONNX Runtime.
    @Test func tinyCNNMatchesONNXRuntime() throws {
        let model = try Model(onnx: ONNXSupport.fixtures.appendingPathComponent("tiny_cnn.onnx"))
        let input = try Tensor(batch: 1, shape: Shape(height: 32, width: 32, channels: 3),
                               values: Fixtures.floats(ONNXSupport.fixtures.appendingPathComponent("tiny_cnn_input.f32")))
        let output = try model.predict(input)
        let expected = try Fixtures.floats(ONNXSupport.fixtures.appendingPathComponent("tiny_cnn_output.f32"))
        #expect(output.values.count == expected.count)
        #expect(ONNXSupport.mismatches(output.values, expected, rtol: 1e-4, atol: 1e-6, label: "tiny_cnn") == 0)
    }

    /// The exporter's patterns become single layers (the Python converter's fusions, ported).
    @Test func patternsAreFused() throws {
        let conversion = try ONNXConversion(contentsOf: ONNXSupport.fixtures.appendingPathComponent("tiny_cnn.onnx"))
        guard case .array(let layers)? = try conversion.modelFileJSON()["layers"] else { Issue.record("no layers"); return }
        let types = layers.compactMap { layer -> String? in if case .string(let t)? = layer["type"] { return t }; return nil }
        let functions = layers.compactMap { layer -> String? in
            if case .string(let f)? = layer["function"] { return f }
            if case .string(let f)? = layer["function"]?["type"] { return f }
            return nil
        }
        #expect(types.contains("ChannelShuffle"))
        #expect(types.contains("LayerNormalization"))
        #expect(!types.contains("Transpose"))  // permute → LayerNorm → permute moves no data
        #expect(types.filter { $0 == "Dense" }.count == 1)
        for function in ["hardSwish", "silu", "gelu", "relu6"] { #expect(functions.contains(function), "\(function)") }
        #expect(!types.contains("Elementwise") || functions.count >= 4)
    }

    /// Weights stored as ONNX external data (one file, offsets) give the same outputs as inline ones.
    @Test func externalDataMatchesInlineWeights() throws {
        let inline = try Model(onnx: ONNXSupport.fixtures.appendingPathComponent("tiny_cnn.onnx"))
        let external = try Model(onnx: ONNXSupport.fixtures.appendingPathComponent("external/tiny_cnn.onnx"))
        let input = try Tensor(batch: 1, shape: Shape(height: 32, width: 32, channels: 3),
                               values: Fixtures.floats(ONNXSupport.fixtures.appendingPathComponent("tiny_cnn_input.f32")))
        #expect(try inline.predict(input).values == external.predict(input).values)
        let expected = try Fixtures.floats(ONNXSupport.fixtures.appendingPathComponent("tiny_cnn_output.f32"))
        #expect(ONNXSupport.mismatches(try external.predict(input).values, expected, rtol: 1e-4, atol: 1e-6, label: "external") == 0)
    }

    /// An input exported with dynamic height and width stays open and runs at every size.
    @Test(arguments: [(24, 24), (17, 30)])
    func openSizeMatchesONNXRuntime(_ size: (Int, Int)) throws {
        let model = try Model(onnx: ONNXSupport.fixtures.appendingPathComponent("open_size.onnx"))
        #expect(model.openInputShapes[0].dimensions[0] == nil)
        let (h, w) = size
        let input = try Tensor(batch: 1, shape: Shape(height: h, width: w, channels: 3),
                               values: Fixtures.floats(ONNXSupport.fixtures.appendingPathComponent("open_size_input_\(h)x\(w).f32")))
        let expected = try Fixtures.floats(ONNXSupport.fixtures.appendingPathComponent("open_size_output_\(h)x\(w).f32"))
        #expect(ONNXSupport.mismatches(try model.predict(input).values, expected, rtol: 1e-4, atol: 1e-6, label: "\(h)x\(w)") == 0)
    }

    /// paddle2onnx writes open dimensions as -1, some TensorFlow exporters as 0 (not as a name,
    /// nor unset): the same file with its open axes written either way stays open and matches
    /// ONNX Runtime at every size.
    @Test(arguments: [(24, 24, -1), (17, 30, -1), (24, 24, 0), (17, 30, 0)])
    func openDimensionsWrittenAsMinusOneOrZeroAreOpen(_ size: (Int, Int, Int64)) throws {
        var proto = try Onnx_ModelProto(serializedBytes: try Data(contentsOf: ONNXSupport.fixtures.appendingPathComponent("open_size.onnx")))
        var rewritten = 0
        for index in proto.graph.input.indices {
            for axis in proto.graph.input[index].type.tensorType.shape.dim.indices
            where proto.graph.input[index].type.tensorType.shape.dim[axis].knownValue == nil {
                proto.graph.input[index].type.tensorType.shape.dim[axis].dimValue = size.2
                rewritten += 1
            }
        }
        #expect(rewritten >= 2, "open_size.onnx's height and width are open")
        let directory = try Fixtures.temporaryDirectory(prefix: "onnx-minus-one")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("open_size_minus_one.onnx")
        try proto.serializedData().write(to: url)
        let model = try Model(onnx: url)
        #expect(model.openInputShapes[0].dimensions[0] == nil && model.openInputShapes[0].dimensions[1] == nil)
        let (h, w, marker) = size
        let input = try Tensor(batch: 1, shape: Shape(height: h, width: w, channels: 3),
                               values: Fixtures.floats(ONNXSupport.fixtures.appendingPathComponent("open_size_input_\(h)x\(w).f32")))
        let expected = try Fixtures.floats(ONNXSupport.fixtures.appendingPathComponent("open_size_output_\(h)x\(w).f32"))
        #expect(ONNXSupport.mismatches(try model.predict(input).values, expected, rtol: 1e-4, atol: 1e-6, label: "\(marker), \(h)x\(w)") == 0)
    }

    /// `write(to:)` writes a model file that Anvil's own loader reads back to the same outputs.
    @Test func writtenModelFileLoadsBack() throws {
        let directory = try FileManager.default.url(for: .itemReplacementDirectory, in: .userDomainMask,
                                                    appropriateFor: URL(fileURLWithPath: NSTemporaryDirectory()), create: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = ONNXSupport.fixtures.appendingPathComponent("tiny_cnn.onnx")
        let written = try ONNXConversion(contentsOf: url).write(to: directory)
        let reloaded = try ModelFile(contentsOf: written).compiledModel()
        let input = try Tensor(batch: 1, shape: Shape(height: 32, width: 32, channels: 3),
                               values: Fixtures.floats(ONNXSupport.fixtures.appendingPathComponent("tiny_cnn_input.f32")))
        #expect(try reloaded.predict(input).values == Model(onnx: url).predict(input).values)
    }
}
