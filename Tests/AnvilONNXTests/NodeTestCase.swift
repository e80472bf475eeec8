import Anvil
import Foundation
import Testing
@testable import AnvilONNX
@testable import AnvilTestSupport

/// One ONNX node test (`onnx/backend/test/data/node/<name>`: `model.onnx` and
/// `test_data_set_0/{input,output}_<i>.pb`) run through the importer as a user's file would be.
///
/// Graph inputs that the importer takes only as constants (a weight, a shape, axes: the
/// importer's `constantInputs` table) become initializers holding the test's values, as a user
/// freezing the file would do. Integer and truth inputs stay graph inputs (typed tensors at
/// `predict`); when the importer refuses the file so, they are frozen too (indices, shapes and
/// counts that Anvil takes as constants) and the file converted again. The converted model runs
/// on the remaining inputs, each placed by the importer's ``ONNXTensorLayout``, and every output
/// is compared, in ONNX's order, with the stored one.
struct NodeTestCase {
    /// What running one test gave.
    enum Outcome: Equatable {
        /// Converted, ran, and every output matched.
        case passed
        /// The importer refused the file (its first blocker).
        case refused(String)
        /// Converted but an output differs from ONNX's (which, how).
        case mismatch(String)
        /// Converted but compiling or predicting threw.
        case failed(String)

        /// A one-line summary.
        var summary: String {
            switch self {
            case .passed: return "passed"
            case .refused(let why): return "refused: \(why)"
            case .mismatch(let why): return "mismatch: \(why)"
            case .failed(let why): return "failed: \(why)"
            }
        }
    }

    /// The test's directory name (`test_…`).
    let name: String
    /// Its directory.
    let directory: URL

