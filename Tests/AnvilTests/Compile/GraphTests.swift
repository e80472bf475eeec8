import Testing
@testable import Anvil
@testable import AnvilTestSupport

@Suite("Graph and summary")
struct GraphTests {
    /// The MNIST network of Forge's example (and of the BNNS and MPSCNN ports).
    static func mnist() throws -> Model {
        let input = Input(width: 28, height: 28, channels: 1)
        let output = input
            --> Convolution(kernel: (5, 5), channels: 32, padding: .same, activation: .relu, name: "conv1")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2))
            --> Convolution(kernel: (5, 5), channels: 64, padding: .same, activation: .relu, name: "conv2")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2))
            --> Dense(neurons: 1024, activation: .relu, name: "fc1")
            --> Dense(neurons: 10, name: "fc2")
            --> Softmax()
        return try Model(input: input, output: output)
    }

    @Test("MNIST network: layers, shapes, 3,274,634 parameters, MACs, summary text")
    func mnistSummary() throws {
        let model = try Self.mnist()
        let layers = model.layers
        #expect(layers.map(\.name) == ["conv1", "maxpool_1", "conv2", "maxpool_2", "fc1", "fc2", "softmax_1"])
        #expect(layers.map(\.layer.typeName) == ["Convolution", "MaxPooling", "Convolution", "MaxPooling", "Dense", "Dense", "Softmax"])
        #expect(layers.map(\.outputShape) == [
            Shape(height: 28, width: 28, channels: 32), Shape(height: 14, width: 14, channels: 32),
            Shape(height: 14, width: 14, channels: 64), Shape(height: 7, width: 7, channels: 64),
            .vector(1024), .vector(10), .vector(10),
        ])
        #expect(layers.map(\.parameterCount) == [832, 0, 51_264, 0, 3_212_288, 10_250, 0])
        #expect(layers[0].parameters == [ParameterSpec(.weights, count: 800), ParameterSpec(.biases, count: 32)])
        #expect(layers[4].parameters == [ParameterSpec(.weights, count: 3_211_264), ParameterSpec(.biases, count: 1024)])
        #expect(model.parameterCount == 3_274_634)
        #expect(model.macs == 13_883_904)  // 27.8 MFLOP, as in the design notes
        #expect(layers.map(\.inputNames) == [["input"], ["conv1"], ["maxpool_1"], ["conv2"], ["maxpool_2"], ["fc1"], ["fc2"]])
        #expect(model.inputNames == ["input"])
        #expect(model.outputNames == ["softmax_1"])

        let summary = model.summary()
        #expect(summary.contains("3,274,634"))
        for text in ["conv1", "maxpool_1", "conv2", "maxpool_2", "fc1", "fc2", "softmax_1", "Convolution", "MaxPooling", "Dense",
                     "(28, 28, 32)", "(14, 14, 32)", "(14, 14, 64)", "(7, 7, 64)", "(1024)", "(10)",
                     "(28, 28, 1)", "832", "51,264", "3,212,288", "10,250"] {
            #expect(summary.contains(text), "summary lacks \(text):\n\(summary)")
        }
        // One row per layer plus the input, in order.
        let lines = summary.split(separator: "\n").map(String.init)
        let rowNames = lines.compactMap { line in ["input", "conv1", "maxpool_1", "conv2", "maxpool_2", "fc1", "fc2", "softmax_1"]
            .first { line.hasPrefix("\($0) (") } }
        #expect(rowNames == ["input", "conv1", "maxpool_1", "conv2", "maxpool_2", "fc1", "fc2", "softmax_1"])
    }

    @Test("Input names: 'input' alone, 'input_1', 'input_2' for several, user names kept")
    func inputNames() throws {
        let a = Input(width: 4, height: 4, channels: 1), b = Input(width: 4, height: 4, channels: 1)
        let m = try Model(inputs: [a, b], outputs: [[a, b] --> Add()])
        #expect(m.inputNames == ["input_1", "input_2"])
        #expect(m.layers[0].inputNames == ["input_1", "input_2"])
        let c = Input(width: 4, height: 4, channels: 1, name: "left"), d = Input(width: 4, height: 4, channels: 1)
        let n = try Model(inputs: [c, d], outputs: [[d, c] --> Add(name: "sum")])
        #expect(n.inputNames == ["left", "input_2"])
        #expect(n.layers[0].inputNames == ["input_2", "left"])
        #expect(n.outputNames == ["sum"])
    }

    @Test("Topological order: every layer after its inputs, branches in the order given")
    func topologicalOrder() throws {
        let input = Input(width: 8, height: 8, channels: 2)
        let stem = input --> Convolution(kernel: (3, 3), channels: 4, name: "stem")
        let left = stem --> Convolution(kernel: (1, 1), channels: 2, name: "left")
        let right = stem --> MaxPooling(kernel: (3, 3), stride: (1, 1), padding: .same, name: "right")
            --> Convolution(kernel: (1, 1), channels: 3, name: "right_conv")
        let joined = [left, right, stem] --> Concatenate(name: "join")
        let model = try Model(input: input, output: joined --> Activation(.relu, name: "out"))
        let names = model.layers.map(\.name)
        #expect(names == ["stem", "left", "right", "right_conv", "join", "out"])
        #expect(model.layers[4].inputNames == ["left", "right_conv", "stem"])
        #expect(model.layers[4].outputShape == Shape(height: 8, width: 8, channels: 9))
        // Each layer's inputs come earlier.
        for (position, layer) in model.layers.enumerated() {
            for inputName in layer.inputNames where inputName != "input" {
                let producer = try #require(names.firstIndex(of: inputName))
                #expect(producer < position)
            }
        }
    }

    @Test("A shared layer: listed at each application, parameters counted once, 'shared' in the summary")
    func sharedLayerSummary() throws {
        let input = Input(width: 6, height: 6, channels: 4)
        let conv = Convolution(kernel: (3, 3), channels: 4, name: "twice")
        let model = try Model(input: input, output: input --> conv --> conv)
        #expect(model.layers.count == 2)
        #expect(model.layers.map(\.name) == ["twice", "twice"])
        #expect(model.layers[1].parameters.isEmpty && model.layers[1].sharesParameters)
        #expect(model.parameterCount == 4 * 9 * 4 + 4)
        #expect(model.summary().contains("shared"))
        #expect(model.macs == 2 * 36 * 4 * 36)
    }

    @Test("A model whose output is its input runs as the identity")
    func identityModel() throws {
        let input = Input(width: 3, height: 2, channels: 2)
        let model = try Model(input: input, output: input)
        #expect(model.layers.isEmpty)
        #expect(model.outputNames == ["input"])
        try model.compile(from: ArrayParameterSource([:]))
        let values = (0 ..< 24).map { Float($0) - 7.5 }
        let output = try model.predict(try Tensor(batch: 2, shape: Shape(height: 2, width: 3, channels: 2), values: values))
        #expect(output.values == values)
    }

    @Test("A tensor consumed by several layers and also returned is computed once and correct")
    func tensorWithSeveralConsumers() throws {
        let input = Input(width: 3, height: 3, channels: 1)
        let relu = input --> Activation(.relu, name: "r")
        let doubled = [relu, relu] --> Add(name: "twice")
        let model = try Model(inputs: [input], outputs: [doubled, relu, [doubled, relu, relu] --> Add(name: "four")])
        try model.compile(from: ArrayParameterSource([:]))
        let values: [Float] = [-1, 2, -3, 4, -5, 6, -7, 8, 0.5]
        let outputs = try model.predict([try Tensor(batch: 1, shape: Shape(height: 3, width: 3, channels: 1), values: values)])
        let r = values.map { max($0, 0) }
        #expect(outputs[0].values == r.map { 2 * $0 })
        #expect(outputs[1].values == r)
        #expect(outputs[2].values == r.map { 4 * $0 })
    }

    @Test("The same tensor listed twice as an output, and a fused tensor as an output")
    func repeatedOutputs() throws {
        let input = Input(width: 2, height: 2, channels: 1)
        let relu = input --> Convolution(kernel: (1, 1), channels: 1, useBias: false, name: "c") --> Activation(.relu, name: "r")
        let model = try Model(inputs: [input], outputs: [relu, input, relu])
        #expect(model.outputNames == ["r", "input", "r"])
        try model.compile(from: ArrayParameterSource(["c_W": [-2]]))
        let values: [Float] = [1, -1, 2, -3]
        let outputs = try model.predict([try Tensor(batch: 1, shape: Shape(height: 2, width: 2, channels: 1), values: values)])
        #expect(outputs.map(\.values) == [[0, 2, 0, 6], values, [0, 2, 0, 6]])
    }

    @Test("Building the same network twice gives identical layer names and summaries")
    func deterministicSummary() throws {
        let a = try Self.mnist().summary(), b = try Self.mnist().summary()
        #expect(a == b)
    }
}
