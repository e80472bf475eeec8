import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Inputs whose height and width are left open: one compile, `predict` at any size, each size
/// checked against the naive float64 reference; plans cached per size (LRU), weights shared;
/// errors for layers and sizes that cannot fit.
@Suite("Open input sizes")
struct OpenInputTests {
    /// A fully convolutional network touching the size-dependent kernels: direct 3×3 (3 input
    /// channels), a 3×3 convolution of 8 channels (Winograd or direct, as the size decides),
    /// depthwise stride 2, 5×5 (Winograd F(2×2, 5×5)), max pooling, bilinear upsampling and a 1×1
    /// convolution; weights in PyTorch layout, so every size must see the same reordered weights.
    struct Network {
        var rng = RefRandom(seed: 12)
        let w1: [Float], b1: [Float], w2: [Float], b2: [Float], wd: [Float], bd: [Float]
        let w5: [Float], b5: [Float], wp: [Float], bp: [Float]

        init() {
            w1 = rng.floats(8 * 9 * 3); b1 = rng.floats(8)
            w2 = rng.floats(8 * 9 * 8, -0.3, 0.3); b2 = rng.floats(8)
            wd = rng.floats(8 * 9); bd = rng.floats(8)
            w5 = rng.floats(8 * 25 * 8, -0.2, 0.2); b5 = rng.floats(8)
            wp = rng.floats(4 * 8); bp = rng.floats(4)
        }

        func model(_ input: Input) throws -> Model {
            let output = input
                --> Convolution(kernel: (3, 3), channels: 8, activation: .relu, name: "c1")
                --> Convolution(kernel: (3, 3), channels: 8, activation: .relu, name: "c2")
                --> DepthwiseConvolution(kernel: (3, 3), stride: (2, 2), activation: .relu6, name: "dw")
                --> Convolution(kernel: (5, 5), channels: 8, name: "c5")
                --> MaxPooling(kernel: (2, 2), stride: (2, 2), padding: .same, name: "pool")
                --> Resize(scaleHeight: 2, scaleWidth: 2, name: "up")
                --> Convolution(kernel: (1, 1), channels: 4, name: "head")
            return try Model(input: input, output: output)
        }

        var parameters: ArrayParameterSource {
            func torch(_ w: [Float], _ outputs: Int, _ k: Int, _ inputs: Int) -> [Float] {
                Naive.convolutionToPyTorch(w, outputs: outputs, kernel: (k, k), inputs: inputs)
            }
            return ArrayParameterSource([
                "c1_W": torch(w1, 8, 3, 3), "c1_b": b1, "c2_W": torch(w2, 8, 3, 8), "c2_b": b2,
                "dw_W": Naive.depthwiseToPyTorch(wd), "dw_b": bd, "c5_W": torch(w5, 8, 5, 8), "c5_b": b5,
                "head_W": torch(wp, 4, 1, 8), "head_b": bp,
            ])
        }

        func reference(_ x: RefTensor) -> RefTensor {
            var y = Naive.convolution(x, weights: w1, bias: b1, outputChannels: 8, kernel: (3, 3), activation: .relu)
            y = Naive.convolution(y, weights: w2, bias: b2, outputChannels: 8, kernel: (3, 3), activation: .relu)
            y = Naive.depthwise(y, weights: wd, bias: bd, multiplier: 1, kernel: (3, 3), stride: (2, 2), activation: .relu6)
            y = Naive.convolution(y, weights: w5, bias: b5, outputChannels: 8, kernel: (5, 5))
            y = Naive.maxPool(y, kernel: (2, 2), stride: (2, 2), padding: .same)!
            y = Naive.resize(y, scale: (2, 2), coordinates: .halfPixel)
            return Naive.convolution(y, weights: wp, bias: bp, outputChannels: 4, kernel: (1, 1))
        }
    }

    static let sizes = [(9, 13), (16, 16), (23, 7)]

