import Foundation
import Testing
@testable import AnvilONNX
@testable import AnvilTestSupport

/// The `anvil` tool with `.onnx` files: `convert` writes the model file, and `summary`, `run` and
/// `bench` take the `.onnx` file directly.
@Suite struct ONNXCommandTests {
    static let onnx = "Tests/AnvilONNXTests/Fixtures/tiny_cnn.onnx"

    @Test func convertWritesAModelFileThatRuns() throws {
        let directory = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(directory) }
        let converted = try AnvilTool.run(["convert", Self.onnx, directory.path])
        #expect(converted.status == 0, "\(converted.errors)")
        #expect(converted.output.contains("model.json"))
        let output = directory.appendingPathComponent("logits.f32")
        let ran = try AnvilTool.run(["run", "--model", directory.appendingPathComponent("model.json").path,
                                     "--input", "Tests/AnvilONNXTests/Fixtures/tiny_cnn_input.f32", "--output", output.path])
        #expect(ran.status == 0, "\(ran.errors)")
        let expected = try Fixtures.floats(ONNXSupport.fixtures.appendingPathComponent("tiny_cnn_output.f32"))
        #expect(ONNXSupport.mismatches(try Fixtures.floats(output), expected, rtol: 1e-4, atol: 1e-6, label: "convert + run") == 0)
    }

    @Test func subcommandsTakeONNXFiles() throws {
        let directory = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(directory) }
        let summary = try AnvilTool.run(["summary", Self.onnx])
        #expect(summary.status == 0, "\(summary.errors)")
        #expect(summary.output.contains("ChannelShuffle"))
        let output = directory.appendingPathComponent("logits.f32")
        let ran = try AnvilTool.run(["run", "--model", Self.onnx, "--input", "Tests/AnvilONNXTests/Fixtures/tiny_cnn_input.f32",
                                     "--output", output.path])
        #expect(ran.status == 0, "\(ran.errors)")
        let expected = try Fixtures.floats(ONNXSupport.fixtures.appendingPathComponent("tiny_cnn_output.f32"))
        #expect(ONNXSupport.mismatches(try Fixtures.floats(output), expected, rtol: 1e-4, atol: 1e-6, label: "run .onnx") == 0)
        let bench = try AnvilTool.run(["bench", Self.onnx, "--iterations", "2", "--warmup", "1"])
        #expect(bench.status == 0, "\(bench.errors)")
        #expect(bench.output.contains("median_ms"))
    }

    @Test func conversionErrorsExitOneWithTheMessage() throws {
        let directory = try Failure.temporaryDirectory()
        defer { Failure.cleanUp(directory) }
        let broken = directory.appendingPathComponent("broken.onnx")
        try Data([0x08, 0x07, 0x67, 0x61, 0x72]).write(to: broken)
        let result = try AnvilTool.run(["summary", broken.path])
        #expect(result.status == 1)
        #expect(result.errors.hasPrefix("anvil: ") && result.errors.contains("broken.onnx"), "\(result.errors)")
        let operators = try AnvilTool.run(["convert", "--operators"])
        #expect(operators.output.split(separator: "\n").contains("Conv"))
    }
}
