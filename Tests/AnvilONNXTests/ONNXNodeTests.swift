import Foundation
import Testing
@testable import AnvilONNX
@testable import AnvilTestSupport

/// The ONNX operator conformance tests (`onnx/backend/test/data/node/*`, onnx 1.22.0) through the
/// Swift importer: every test it converts runs on its stored inputs and must give its stored
/// outputs; as many convert as with the Python converter (128, Scripts/dev/compare_onnx_importers.py
/// checks the two write the same files).
@Suite struct ONNXNodeTests {
    @Test func nodeTestsConvertAndMatchONNX() throws {
        guard let root = ONNXSupport.nodeTestDirectory else {
            Issue.record("the onnx package's node tests are missing: pip install onnx==1.22.0 (Scripts/setup.sh), or set ANVIL_ONNX_NODE_TESTS")
            return
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: root.path).sorted()
        var converted = 0, checked = 0
        for name in names {
            let directory = root.appendingPathComponent(name)
            let modelURL = directory.appendingPathComponent("model.onnx")
            guard FileManager.default.fileExists(atPath: modelURL.path) else { continue }
            let conversion: ONNXConversion
            do { conversion = try ONNXConversion(contentsOf: modelURL) } catch is ONNXImportError { continue }
            converted += 1
            let data = directory.appendingPathComponent("test_data_set_0")
            guard case .array(let declared)? = conversion.json["inputs"] else { continue }
            var inputs: [Tensor] = []
            for i in declared.indices {
                let (shape, values) = try ONNXSupport.readTensor(data.appendingPathComponent("input_\(i).pb"))
                let moved = try ONNXSupport.channelsLast(values, shape: shape)
                inputs.append(try Tensor(batch: shape.first ?? 1, shape: Shape(dimensions: moved.shape.isEmpty ? [1] : moved.shape), values: moved.values))
            }
            let model = try Model(compiling: conversion.modelFile())
            let outputs = try model.predict(inputs)
            for (i, output) in outputs.enumerated() {
                let (shape, values) = try ONNXSupport.readTensor(data.appendingPathComponent("output_\(i).pb"))
                let expected = try ONNXSupport.channelsLast(values, shape: shape).values
                #expect(output.values.count == expected.count, "\(name)")
                #expect(ONNXSupport.mismatches(output.values, expected, label: name) == 0, "\(name)")
            }
            checked += 1
        }
        #expect(converted >= 128, "the Python converter converts 128 node tests")
        #expect(checked == converted)
    }
}