    @Test("A fully convolutional DSL model compiled once matches the reference at three sizes")
    func threeSizesMatchReference() throws {
        let network = Network()
        let model = try network.model(Input(channels: 3))
        #expect(model.hasOpenInputs)
        #expect(model.openInputShapes == [OpenShape(height: nil, width: nil, channels: 3)])
        #expect(model.openOutputShapes == [OpenShape(height: nil, width: nil, channels: 4)])
        try model.compile(layout: .pytorch, from: network.parameters)
        var rng = RefRandom(seed: 5)
        var results: [[Float]] = []
        for (h, w) in Self.sizes {
            let x = rng.tensor(n: 2, h: h, w: w, c: 3)
            let y = try model.predict(try x.tensor())
            refExpectClose(y, network.reference(x), "open input at \(h)x\(w)")
            #expect(try model.outputShapes(forInputShapes: [x.shape]) == [y.shape])
            results.append(y.values)
            // The buffer API at the same size gives the same values.
            var output = [Float](repeating: .nan, count: y.values.count)
            try x.floats.withUnsafeBufferPointer { source in
                try output.withUnsafeMutableBufferPointer { try model.predict(source, shape: x.shape, batch: 2, into: $0) }
            }
            #expect(output == y.values, "buffer API at \(h)x\(w)")
        }
        #expect(Set(model.cachedInputShapes.map { $0[0] }) == Set(Self.sizes.map { Shape(height: $0.0, width: $0.1, channels: 3) }))
        // A size seen before runs from the cache and gives the same answer.
        var again = RefRandom(seed: 5)
        let first = again.tensor(n: 2, h: Self.sizes[0].0, w: Self.sizes[0].1, c: 3)
        #expect(try model.predict(try first.tensor()).values == results[0])
    }

    @Test("Only the height open: the width is checked, heights vary")
    func partlyOpen() throws {
        let network = Network()
        let model = try network.model(Input(height: nil, width: 10, channels: 3))
        // 10 columns: 5 after the stride-2 depthwise, 3 after pooling (SAME), 6 after upsampling.
        #expect(model.openOutputShapes == [OpenShape(height: nil, width: 6, channels: 4)])
        try model.compile(layout: .pytorch, from: network.parameters)
        var rng = RefRandom(seed: 8)
        for h in [6, 11] {
            let x = rng.tensor(n: 1, h: h, w: 10, c: 3)
            refExpectClose(try model.predict(try x.tensor()), network.reference(x), "height \(h)")
        }
        Failure.expect(.invalidInput, mentioning: ["input", "(?, 10, 3)", "(6, 9, 3)"]) {
            _ = try model.predict(Tensor(zeros: Shape(height: 6, width: 9, channels: 3)))
        }
    }

    @Test("An open sequence length: a 1-D convolution at three lengths against the reference; the model file writes [null, C]")
    func openSequenceLength() throws {
        var rng = RefRandom(seed: 21)
        let w = rng.floats(4 * 3 * 2), b = rng.floats(4)
        let input = Input(length: nil, channels: 2, name: "audio")
        let model = try Model(input: input, output: input --> Convolution(kernel: 3, channels: 4, activation: .relu, name: "conv"))
        #expect(model.openOutputShapes == [.sequence(length: nil, channels: 4)])
        let summary = model.summary()
        #expect(summary.contains("(?, 2)") && summary.contains("(?, 4)"), "\(summary)")
        let json = try model.modelFileJSON()
        #expect(json.serialized().filter { !$0.isWhitespace }.contains(#""shape":[null,2]"#))
        let reread = try ModelFile(json: json, source: "sequence", directory: URL(fileURLWithPath: "/"))
        #expect(reread.model.openInputShapes == model.openInputShapes)
        try model.compile(from: ArrayParameterSource(["conv_W": w, "conv_b": b]))
        for length in [5, 9, 1] {
            let x = rng.tensor(n: 2, h: 1, w: length, c: 2)
            let y = try model.predict(Tensor(batch: 2, shape: .sequence(length: length, channels: 2), values: x.floats))
            #expect(y.shape == .sequence(length: length, channels: 4))
            let expected = Naive.convolution(x, weights: w, bias: b, outputChannels: 4, kernel: (1, 3), activation: .relu)
            refExpectClose(try Tensor(batch: 2, shape: Shape(height: 1, width: length, channels: 4), values: y.values),
                           expected, "sequence of length \(length)")
        }
        Failure.expect(.invalidInput, mentioning: ["(?, 2)"]) {
            _ = try model.predict(Tensor(zeros: Shape(height: 1, width: 5, channels: 2)))  // an image, not a sequence
        }
    }

