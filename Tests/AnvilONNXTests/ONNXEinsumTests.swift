import Foundation
import Testing
@testable import Anvil
@testable import AnvilONNX
@testable import AnvilTestSupport

/// `Einsum` through the importer against a naive float64 einsum written here (every assignment
/// of the labels, broadcasting axes of extent 1): explicit and implicit outputs, `...`,
/// diagonals, labels summed in one operand, several labels per group, three operands, outer and
/// element-wise products; MaxViT's attention product stays one `MatMul`; bad equations are
/// refused naming the node.
@Suite struct ONNXEinsumTests {
    struct Case: CustomStringConvertible, Sendable {
        let equation: String
        let shapes: [[Int]]
        var description: String { "\(equation) of \(shapes)" }
    }

    static let cases: [Case] = [
        Case(equation: "bij,bjk->bik", shapes: [[2, 3, 4], [2, 4, 5]]),
        Case(equation: "BGHID,BGHJD->BGHIJ", shapes: [[1, 2, 3, 4, 5], [1, 2, 3, 6, 5]]),
        Case(equation: "ij,jk", shapes: [[3, 4], [4, 5]]),
        Case(equation: "i,i", shapes: [[5], [5]]),
        Case(equation: "i,j->ij", shapes: [[3], [4]]),
        Case(equation: "ij,ij->ij", shapes: [[3, 4], [3, 4]]),
        Case(equation: "ij,ij->ij", shapes: [[1, 4], [3, 4]]),
        Case(equation: "ii->i", shapes: [[4, 4]]),
        Case(equation: "bii->bi", shapes: [[2, 3, 3]]),
        Case(equation: "...ii ->...i", shapes: [[3, 5, 5]]),
        Case(equation: "iij->j", shapes: [[3, 3, 4]]),
        Case(equation: "ij->", shapes: [[3, 4]]),
        Case(equation: "ij->i", shapes: [[3, 4]]),
        Case(equation: "ij->ji", shapes: [[3, 4]]),
        Case(equation: "ijk,jil->kl", shapes: [[2, 3, 4], [3, 2, 5]]),
        Case(equation: "bik,bkj->bji", shapes: [[2, 3, 4], [2, 4, 5]]),
        Case(equation: "...ij,...jk->...ik", shapes: [[2, 3, 4], [4, 5]]),
        Case(equation: "ab,bc,cd->ad", shapes: [[2, 3], [3, 4], [4, 5]]),
        Case(equation: "abc,cd->abd", shapes: [[2, 3, 4], [4, 2]]),
        Case(equation: "ab,ab->", shapes: [[3, 4], [3, 4]]),
    ]

    /// A model of one `Einsum` node over float inputs of fixed `shapes` (opset 12).
    static func model(_ equation: String, _ shapes: [[Int]]) -> Onnx_ModelProto {
        var model = Onnx_ModelProto()
        model.irVersion = 8
        var opset = Onnx_OperatorSetIdProto()
        opset.version = 12
        model.opsetImport = [opset]
        var graph = Onnx_GraphProto()
        graph.name = "einsum"
        func info(_ name: String, _ dims: [Int]?) -> Onnx_ValueInfoProto {
            var value = Onnx_ValueInfoProto()
            value.name = name
            var tensorType = Onnx_TypeProto.Tensor()
            tensorType.elemType = 1
            if let dims {
                var shape = Onnx_TensorShapeProto()
                shape.dim = dims.map { var d = Onnx_TensorShapeProto.Dimension(); d.dimValue = Int64($0); return d }
                tensorType.shape = shape
            }
            value.type.tensorType = tensorType
            return value
        }
        graph.input = shapes.indices.map { info("x\($0)", shapes[$0]) }
        var node = Onnx_NodeProto()
        node.opType = "Einsum"
        node.name = "einsum"
        node.input = shapes.indices.map { "x\($0)" }
        node.output = ["y"]
        var attribute = Onnx_AttributeProto()
        attribute.name = "equation"
        attribute.type = .string
        attribute.s = Data(equation.utf8)
        node.attribute = [attribute]
        graph.node = [node]
        graph.output = [info("y", nil)]
        model.graph = graph
        return model
    }

