import Foundation
import Testing
@testable import AnvilONNX
@testable import AnvilTestSupport

/// Keeps the README's ONNX example honest: the lines between the markers below are in README.md
/// character for character, and they run (on the committed PyTorch export, against ONNX Runtime's
/// top class).
@Suite struct ONNXReadmeTests {
    static let source = (try? String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)) ?? ""

    @Test func exampleIsInTheReadme() throws {
        let lines = Self.source.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "// README onnx begin" })
        let end = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "// README onnx end" })
        let snippet = lines[(start + 1) ..< end].map { $0.hasPrefix("        ") ? String($0.dropFirst(8)) : $0 }.joined(separator: "\n")
        let readme = try String(contentsOf: Fixtures.repository.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains(snippet), "README.md lacks the ONNX example:\n\(snippet)")
    }

    @Test func exampleRuns() throws {
        var printed: [String] = []
        func print(_ value: Any) { printed.append("\(value)") }
        let pixels = try Fixtures.floats(ONNXSupport.fixtures.appendingPathComponent("tiny_cnn_input.f32"))
        let fixture = ONNXSupport.fixtures.appendingPathComponent("tiny_cnn.onnx")
        func URL(fileURLWithPath path: String) -> URL { path.hasSuffix("tiny_cnn.onnx") ? fixture : Foundation.URL(fileURLWithPath: path) }
        // README onnx begin
        let onnxFile = URL(fileURLWithPath: "Tests/AnvilONNXTests/Fixtures/tiny_cnn.onnx")  // a small PyTorch export
        let model = try Model(onnx: onnxFile)  // converted and compiled; errors name the node at fault
        let image = try Tensor(batch: 1, shape: model.inputShapes[0], values: pixels)  // 32 × 32 × 3, NHWC
        let probabilities = try model.predict(image)
        print(probabilities.argmax())
        // README onnx end
        let reference = try Fixtures.floats(ONNXSupport.fixtures.appendingPathComponent("tiny_cnn_output.f32"))
        let top = reference.indices.max { reference[$0] < reference[$1] }!
        #expect(printed == ["\(top)"] || printed == ["[\(top)]"], "\(printed)")
    }
}