    @Test("Kernels of different sizes share the reordered and packed weights")
    func sizesShareWeights() throws {
        let input = Input(channels: 3)
        let model = try Model(input: input, output: input
            --> Convolution(kernel: (3, 3), channels: 16, activation: .relu, name: "a")
            --> DepthwiseConvolution(kernel: (3, 3), name: "b")
            --> Convolution(kernel: (1, 1), channels: 8, name: "c"))
        try model.compile(layout: .tensorflow, from: RandomParameterSource(seed: 2))
        guard case .open(let open) = try model.compilation() else { Issue.record("not open"); return }
        _ = try model.predict(Tensor(zeros: Shape(height: 12, width: 9, channels: 3)))
        let shared = open.shared.count
        // One value per layer: the direct kernels' packed weights (not also the reordered copy
        // they were packed from) and the depthwise kernel's weights.
        #expect(shared == 3)
        for (h, w) in [(7, 20), (30, 5), (12, 10)] {
            _ = try model.predict(Tensor(zeros: Shape(height: h, width: w, channels: 3)))
        }
        #expect(open.shared.count == shared, "new sizes must reuse the weights made for the first")
        #expect(open.cache.models.count == 4)
    }

    @Test("A head after global pooling takes any size; the summary shows open dimensions as ?")
    func classifierHeadAndSummary() throws {
        var rng = RefRandom(seed: 3)
        let w1 = rng.floats(6 * 9 * 2), w2 = rng.floats(5 * 6), b2 = rng.floats(5)
        let input = Input(channels: 2)
        let model = try Model(input: input, output: input
            --> Convolution(kernel: (3, 3), channels: 6, stride: (2, 2), useBias: false, activation: .relu, name: "conv")
            --> GlobalAveragePooling(name: "gap") --> Dense(neurons: 5, name: "fc"))
        let summary = model.summary()
        #expect(summary.contains("(?, ?, 2)") && summary.contains("(?, ?, 6)") && summary.contains("(5)"), "\(summary)")
        #expect(summary.contains("Open input size"), "\(summary)")
        #expect(model.layers[0].macsDependOnInputSize && !model.layers[2].macsDependOnInputSize)
        #expect(model.parameterCount == 6 * 9 * 2 + 5 * 6 + 5)
        try model.compile(from: ArrayParameterSource(["conv_W": w1, "fc_W": w2, "fc_b": b2]))
        for (h, w) in [(5, 5), (8, 3), (1, 1)] {
            let x = rng.tensor(n: 3, h: h, w: w, c: 2)
            var y = Naive.convolution(x, weights: w1, bias: nil, outputChannels: 6, kernel: (3, 3), stride: (2, 2), activation: .relu)
            y = Naive.dense(Naive.globalAveragePool(y), weights: w2, bias: b2, neurons: 5)
            refExpectClose(try model.predict(try x.tensor()), y, "classifier at \(h)x\(w)")
        }
        let layers = try model.layers(forInputShapes: [Shape(height: 8, width: 3, channels: 2)])
        #expect(layers[0].outputShape == Shape(height: 4, width: 2, channels: 6))
        #expect(layers[0].macs == 4 * 2 * 6 * 9 * 2)
        let atSize = try model.summary(inputShapes: [Shape(height: 8, width: 3, channels: 2)])
        #expect(atSize.contains("(8, 3, 2)") && atSize.contains("(4, 2, 6)") && !atSize.contains("?"), "\(atSize)")
        #expect(atSize.contains("MACs per image: \(Model.grouped(4 * 2 * 6 * 9 * 2 + 5 * 6))"), "\(atSize)")
    }