    /// The naive einsum in float64: labels and output as NumPy reads `equation`, each output
    /// value the sum over every assignment of the other labels.
    static func naive(_ equation: String, _ shapes: [[Int]], _ values: [[Float]]) -> (shape: [Int], values: [Double]) {
        let compact = equation.filter { !$0.isWhitespace }
        let sides = compact.components(separatedBy: "->")
        let broadcastRank = zip(sides[0].components(separatedBy: ","), shapes).map { term, shape in
            term.contains("...") ? shape.count - term.filter(\.isLetter).count : 0
        }.max() ?? 0
        let ellipsis = (0 ..< broadcastRank).map { Character(Unicode.Scalar(0x100 + $0)!) }
        /// `term`'s labels, its `...` standing for the last `spare` of the ellipsis's labels.
        func labels(_ term: String, spare: Int) -> [Character] {
            guard let range = term.range(of: "...") else { return Array(term) }
            return Array(term[..<range.lowerBound]) + ellipsis.suffix(spare) + Array(term[range.upperBound...])
        }
        let inputs = zip(sides[0].components(separatedBy: ","), shapes).map { labels($0, spare: $1.count - $0.filter(\.isLetter).count) }
        let all = inputs.flatMap { $0 }
        let output = sides.count == 2 ? labels(sides[1], spare: broadcastRank)
            : ellipsis + Set(all.filter(\.isLetter)).filter { l in all.filter { $0 == l }.count == 1 }.sorted()
        var extent: [Character: Int] = [:]
        for (term, shape) in zip(inputs, shapes) { for (l, e) in zip(term, shape) { extent[l] = max(extent[l] ?? 1, e) } }
        let order = output + Set(all).subtracting(output).sorted()
        let outputShape = output.map { extent[$0]! }
        var result = [Double](repeating: 0, count: outputShape.reduce(1, *))
        let total = order.reduce(1) { $0 * extent[$1]! }
        var assignment: [Character: Int] = [:]
        for flat in 0 ..< total {
            var rest = flat
            for l in order.reversed() {
                assignment[l] = rest % extent[l]!
                rest /= extent[l]!
            }
            var product = 1.0
            for (k, term) in inputs.enumerated() {
                var index = 0
                for (l, e) in zip(term, shapes[k]) { index = index * e + (e == 1 ? 0 : assignment[l]!) }
                product *= Double(values[k][index])
            }
            var out = 0
            for l in output { out = out * extent[l]! + assignment[l]! }
            result[out] += product
        }
        return (outputShape, result)
    }

    /// Converts and runs `equation` on random inputs; the output in ONNX's order and the conversion.
    static func run(_ c: Case) throws -> (got: [Float], want: (shape: [Int], values: [Double]), conversion: ONNXConversion) {
        var rng = RefRandom(seed: c.shapes.flatMap { $0 }.reduce(5, +) + c.equation.count)
        let values = c.shapes.map { shape in (0 ..< shape.reduce(1, *)).map { _ in rng.float(-1, 1) } }
        let conversion = try ONNXConversion(serialized: try model(c.equation, c.shapes).serializedData())
        var inputs: [Tensor] = []
        for (i, shape) in c.shapes.enumerated() {
            let layout = try #require(conversion.layouts["x\(i)"])
            inputs.append(try NodeTestCase.anvilTensor(shape, ConstantTensor(shape: shape, floats: values[i]), type: .float32, layout: layout))
        }
        let compiled = try Model(compiling: conversion.modelFile())
        let output = try compiled.predict(inputs)[0]
        let want = naive(c.equation, c.shapes, values)
        let got = try NodeTestCase.onnxOrder(output, layout: try #require(conversion.layouts["y"]), onnxShape: want.shape)
        return (got, want, conversion)
    }

    @Test("Einsum matches a naive float64 einsum", arguments: cases)
    func matchesReference(_ c: Case) throws {
        let (got, want, _) = try Self.run(c)
        #expect(got.count == want.values.count, "\(got.count) values, expected \(want.values.count)")
        let worst = zip(got, want.values).map { abs(Double($0) - $1) / max(1, abs($1)) }.max() ?? 0
        #expect(worst <= 1e-5, "largest relative error \(worst)")
    }

    @Test("MaxViT's attention products are one MatMul each, no layer more")
    func maxViTStaysOneMatMul() throws {
        for equation in ["BGHID,BGHJD->BGHIJ", "BGHIJ,BGHJD->BGHID"] {
            let shapes = equation.hasPrefix("BGHID") ? [[1, 2, 3, 4, 5], [1, 2, 3, 6, 5]] : [[1, 2, 3, 4, 6], [1, 2, 3, 6, 5]]
            let conversion = try ONNXConversion(serialized: try Self.model(equation, shapes).serializedData())
            #expect(conversion.layerCount == 1, "\(equation): \(conversion.layerCount) layers")
        }
    }

    @Test("Equations NumPy refuses are refused, naming the node and the equation")
    func refusesBadEquations() throws {
        for (equation, shapes) in [("ij,jk->ik", [[3, 4]]), ("ij->k", [[3, 4]]), ("ijk->i", [[3, 4]]), ("i1->i", [[3, 4]]),
                                   ("ij->ii", [[3, 4]]), ("i...j...->i", [[3, 4, 5]])] {
            #expect {
                _ = try ONNXConversion(serialized: try Self.model(equation, shapes).serializedData())
            } throws: { error in
                "\(error)".contains("node 'einsum' (Einsum)") && "\(error)".contains(equation)
            }
        }
    }
}
