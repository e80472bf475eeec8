import Anvil
import Foundation
import Testing
@testable import AnvilONNX
@testable import AnvilTestSupport

/// `RoiAlign` through the importer beyond ONNX's node tests: constant regions and indices in a
/// fixed-size graph (converted as one item on the retry), checked on feature maps linear in
/// x and y, where bilinear sampling is exact and each cell is the map at its bin's centre; and
/// an open batch refused with a message naming the node and what to do.
@Suite struct ONNXRoiAlignTests {
    static func dims(_ values: [Int64?]) -> Onnx_TypeProto {
        var type = Onnx_TypeProto.Tensor()
        type.elemType = 1
        var shape = Onnx_TensorShapeProto()
        shape.dim = values.map { value in
            var d = Onnx_TensorShapeProto.Dimension()
            if let value { d.dimValue = value } else { d.dimParam = "N" }
            return d
        }
        type.shape = shape
        var result = Onnx_TypeProto()
        result.tensorType = type
        return result
    }

    /// X [n, 3, 6, 6] → RoiAlign(constant rois, batch indices; 2 × 2, sampling 2, half_pixel) → Y.
    static func model(batch: Int64?) -> Onnx_ModelProto {
        var model = Onnx_ModelProto()
        model.irVersion = 8
        var opset = Onnx_OperatorSetIdProto()
        opset.version = 17
        model.opsetImport = [opset]
        var x = Onnx_ValueInfoProto()
        x.name = "X"
        x.type = dims([batch, 3, 6, 6])
        model.graph.input = [x]
        var rois = Onnx_TensorProto()
        rois.name = "rois"
        rois.dataType = 1
        rois.dims = [2, 4]
        rois.floatData = [1, 1.5, 3, 3.5, 0.5, 1, 4.5, 4]
        var indices = Onnx_TensorProto()
        indices.name = "batch_indices"
        indices.dataType = 7
        indices.dims = [2]
        indices.int64Data = [1, 0]
        model.graph.initializer = [rois, indices]
        var node = Onnx_NodeProto()
        node.opType = "RoiAlign"
        node.name = "pool"
        node.input = ["X", "rois", "batch_indices"]
        node.output = ["Y"]
        func attribute(_ name: String, _ value: Int) -> Onnx_AttributeProto {
            var a = Onnx_AttributeProto()
            a.name = name
            a.type = .int
            a.i = Int64(value)
            return a
        }
        var mode = Onnx_AttributeProto()
        mode.name = "coordinate_transformation_mode"
        mode.type = .string
        mode.s = Data("half_pixel".utf8)
        node.attribute = [attribute("output_height", 2), attribute("output_width", 2), attribute("sampling_ratio", 2), mode]
        model.graph.node = [node]
        var y = Onnx_ValueInfoProto()
        y.name = "Y"
        y.type = dims([2, 3, 2, 2])
        model.graph.output = [y]
        return model
    }

    @Test func constantRegionsConvertAsOneItemAndPoolTheNamedImage() throws {
        let conversion = try ONNXConversion(serialized: try Self.model(batch: 2).serializedBytes())
        // Map n, channel c: 2x + 3y + 10c + 100n, held whole in ONNX's order.
        var values: [Float] = []
        for n in 0 ..< 2 { for c in 0 ..< 3 { for y in 0 ..< 6 { for x in 0 ..< 6 { values.append(Float(2 * x + 3 * y + 10 * c + 100 * n)) } } } }
        #expect(conversion.layouts["X"]?.permutation == [1, 2, 3, 4])
        #expect(conversion.layouts["Y"]?.permutation == [1, 2, 3, 4])
        let model = try Model(compiling: conversion.modelFile())
        let output = try model.predict([try Tensor(batch: 1, shape: try Shape(dimensions: [2, 3, 6, 6]), values: values)])[0]
        #expect(output.shape.dimensions == [2, 3, 2, 2])
        let rois: [[Double]] = [[1, 1.5, 3, 3.5], [0.5, 1, 4.5, 4]], items = [1, 0]
        var expected: [Float] = []
        for (r, box) in rois.enumerated() { for c in 0 ..< 3 { for py in 0 ..< 2 { for px in 0 ..< 2 {
            // half_pixel: corners shifted by −0.5; the cell's samples average to its bin's centre.
            let (x1, y1) = (box[0] - 0.5, box[1] - 0.5), bw = (box[2] - box[0]) / 2, bh = (box[3] - box[1]) / 2
            let cx = x1 + (Double(px) + 0.5) * bw, cy = y1 + (Double(py) + 0.5) * bh
            expected.append(Float(2 * cx + 3 * cy + Double(10 * c + 100 * items[r])))
        } } } }
        for (k, (got, want)) in zip(output.values, expected).enumerated() { #expect(abs(got - want) <= 1e-4, "value \(k): \(got) vs \(want)") }
    }

    @Test func anOpenBatchIsRefusedNamingTheNode() throws {
        #expect {
            _ = try ONNXConversion(serialized: try Self.model(batch: nil).serializedBytes())
        } throws: { error in
            let message = (error as? ONNXImportError)?.message ?? ""
            return message.contains("node 'pool' (RoiAlign)") && message.contains("one item") && message.contains("fixed input sizes")
        }
    }
}