    @Test("The least recently used size is dropped beyond cachedSizes")
    func leastRecentlyUsedSizeDropped() throws {
        let input = Input(channels: 1)
        let model = try Model(input: input, output: input --> Convolution(kernel: (3, 3), channels: 2, name: "conv"))
        try model.compile(cachedSizes: 2, from: RandomParameterSource(seed: 1))
        func run(_ h: Int) throws { _ = try model.predict(Tensor(zeros: Shape(height: h, width: 4, channels: 1))) }
        try run(3); try run(4); try run(3); try run(5)
        #expect(model.cachedInputShapes == [[Shape(height: 5, width: 4, channels: 1)], [Shape(height: 3, width: 4, channels: 1)]])
        Failure.expect(.invalidOption, mentioning: ["cachedSizes"]) {
            try model.compile(cachedSizes: 0, from: RandomParameterSource(seed: 1))
        }
    }

    @Test("Dense after Flatten of an open tensor: a compile error naming the layer")
    func denseAfterOpenFlatten() throws {
        let input = Input(channels: 3)
        let model = try Model(input: input, output: input
            --> Convolution(kernel: (3, 3), channels: 4, name: "conv") --> Flatten(name: "flat") --> Dense(neurons: 10, name: "fc"))
        #expect(model.summary().contains("(?)"))  // the flattened vector's length
        #expect(model.layers[2].parametersDependOnInputSize)
        Failure.expect(.invalidShape, mentioning: ["'fc'", "Dense", "open input size", "input (?)"]) {
            try model.compile(from: RandomParameterSource(seed: 1))
        }
        #expect(!model.isCompiled)
    }

    @Test("A size too small for a window fails at predict, naming the size and the layer; others still run")
    func sizeTooSmall() throws {
        let input = Input(channels: 2)
        let model = try Model(input: input, output: input
            --> Convolution(kernel: (5, 5), channels: 3, padding: .valid, name: "big")
            --> MaxPooling(kernel: (2, 2), name: "pool"))
        try model.compile(from: RandomParameterSource(seed: 4))
        Failure.expect(.invalidShape, mentioning: ["3×4", "'big'", "Convolution"]) {
            _ = try model.predict(Tensor(zeros: Shape(height: 3, width: 4, channels: 2)))
        }
        Failure.expect(.invalidShape, mentioning: ["5×5", "'pool'"]) {
            _ = try model.predict(Tensor(zeros: Shape(height: 5, width: 5, channels: 2)))
        }
        #expect(try model.predict(Tensor(zeros: Shape(height: 6, width: 7, channels: 2))).shape == Shape(height: 1, width: 1, channels: 3))
        #expect(model.cachedInputShapes.count == 1)
    }

    @Test("Negative, zero and mismatched sizes are errors")
    func badSizes() throws {
        Failure.expect(.invalidShape, mentioning: ["input", "(-2, ?, 3)"]) {
            let input = Input(height: -2, channels: 3)
            _ = try Model(input: input, output: input --> Activation(.relu))
        }
        Failure.expect(.invalidShape, mentioning: ["input", "(?, ?, 0)"]) {
            let input = Input(channels: 0)
            _ = try Model(input: input, output: input --> Activation(.relu))
        }
        let input = Input(channels: 3)
        let model = try Model(input: input, output: input --> Convolution(kernel: (1, 1), channels: 2, name: "conv"))
        Failure.expect(.notCompiled) { _ = try model.predict(Tensor(zeros: Shape(height: 2, width: 2, channels: 3))) }
        try model.compile(from: RandomParameterSource(seed: 1))
        var output = [Float](repeating: 0, count: 8)
        let values = [Float](repeating: 1, count: 12)
        for bad in [Shape(height: -1, width: 4, channels: 3), Shape(height: 0, width: 4, channels: 3)] {
            Failure.expect(.invalidInput, mentioning: ["input", "\(bad)"]) {
                try values.withUnsafeBufferPointer { source in
                    try output.withUnsafeMutableBufferPointer { try model.predict(source, shape: bad, batch: 1, into: $0) }
                }
            }
        }
        Failure.expect(.invalidInput, mentioning: ["(?, ?, 3)", "(2, 2, 4)"]) {
            _ = try model.predict(Tensor(zeros: Shape(height: 2, width: 2, channels: 4)))
        }
        Failure.expect(.invalidInput, mentioning: ["open size", "shape:"]) {
            try values.withUnsafeBufferPointer { source in
                try output.withUnsafeMutableBufferPointer { try model.predict(source, batch: 1, into: $0) }
            }
        }
        var short = [Float](repeating: 0, count: 5)
        Failure.expect(.invalidInput, mentioning: ["output buffer", "8"]) {
            try values.withUnsafeBufferPointer { source in
                try short.withUnsafeMutableBufferPointer {
                    try model.predict(source, shape: Shape(height: 1, width: 4, channels: 3), batch: 1, into: $0)
                }
            }
        }
        Failure.expect(.invalidInput, mentioning: ["open input size", "profile"]) { _ = try model.profile() }
        #expect(try model.profile(inputShapes: [Shape(height: 3, width: 3, channels: 3)]).count == 1)
    }

