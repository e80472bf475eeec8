import Foundation
import SwiftProtobuf
import Testing
@testable import AnvilONNX
@testable import AnvilTestSupport

/// Hostile `.onnx` files — truncated, wrong wire types, huge or negative dimensions, cycles, deep
/// nesting, external data past the end of its file — are thrown as ``ONNXImportError`` naming the
/// field, node or file at fault; never a crash or a half-loaded model.
@Suite struct ONNXHostileFileTests {
    /// A valid small model: image [1, 2, 4, 4] → Conv(W) → Relu → output.
    static func model(weightDims: [Int64] = [3, 2, 1, 1], weights: [Float]? = nil, inputDims: [Int64] = [1, 2, 4, 4]) -> Onnx_ModelProto {
        var model = Onnx_ModelProto()
        model.irVersion = 8
        var opset = Onnx_OperatorSetIdProto()
        opset.version = 17
        model.opsetImport = [opset]
        var graph = Onnx_GraphProto()
        graph.name = "hostile"
        var input = Onnx_ValueInfoProto()
        input.name = "image"
        var tensorType = Onnx_TypeProto.Tensor()
        tensorType.elemType = 1
        var shape = Onnx_TensorShapeProto()
        shape.dim = inputDims.map { var d = Onnx_TensorShapeProto.Dimension(); d.dimValue = $0; return d }
        tensorType.shape = shape
        input.type.tensorType = tensorType
        graph.input = [input]
        var w = Onnx_TensorProto()
        w.name = "conv.weight"
        w.dataType = 1
        w.dims = weightDims
        w.floatData = weights ?? [Float](repeating: 0.5, count: 6)
        graph.initializer = [w]
        var conv = Onnx_NodeProto()
        conv.opType = "Conv"
        conv.name = "conv"
        conv.input = ["image", "conv.weight"]
        conv.output = ["c"]
        var relu = Onnx_NodeProto()
        relu.opType = "Relu"
        relu.name = "relu"
        relu.input = ["c"]
        relu.output = ["output"]
        graph.node = [conv, relu]
        var output = Onnx_ValueInfoProto()
        output.name = "output"
        graph.output = [output]
        model.graph = graph
        return model
    }

    /// The error converting `model`'s bytes (the test fails when it converts).
    static func error(_ bytes: Data, directory: URL? = nil) -> ONNXImportError? {
        do {
            _ = try ONNXConversion(serialized: bytes, directory: directory)
            Issue.record("the hostile model converted")
            return nil
        } catch let error as ONNXImportError {
            return error
        } catch {
            Issue.record("not an ONNXImportError: \(error)")
            return nil
        }
    }

    @Test func theBaseModelConverts() throws {
        let conversion = try ONNXConversion(serialized: try Self.model().serializedBytes())
        #expect(conversion.tensors.map(\.name) == ["conv_W"])
    }

    @Test func everyTruncationThrows() throws {
        let bytes: Data = try Self.model().serializedBytes()
        for length in 0 ..< bytes.count {
            do {
                _ = try ONNXConversion(serialized: bytes.prefix(length))
                // A cut at a field boundary may leave a smaller valid model; it must then be whole.
            } catch is ONNXImportError {
            } catch {
                Issue.record("length \(length): \(error)")
            }
        }
        let message = Self.error(bytes.prefix(bytes.count - 3))?.message ?? ""
        #expect(message.contains("truncated") || message.contains("malformed") || message.contains("node") || message.contains("graph"), "\(message)")
    }

    @Test func wrongWireTypeThrows() throws {
        var bytes: Data = try Self.model().serializedBytes()
        // ModelProto field 1 (ir_version) is a varint (tag 0x08); make it length-delimited with a bogus length.
        #expect(bytes.first == 0x08)
        bytes[bytes.startIndex] = 0x0A
        bytes.insert(0x7F, at: bytes.startIndex + 1)
        let message = Self.error(bytes)?.message ?? ""
        #expect(message.contains("not a valid ONNX model"), "\(message)")
    }

    @Test func hugeAndNegativeDimensionsAreNamed() throws {
        for dims: [Int64] in [[1 << 40, 2, 1, 1], [-3, 2, 1, 1], [Int64.max, Int64.max, 1, 1]] {
            let message = Self.error(try Self.model(weightDims: dims).serializedBytes())?.message ?? ""
            #expect(message.contains("conv.weight"), "\(dims): \(message)")
        }
        for dims: [Int64] in [[1, 2, 1 << 40, 4], [1, 2, -4, 4]] {
            let message = Self.error(try Self.model(inputDims: dims).serializedBytes())?.message ?? ""
            #expect(message.contains("input 'image'"), "\(dims): \(message)")
        }
    }

