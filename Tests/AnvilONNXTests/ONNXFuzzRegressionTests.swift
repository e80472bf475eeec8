import Foundation
import Testing
@testable import AnvilONNX
@testable import AnvilTestSupport

/// The inputs the `onnx` fuzz target once crashed on (Fuzz/regressions/onnx/), each now a clean
/// ``ONNXImportError`` naming what is wrong.
@Suite struct ONNXFuzzRegressionTests {
    static var regressions: URL { Fixtures.repository.appendingPathComponent("Fuzz/regressions/onnx") }

    /// A graph whose outputs are all absent: the writer's "no outputs" escaped as an internal error.
    @Test func graphWithoutOutputs() throws {
        let bytes = try Data(contentsOf: Self.regressions.appendingPathComponent("graph-without-outputs"))
        do {
            _ = try ONNXConversion(serialized: bytes)
            Issue.record("converted")
        } catch let error as ONNXImportError {
            #expect(error.message.contains("no outputs"), "\(error.message)")
        }
    }

    /// A Gemm node without outputs: its output name was read unchecked (an index out of range).
    @Test func nodeWithoutOutput() throws {
        let bytes = try Data(contentsOf: Self.regressions.appendingPathComponent("gemm-without-output"))
        do {
            _ = try ONNXConversion(serialized: bytes)
            Issue.record("converted")
        } catch let error as ONNXImportError {
            #expect(error.message.contains("has no output"), "\(error.message)")
        }
    }

    /// Every regression input throws an ONNXImportError (or converts), nothing else.
    @Test func everyRegressionIsRefusedCleanly() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.regressions.path)
        #expect(!names.isEmpty)
        for name in names {
            let bytes = try Data(contentsOf: Self.regressions.appendingPathComponent(name))
            do { _ = try ONNXConversion(serialized: bytes) } catch is ONNXImportError {} catch {
                Issue.record("\(name): \(error)")
            }
        }
    }
}