    /// Reads, freezes, converts and runs the test.
    func run() throws -> Outcome {
        var model = try Onnx_ModelProto(serializedBytes: try Data(contentsOf: directory.appendingPathComponent("model.onnx")))
        let data = directory.appendingPathComponent("test_data_set_0")
        let initialized = Set(model.graph.initializer.map(\.name))
        var feeds: [(name: String, tensor: Onnx_TensorProto)] = []
        for (i, input) in model.graph.input.enumerated() where !initialized.contains(input.name) {
            let url = data.appendingPathComponent("input_\(i).pb")
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            var tensor = try Onnx_TensorProto(serializedBytes: try Data(contentsOf: url))
            tensor.name = input.name
            feeds.append((input.name, tensor))
        }
        let original = model
        /// The model with the feeds `frozen` says as initializers, and the feeds left as inputs.
        func freezing(_ frozen: (Onnx_TensorProto) -> Bool) -> (Onnx_ModelProto, [(name: String, tensor: Onnx_TensorProto)]) {
            var model = original, runtime: [(name: String, tensor: Onnx_TensorProto)] = []
            for feed in feeds {
                if Self.readAsConstant(feed.name, in: model.graph) || frozen(feed.tensor) {
                    model.graph.initializer.append(feed.tensor)
                    model.graph.input.removeAll { $0.name == feed.name }
                } else {
                    runtime.append(feed)
                }
            }
            return (model, runtime)
        }
        var runtimeInputs: [(name: String, tensor: Onnx_TensorProto)]
        (model, runtimeInputs) = freezing { _ in false }
        var conversion: ONNXConversion
        do {
            conversion = try ONNXConversion(serialized: try model.serializedData(), directory: directory)
        } catch let first as ONNXImportError {
            let isTyped = { (tensor: Onnx_TensorProto) in !TensorDecoding.floatTypes.contains(tensor.dataType) }
            guard runtimeInputs.contains(where: { isTyped($0.tensor) }) else { return .refused(first.blockers.first ?? first.message) }
            (model, runtimeInputs) = freezing(isTyped)
            do {
                conversion = try ONNXConversion(serialized: try model.serializedData(), directory: directory)
            } catch let error as ONNXImportError {
                return .refused(error.blockers.first ?? error.message)
            }
        }
        if let dump = ProcessInfo.processInfo.environment["ANVIL_NODE_TEST_DUMP"] {
            // (For a look at what the importer wrote: model.json and weights.bin.)
            try conversion.write(to: URL(fileURLWithPath: dump).appendingPathComponent(name))
        }
        do {
            var inputs: [Tensor] = []
            for feed in runtimeInputs {
                guard let layout = conversion.layouts[feed.name] else { return .failed("no layout for input '\(feed.name)'") }
                let constant = try TensorDecoding(directory: nil).constant(feed.tensor, what: feed.name)
                guard let type = TensorDecoding.engineType(feed.tensor.dataType) else { return .failed("input '\(feed.name)' has no engine type") }
                inputs.append(try Self.anvilTensor(constant.shape, constant, type: type, layout: layout))
            }
            let compiled = try Model(compiling: conversion.modelFile())
            let outputs = try compiled.predict(inputs)
            // The model file `anvil convert` writes (the engine's own coding) must hold the same
            // model: read back, it gives the same bits.
            let written = FileManager.default.temporaryDirectory.appendingPathComponent("anvil-node-\(name)-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: written) }
            let reread = try ModelFile(contentsOf: try conversion.write(to: written), loading: .copied).compiledModel(weightCache: nil)
            let rereadOutputs = try reread.predict(inputs)
            for (i, (direct, fromFile)) in zip(outputs, rereadOutputs).enumerated()
                where direct.values.map(\.bitPattern) != fromFile.values.map(\.bitPattern) || direct.shape != fromFile.shape {
                return .mismatch("output \(i) read back from the written model file differs from the converted model's")
            }
            let outputNames = model.graph.output.map(\.name)
            guard outputs.count == outputNames.count else {
                return .mismatch("\(outputs.count) outputs, ONNX has \(outputNames.count)")
            }
            for (i, (output, name)) in zip(outputs, outputNames).enumerated() {
                let stored = try Onnx_TensorProto(serializedBytes: try Data(contentsOf: data.appendingPathComponent("output_\(i).pb")))
                let expected = try TensorDecoding(directory: nil).constant(stored, what: "output_\(i).pb")
                guard let layout = conversion.layouts[name] else { return .failed("no layout for output '\(name)'") }
                let got = try Self.onnxOrder(output, layout: layout, onnxShape: expected.shape)
                guard got.count == expected.count else {
                    return .mismatch("output \(i) has \(got.count) values, ONNX \(expected.count) (shape \(expected.shape))")
                }
                let want = expected.floats
                var bad = 0, first = ""
                for (k, (g, e)) in zip(got, want).enumerated() where !Self.close(g, e) {
                    if bad == 0 { first = "value \(k) is \(g), ONNX \(e)" }
                    bad += 1
                }
                if bad > 0 { return .mismatch("output \(i): \(bad) of \(want.count) values differ; \(first)") }
            }
            return .passed
        } catch {
            return .failed("\(error)")
        }
    }

    /// rtol 1e-3 plus 1e-5 absolute; NaN matches NaN, an infinity itself.
    static func close(_ got: Float, _ want: Float) -> Bool {
        got == want || (got.isNaN && want.isNaN) || abs(got - want) <= 1e-3 * abs(want) + 1e-5
    }

    /// Whether the importer must see `name` as a constant: every node reading it reads it where
    /// the importer takes a constant.
    static func readAsConstant(_ name: String, in graph: Onnx_GraphProto) -> Bool {
        var read = false
        for node in graph.node {
            for (slot, input) in node.input.enumerated() where input == name {
                read = true
                guard ONNXConverter.constantInputs[node.opType]?.contains(slot) ?? false else { return false }
            }
        }
        return read
    }

    /// ONNX-ordered values of `shape` as the Anvil tensor `layout` describes (Anvil axis
    /// `permutation[i]` holds ONNX axis i; an Anvil axis no ONNX axis maps to has extent 1), made
    /// through the typed `Tensor` API for an integer or truth `type`.
    static func anvilTensor(_ shape: [Int], _ value: ConstantTensor, type: ElementType, layout: ONNXTensorLayout) throws -> Tensor {
        let (anvilShape, order) = try placement(shape, layout: layout)
        let moved = try value.transposed(order.filter { $0 < shape.count })
        let itemShape = try Shape(dimensions: Array(anvilShape.dropFirst()), elementType: type)
        switch type {
        case .float32: return try Tensor(batch: anvilShape[0], shape: itemShape, values: moved.floats)
        case .bool: return try Tensor(batch: anvilShape[0], shape: itemShape, truths: moved.doubles.map { $0 != 0 })
        default: return try Tensor(batch: anvilShape[0], shape: itemShape, integers: try moved.integers().map(Int64.init))
        }
    }

    /// An Anvil output's values in ONNX's order (`onnxShape`), undoing `layout`'s permutation.
    static func onnxOrder(_ output: Tensor, layout: ONNXTensorLayout, onnxShape: [Int]) throws -> [Float] {
        let (anvilShape, order) = try placement(onnxShape, layout: layout)
        guard anvilShape.reduce(1, *) == output.values.count else { return output.values }
        // Anvil axis j holds ONNX axis order[j] (or an axis of extent 1, numbered from onnxShape.count).
        var back = [Int](repeating: 0, count: order.count)
        for (j, i) in order.enumerated() { back[i] = j }
        return try ConstantTensor(shape: anvilShape, floats: output.values).transposed(back).floats
    }

    /// The Anvil shape of an ONNX tensor of `shape` and, for each Anvil axis, the ONNX axis it
    /// holds (axes of extent 1 that ONNX does not have numbered from `shape.count` on).
    static func placement(_ shape: [Int], layout: ONNXTensorLayout) throws -> (shape: [Int], order: [Int]) {
        let rank = max(layout.anvilRank, (layout.permutation.max() ?? -1) + 1)
        guard layout.permutation.count == shape.count, Set(layout.permutation).count == shape.count else {
            throw AnvilError(.invalidShape, "layout \(layout.permutation) does not fit ONNX shape \(shape)")
        }
        var anvilShape = [Int](repeating: 1, count: rank), order = [Int](repeating: -1, count: rank)
        for (i, j) in layout.permutation.enumerated() {
            anvilShape[j] = shape[i]
            order[j] = i
        }
        var extra = shape.count
        for j in order.indices where order[j] < 0 {
            order[j] = extra
            extra += 1
        }
        return (anvilShape, order)
    }
}
