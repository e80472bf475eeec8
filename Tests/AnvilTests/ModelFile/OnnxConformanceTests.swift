import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Runs every imported ONNX node test (`Fixtures/onnx`, made by `Scripts/fixtures/import_onnx_tests.py`
/// from the onnx 1.22.0 wheel) through Anvil and compares with ONNX's expected outputs. Shapes in
/// `case.json` are `[N]` + the Anvil shape's axes (rank 1 to 4).
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
        let viaConverter: Bool = { if case .string("converter")? = description["via"] { return true }; return false }()
        func tensors(_ key: String) throws -> [(URL, [Int])] {
            guard case .array(let entries)? = description[key] else { throw AnvilError(.invalidFile, "case.json has no \(key)") }
            return entries.map { entry in
                guard case .string(let file)? = entry["file"], case .array(let dims)? = entry["shape"] else { return (directory, []) }
                return (directory.appendingPathComponent(file), dims.compactMap { if case .int(let v) = $0 { return v }; return nil })
            }
        }
        let inputs = try tensors("inputs").map { url, dims in
            try Tensor(batch: dims[0], shape: Shape(dimensions: Array(dims.dropFirst())), values: Fixtures.floats(url))
        }
        let outputs = try model.predict(inputs)
        let expected = try tensors("outputs")
        #expect(outputs.count == expected.count)
        for (output, (url, dims)) in zip(outputs, expected) {
            #expect(output.batch == dims[0])
            // Stored height × width × channels always; the rank too for fixtures the ONNX converter
            // made (the hand-mapped ones write every tensor as [N, H, W, C]).
            let want = try Shape(dimensions: Array(dims.dropFirst()))
            let stored: [Int] = [output.shape.height, output.shape.width, output.shape.channels]
            let wanted: [Int] = [want.height, want.width, want.channels]
            #expect(stored == wanted)
            if viaConverter { #expect(output.shape.rank == want.rank) }
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