    @Test func valueCountMismatchIsNamed() throws {
        let message = Self.error(try Self.model(weights: [1, 2, 3]).serializedBytes())?.message ?? ""
        #expect(message.contains("conv.weight") && message.contains("float_data"), "\(message)")
    }

    @Test func cyclesAreRefused() throws {
        var model = Self.model()
        model.graph.node[0].input = ["image", "conv.weight", "output"]  // conv reads relu's output
        let message = Self.error(try model.serializedBytes())?.message ?? ""
        #expect(message.contains("node 'conv'") && message.contains("cycle"), "\(message)")
    }

    @Test func deepNestingIsRefused() throws {
        var graph = Self.model().graph
        for _ in 0 ..< 200 {
            var attribute = Onnx_AttributeProto()
            attribute.name = "body"
            attribute.type = .graph
            attribute.g = graph
            var node = Onnx_NodeProto()
            node.opType = "If"
            node.attribute = [attribute]
            var outer = Onnx_GraphProto()
            outer.node = [node]
            graph = outer
        }
        var model = Self.model()
        model.graph.node.append(graph.node[0])
        let message = Self.error(try model.serializedBytes())?.message ?? ""
        #expect(message.contains("nest deeper"), "\(message)")
    }

    @Test func externalDataOutsideItsFileIsNamed() throws {
        let directory = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(directory) }
        try Data(count: 16).write(to: directory.appendingPathComponent("w.bin"))
        func external(_ fields: [(String, String)]) throws -> Data {
            var model = Self.model()
            model.graph.initializer[0].floatData = []
            model.graph.initializer[0].dataLocation = .external
            model.graph.initializer[0].externalData = fields.map { var e = Onnx_StringStringEntryProto(); e.key = $0.0; e.value = $0.1; return e }
            return try model.serializedBytes()
        }
        let cases: [([(String, String)], String)] = [
            ([("location", "w.bin"), ("offset", "8")], "runs past the end"),
            ([("location", "w.bin"), ("offset", "4096"), ("length", "24")], "runs past the end"),
            ([("location", "w.bin"), ("offset", "-1")], "offset"),
            ([("location", "../w.bin")], "inside the model's folder"),
            ([("location", "/etc/passwd")], "inside the model's folder"),
            ([("location", "missing.bin")], "missing.bin"),
            ([("location", "w.bin"), ("length", "9")], "length 9"),
            ([("offset", "0")], "no 'location'"),
        ]
        for (fields, wanted) in cases {
            let message = Self.error(try external(fields), directory: directory)?.message ?? ""
            #expect(message.contains("conv.weight") && message.contains(wanted), "\(fields): \(message)")
        }
    }

    @Test func unsupportedNodesAreAllListed() throws {
        var model = Self.model()
        var a = Onnx_NodeProto()
        a.opType = "NonMaxSuppression"
        a.name = "nms"
        a.input = ["output"]
        a.output = ["boxes"]
        var b = Onnx_NodeProto()
        b.opType = "Relu"
        b.name = "custom"
        b.domain = "com.example"
        b.input = ["output"]
        b.output = ["other"]
        model.graph.node += [a, b]
        let error = Self.error(try model.serializedBytes())
        #expect(error?.blockers.count == 2)
        #expect(error?.message.contains("node 'nms' (NonMaxSuppression)") == true)
        #expect(error?.message.contains("domain 'com.example'") == true)
    }

    @Test func aWeightFedAsAGraphInputIsExplained() throws {
        var model = Self.model()
        model.graph.initializer = []
        var weight = Onnx_ValueInfoProto()
        weight.name = "conv.weight"
        weight.type = model.graph.input[0].type
        model.graph.input.append(weight)
        let message = Self.error(try model.serializedBytes())?.message ?? ""
        #expect(message.contains("input 'conv.weight' is a weight fed as a graph input"), "\(message)")
    }

    @Test func aFileThatIsNotONNXIsNamed() throws {
        let directory = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(directory) }
        let url = directory.appendingPathComponent("model.onnx")
        try Data("{\"format\": \"anvil.model\"}".utf8).write(to: url)
        do {
            _ = try Model(onnx: url)
            Issue.record("a JSON file opened as ONNX")
        } catch let error as ONNXImportError {
            #expect(error.message.contains(url.path), "\(error.message)")
        }
        do {
            _ = try Model(onnx: directory.appendingPathComponent("absent.onnx"))
            Issue.record("a missing file opened")
        } catch let error as ONNXImportError {
            #expect(error.message.contains("absent.onnx"), "\(error.message)")
        }
    }
}
