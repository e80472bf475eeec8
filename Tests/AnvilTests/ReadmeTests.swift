import Foundation
import Testing
import Anvil
@testable import AnvilTestSupport

/// Keeps the README honest: the Swift examples below are the README's, character for
/// character (checked), and they run here on the shipped weights; so does docs/model-format.md's
/// loading example. Serialized: two of them change the working directory.
@Suite(.serialized) struct ReadmeTests {
    static var readme: String {
        (try? String(contentsOf: Fixtures.repository.appendingPathComponent("README.md"), encoding: .utf8)) ?? ""
    }

    /// The lines between `// README <name> begin` and `// README <name> end` in this file, unindented.
    static func snippet(_ name: String) throws -> String {
        let source = try String(contentsOfFile: #filePath, encoding: .utf8)
        let lines = source.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "// README \(name) begin" })
        let end = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "// README \(name) end" })
        let body = lines[(start + 1) ..< end]
        let indent = body.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return body.map { String($0.dropFirst(min(indent, $0.count))) }.joined(separator: "\n")
    }

    @Test func examplesAreInTheReadme() throws {
        for name in ["network", "compile", "vgg16", "open", "tokens", "async", "runner"] {
            let snippet = try Self.snippet(name)
            #expect(Self.readme.contains(snippet), "README.md lacks the '\(name)' example:\n\(snippet)")
        }
    }

    @Test func vgg16InTwentyLines() throws {
        // README vgg16 begin
        let image = Input(width: 224, height: 224, channels: 3)
        var x: SymbolicTensor = image
        for (block, (channels, convolutions)) in [(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)].enumerated() {
            for index in 1 ... convolutions {
                x = x --> Convolution(kernel: (3, 3), channels: channels, activation: .relu,
                                      name: "conv\(block + 1)_\(index)")
            }
            x = x --> MaxPooling(kernel: (2, 2), stride: (2, 2), name: "pool\(block + 1)")
        }
        let probabilities = x
            --> Dense(neurons: 4096, activation: .relu, name: "fc6")
            --> Dense(neurons: 4096, activation: .relu, name: "fc7")
            --> Dense(neurons: 1000, name: "fc8")
            --> Softmax(name: "prob")
        let vgg16 = try Model(input: image, output: probabilities)
        // README vgg16 end
        #expect(vgg16.parameterCount == 138_357_544)
        #expect(vgg16.layers.first { $0.name == "pool5" }?.outputShape == Shape(height: 7, width: 7, channels: 512))
    }

    @Test func openInputExampleRuns() throws {
        var printed: [String] = []
        func print(_ value: Any) { printed.append("\(value)") }
        // README open begin
        let image = Input(channels: 3)  // height and width open
        let scores = image
            --> Convolution(kernel: (3, 3), channels: 16, stride: (2, 2), activation: .relu, name: "down")
            --> Convolution(kernel: (3, 3), channels: 16, activation: .relu, name: "body")
            --> Convolution(kernel: (1, 1), channels: 4, name: "classes")
            --> Resize(scaleHeight: 2, scaleWidth: 2, name: "up")
        let segmenter = try Model(input: image, output: scores)
        print(segmenter.openOutputShapes[0])  // (?, ?, 4)
        try segmenter.compile(from: RandomParameterSource(seed: 1))  // parameters read once, for every size
        for (height, width) in [(64, 48), (120, 160)] {
            let photo = Tensor(zeros: Shape(height: height, width: width, channels: 3))
            let map = try segmenter.predict(photo)  // this size's plan and kernels are built at its first call
            print(map.shape)  // (64, 48, 4), then (120, 160, 4)
        }
        // README open end
        #expect(printed == ["(?, ?, 4)", "(64, 48, 4)", "(120, 160, 4)"])
        #expect(segmenter.cachedInputShapes.count == 2)
    }

    @Test func tokenExampleRuns() throws {
        var printed: [String] = []
        func print(_ value: Any) { printed.append("\(value)") }
        // README tokens begin
        let tokens = Input(shape: OpenShape(dimensions: [nil], elementType: .int64))  // token ids, any count
        let encoder = try Model(input: tokens, output: tokens
            --> Embedding(table: [1000, 16], name: "embed")  // one row of 16 per token
            --> Reduce(.mean, axes: [1], keepDimensions: false))
        print(encoder.openOutputShapes[0])  // (16)
        let table = (0 ..< 1000 * 16).map { Float($0 / 16) }  // row i holds i
        try encoder.compile(from: ArrayParameterSource(["embed_constant": table]))
        let ids = try Tensor(batch: 1, shape: Shape(dimensions: [4], elementType: .int64), integers: [101, 7, 42, 102])
        print(try encoder.predict(ids).values[0])  // 63.0, the mean of rows 101, 7, 42 and 102
        // README tokens end
        #expect(printed == ["(16)", "\(Float(101 + 7 + 42 + 102) / 4)"])
    }

    @Test func examplesRun() throws {
        let previous = FileManager.default.currentDirectoryPath
        FileManager.default.changeCurrentDirectoryPath(Fixtures.repository.path)
        defer { FileManager.default.changeCurrentDirectoryPath(previous) }
        let pixels = try Fixtures.bytes(Fixtures.shared.appendingPathComponent("mnist/images_first256.u8"))
            .prefix(784).map { Float($0) / 255 }
        let label = try Fixtures.bytes(Fixtures.shared.appendingPathComponent("mnist/labels_first256.u8"))[0]

        // README network begin
        let input = Input(width: 28, height: 28, channels: 1)
        let output = input
            --> Convolution(kernel: (5, 5), channels: 32, activation: .relu, name: "conv1")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2))
            --> Convolution(kernel: (5, 5), channels: 64, activation: .relu, name: "conv2")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2))
            --> Dense(neurons: 1024, activation: .relu, name: "fc1")
            --> Dense(neurons: 10, name: "fc2")
            --> Softmax()
        let model = try Model(input: input, output: output)
        // README network end

        // README compile begin
        let weights = try DirectoryParameterSource(directory: URL(fileURLWithPath: "Weights/mnist"))
        try model.compile { name, count, kind in
            try weights.data(for: ParameterRequest(layer: name, kind: kind, count: count))
        }
        print(model.summary())

        let batch = try Tensor(batch: 1, shape: model.inputShapes[0], values: pixels)  // N × 28 × 28 × 1, pixels / 255
        let probabilities = try model.predict(batch)
        print(probabilities.argmax())
        // README compile end

        #expect(probabilities.argmax() == [Int(label)])
        #expect(abs(probabilities.values.reduce(0, +) - 1) < 1e-5)
        #expect(Self.readme.contains(model.summary()), "README.md's summary is not what summary() prints")
    }

    @Test func asyncExampleRuns() async throws {
        let model = try ModelFile(contentsOf: Fixtures.repository.appendingPathComponent("Weights/mnist/model.json"))
            .compiledModel()
        let pixels = try Fixtures.bytes(Fixtures.shared.appendingPathComponent("mnist/images_first256.u8"))
            .prefix(784).map { Float($0) / 255 }
        let batch = try Tensor(batch: 1, shape: model.inputShapes[0], values: pixels)
        // README async begin
        let answer = try await model.prediction(for: batch)  // runs on Anvil's threads; only the task waits
        print(answer.argmax())
        // README async end
        #expect(answer == (try model.predict(batch)))

        // README runner begin
        let runner = try Runner(model: model, maximumBatch: 16, maximumWait: .milliseconds(2))
        let probabilities = try await runner.prediction(for: batch)  // from any number of tasks at once
        // README runner end
        #expect(probabilities.argmax() == answer.argmax())
    }

    /// docs/model-format.md's loading example is this one, character for character, and runs.
    @Test func modelFormatExampleRuns() throws {
        let document = try String(contentsOf: Fixtures.repository.appendingPathComponent("docs/model-format.md"),
                                  encoding: .utf8)
        let snippet = try Self.snippet("model file")
        #expect(document.contains(snippet), "docs/model-format.md lacks the example:\n\(snippet)")
        let previous = FileManager.default.currentDirectoryPath
        FileManager.default.changeCurrentDirectoryPath(Fixtures.repository.path)
        defer { FileManager.default.changeCurrentDirectoryPath(previous) }

        // README model file begin
        let file = try ModelFile(contentsOf: URL(fileURLWithPath: "Weights/mnist/model.json"))
        let model = try file.compiledModel()
        let pixels = try Data(contentsOf: URL(fileURLWithPath: "Weights/mnist/sample-digits.f32"))
        let values = pixels.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }  // 8 images, NHWC, 0...1
        let batch = try Tensor(batch: values.count / 784, shape: model.inputShapes[0], values: values)
        print(try model.predict(batch).argmax())  // [7, 2, 1, 0, 4, 1, 4, 9]
        // README model file end

        #expect(try model.predict(batch).argmax() == [7, 2, 1, 0, 4, 1, 4, 9])
    }
}