    @Test("The model file keeps open dimensions as null, and reads them back")
    func modelFileNullDimensions() throws {
        let network = Network()
        let model = try network.model(Input(height: nil, width: nil, channels: 3, name: "image"))
        let json = try model.modelFileJSON()
        let text = json.serialized()
        #expect(text.contains("null"), "\(text)")
        let file = try ModelFile(json: json, source: "test", directory: URL(fileURLWithPath: "/"))
        #expect(file.model.openInputShapes == [OpenShape(height: nil, width: nil, channels: 3)])
        #expect(file.model.openOutputShapes == model.openOutputShapes)
        try file.model.compile(layout: .pytorch, from: network.parameters)
        var rng = RefRandom(seed: 9)
        let x = rng.tensor(n: 1, h: 10, w: 6, c: 3)
        refExpectClose(try file.model.predict(try x.tensor()), network.reference(x), "model file at 10x6")
        // Channels cannot be open.
        let bad = try JSONValue.parse(Data(#"{"format": "anvil.model", "version": 1, "inputs": [{"name": "x", "shape": [null, null, null]}], "layers": [], "outputs": ["x"]}"#.utf8), source: "bad")
        Failure.expect(.invalidFile, mentioning: ["shape", "null"]) {
            _ = try ModelFile(json: bad, source: "bad", directory: URL(fileURLWithPath: "/"))
        }
    }
}

/// A fully convolutional PyTorch model exported to ONNX with open height and width and converted
/// without `--input-shape` (fixture `converters/onnx_open`, made by
/// `Scripts/fixtures/converter_fixtures.py`): one compile, PyTorch's output at three sizes.
@Suite struct OpenConvertedModelTests {
    static let directory = Fixtures.root.appendingPathComponent("converters/onnx_open")

    @Test func convertedModelFileRunsAtThreeSizes() throws {
        let file = try ModelFile(contentsOf: Self.directory.appendingPathComponent("model.json"))
        let model = try file.compiledModel(validateParameters: true)
        #expect(model.openInputShapes == [OpenShape(height: nil, width: nil, channels: 3)])
        #expect(model.openOutputShapes == [OpenShape(height: nil, width: nil, channels: 4)])
        let sizes = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.directory.appendingPathComponent("sizes.json"))) as! [[Int]]
        #expect(sizes.count == 3)
        for size in sizes {
            let (h, w) = (size[0], size[1])
            let input = try Fixtures.floats(Self.directory.appendingPathComponent("input_\(h)x\(w).f32"))
            let expected = try Fixtures.floats(Self.directory.appendingPathComponent("expected_\(h)x\(w).f32"))
            let output = try model.predict(Tensor(batch: 1, shape: Shape(height: h, width: w, channels: 3), values: input))
            #expect(output.shape == Shape(height: h, width: w, channels: 4))
            try #require(output.values.count == expected.count)
            let range = expected.max()! - expected.min()!
            let worst = zip(output.values, expected).map { abs($0 - $1) }.max()!
            #expect(worst <= 1e-3 * range, "\(h)x\(w): max abs diff \(worst) exceeds 1e-3 x range \(range)")
        }
        #expect(model.cachedInputShapes.count == 3)
    }
}
