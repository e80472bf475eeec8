import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Runs every imported ONNX node test (`Fixtures/onnx`, made by `Scripts/fixtures/import_onnx_tests.py`
/// from the onnx 1.22.0 wheel) through Anvil and compares with ONNX's expected outputs.
@Suite struct OnnxConformanceTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let directory: String
        var testDescription: String { directory }
    }

    static let cases: [Case] = {
        let root = Fixtures.root.appendingPathComponent("onnx")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return names.filter { FileManager.default.fileExists(atPath: root.appendingPathComponent("\($0)/case.json").path) }
            .sorted().map(Case.init)
    }()

    @Test func fixturesArePresent() {
        #expect(Self.cases.count >= 100)
    }

    @Test(arguments: cases)
    func conformance(_ testCase: Case) throws {
        let directory = Fixtures.root.appendingPathComponent("onnx/\(testCase.directory)")
        let description = try JSONValue.parse(try Data(contentsOf: directory.appendingPathComponent("case.json")), source: "case.json")
        let model = try ModelFile(contentsOf: directory.appendingPathComponent("model.json")).compiledModel()
        func tensors(_ key: String) throws -> [(URL, [Int])] {
            guard case .array(let entries)? = description[key] else { throw AnvilError(.invalidFile, "case.json has no \(key)") }
            return entries.map { entry in
                guard case .string(let file)? = entry["file"], case .array(let dims)? = entry["shape"] else { return (directory, []) }
                return (directory.appendingPathComponent(file), dims.compactMap { if case .int(let v) = $0 { return v }; return nil })
            }
        }
        let inputs = try tensors("inputs").map { url, dims in
            try Tensor(batch: dims[0], shape: Shape(height: dims[1], width: dims[2], channels: dims[3]), values: Fixtures.floats(url))
        }
        let outputs = try model.predict(inputs)
        let expected = try tensors("outputs")
        #expect(outputs.count == expected.count)
        for (output, (url, dims)) in zip(outputs, expected) {
            #expect(output.batch == dims[0])
            // case.json gives every tensor as 4-D N × H × W × C (the importer's layout); Anvil's output may
            // be of lower rank (a Gemm's vector) with the same values: compare how they are stored.
            #expect([output.shape.height, output.shape.width, output.shape.channels] == Array(dims[1...3]))
            let reference = try Fixtures.floats(url)
            #expect(output.values.count == reference.count)
            var worst = 0
            for (i, (got, want)) in zip(output.values, reference).enumerated() {
                // rtol 1e-3, plus a tiny absolute floor for values near zero.
                if abs(got - want) > 1e-3 * abs(want) + 1e-5 {
                    worst += 1
                    if worst <= 3 { Issue.record("\(testCase.directory): value \(i) is \(got), ONNX expects \(want)") }
                }
            }
            #expect(worst == 0)
        }
    }
}
