import Foundation
import Testing
import Anvil
@testable import AnvilTestSupport

/// Model files: a DSL model written with `writeModelFile` and read back is the same network.
@Suite struct ModelFileTests {
    /// A graph using every built-in layer type, a shared layer, two outputs.
    static func everyLayer() throws -> Model {
        let input = Input(width: 9, height: 8, channels: 3, name: "pixels")
        let shared = Convolution(kernel: (3, 3), channels: 3, padding: .explicit(top: 1, left: 1, bottom: 1, right: 1), name: "shared")
        let a = input --> shared --> BatchNormalization(epsilon: 1e-5) --> Activation(.leakyRelu(alpha: 0.2))
        let b = a --> shared --> PReLU()
        let merged = [a, b] --> Add(activation: .relu6)
        let branches = [
            merged --> DepthwiseConvolution(kernel: (3, 3), multiplier: 2, stride: (2, 1), padding: .same, activation: .hardSwish),
            merged --> MaxPooling(kernel: (3, 3), stride: (2, 1), padding: .same, ceilMode: false),
            merged --> AveragePooling(kernel: (2, 2), stride: (2, 1), padding: .explicit(top: 0, left: 0, bottom: 1, right: 1), countIncludesPadding: true),
        ]
        let joined = branches --> Concatenate()
            --> PointwiseConvolution(channels: 4, activation: .elu(alpha: 0.5))
            --> Resize(height: 6, width: 5, coordinates: .alignCorners)
            --> Convolution(kernel: (2, 3), channels: 6, stride: (1, 2), dilation: (2, 1), groups: 2, useBias: false, activation: .clip(min: -1, max: 1))
        let pooled = joined --> GlobalAveragePooling()
        let maxed = joined --> GlobalMaxPooling()
        let head = [pooled, maxed] --> Concatenate() --> Dense(neurons: 5, activation: .tanh)
        let scores = head --> Softmax()
        let other = joined --> Flatten(order: .channelsFirst) --> Dense(neurons: 3, activation: .linear(a: 2, b: 1)) --> LogSoftmax()
        return try Model(inputs: [input], outputs: [scores, other])
    }

    @Test func roundTripKeepsTheNetwork() throws {
        let original = try Self.everyLayer()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("anvil-modelfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("model.json")
        try original.writeModelFile(to: url, name: "every layer")
        let file = try ModelFile(contentsOf: url)
        #expect(file.name == "every layer")
        let copy = file.model
        #expect(copy.layers.map(\.outputShape) == original.layers.map(\.outputShape))
        #expect(copy.layers.map(\.layer.typeName) == original.layers.map(\.layer.typeName))
        #expect(copy.parameterCount == original.parameterCount)
        #expect(copy.macs == original.macs)

        // Same parameters (random, by request) give the same outputs.
        try original.compile(from: RandomParameterSource(seed: 7))
        try copy.compile(from: RandomParameterSource(seed: 7))
        var generator = SystemRandomNumberGenerator()
        let values = (0 ..< 2 * 8 * 9 * 3).map { _ in Float.random(in: -1 ... 1, using: &generator) }
        let input = try Tensor(batch: 2, shape: original.inputShapes[0], values: values)
        let expected = try original.predict([input]), actual = try copy.predict([input])
        #expect(actual == expected)
    }

    @Test func writtenFileIsValidJSONWithSharedParameters() throws {
        let json = try Self.everyLayer().modelFileJSON()
        let text = json.serialized()
        let reparsed = try JSONValue.parse(Data(text.utf8), source: "written")
        #expect(reparsed == json)
        #expect(text.contains("\"sharesParametersWith\": \"shared\""))
    }
}
