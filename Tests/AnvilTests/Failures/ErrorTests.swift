import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Every invalid use throws an ``AnvilError`` with the right code and a message naming the layer
/// (or tensor, or input) and the shapes at fault. Nothing traps: cases that could trap run in a
/// child process (exit tests), so a trap fails one test instead of killing the run. The layers'
/// invalid options and shapes are in `Layers/ErrorTests+Layers.swift`, beside their shape and
/// reference tests.
@Suite("Errors")
struct ErrorTests {
    /// Expects `body` to throw an `AnvilError` with `code` whose message contains every string in
    /// `mentioning` (``Failure/expect(_:mentioning:_:sourceLocation:_:)``).
    static func expectError(_ code: AnvilError.Code, mentioning: [String] = [], _ context: String = "",
                            sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
        Failure.expect(code, mentioning: mentioning, context, sourceLocation: sourceLocation, body)
    }

    /// Builds `input(h, w, c) --> layer`.
    static func model(_ layer: any Layer, h: Int = 8, w: Int = 8, c: Int = 4) throws -> Model {
        let input = Input(width: w, height: h, channels: c)
        return try Model(input: input, output: input --> layer)
    }

    // MARK: - Parameters

    /// conv1 (3x3, 2 -> 3) --> bn1 --> relu --> dense fc (4x4x3 -> 2).
    static func parameterModel() throws -> Model {
        let input = Input(width: 4, height: 4, channels: 2)
        let output = input --> Convolution(kernel: (3, 3), channels: 3, name: "conv1") --> BatchNormalization(name: "bn1")
            --> Activation(.relu) --> Dense(neurons: 2, name: "fc")
        return try Model(input: input, output: output)
    }

    static func goodParameters() -> [String: [Float]] {
        var rng = RefRandom(seed: 3)
        return ["conv1_W": rng.floats(54), "conv1_b": rng.floats(3), "bn1_gamma": rng.floats(3, 0.5, 1.5),
                "bn1_beta": rng.floats(3), "bn1_mean": rng.floats(3), "bn1_variance": rng.floats(3, 0.1, 1),
                "fc_W": rng.floats(96), "fc_b": rng.floats(2)]
    }

    static func input(batch: Int = 2) throws -> Tensor {
        var rng = RefRandom(seed: 4)
        return try Tensor(batch: batch, shape: Shape(height: 4, width: 4, channels: 2), values: rng.floats(batch * 32))
    }

    @Test("Missing parameter tensor")
    func missingParameter() throws {
        var parameters = Self.goodParameters()
        parameters["conv1_b"] = nil
        let model = try Self.parameterModel()
        Self.expectError(.missingParameter, mentioning: ["conv1_b"], "array source") {
            try model.compile(from: ArrayParameterSource(parameters))
        }
        parameters = Self.goodParameters()
        parameters["bn1_variance"] = nil
        Self.expectError(.missingParameter, mentioning: ["bn1_variance"], "array source, BN") {
            try model.compile(from: ArrayParameterSource(parameters))
        }
        struct Unavailable: Error {}
        Self.expectError(.missingParameter, mentioning: ["conv1"], "closure throwing its own error") {
            try model.compile { _, _, _ in throw Unavailable() }
        }
        #expect(!model.isCompiled)
    }

    @Test("Wrong parameter count")
    func wrongParameterCount() throws {
        let model = try Self.parameterModel()
        for (name, delta) in [("conv1_W", -1), ("conv1_b", 1), ("bn1_gamma", -3), ("fc_W", 5)] {
            var parameters = Self.goodParameters()
            let good = parameters[name]!
            parameters[name] = delta < 0 ? Array(good.dropLast(-delta)) : good + [Float](repeating: 0, count: delta)
            Self.expectError(.invalidParameter, mentioning: [name, "\(good.count + delta)"], "\(name) \(delta)") {
                try model.compile(from: ArrayParameterSource(parameters))
            }
        }
        Self.expectError(.invalidParameter, mentioning: ["fc_W"], "closure, wrong count") {
            try model.compile { name, count, kind in
                ParameterData([Float](repeating: 0.5, count: name == "fc" && kind == .weights ? count + 1 : count))
            }
        }
        #expect(!model.isCompiled)
    }

    @Test("A tensor no layer uses in an ArrayParameterSource")
    func unusedParameter() throws {
        var parameters = Self.goodParameters()
        parameters["conv9_W"] = [1, 2, 3]
        let model = try Self.parameterModel()
        Self.expectError(.unusedParameter, mentioning: ["conv9_W"]) { try model.compile(from: ArrayParameterSource(parameters)) }
        // A bias for a layer without bias is unused too.
        let input = Input(width: 4, height: 4, channels: 2)
        let noBias = try Model(input: input, output: input --> Convolution(kernel: (1, 1), channels: 1, useBias: false, name: "c"))
        Self.expectError(.unusedParameter, mentioning: ["c_b"]) {
            try noBias.compile(from: ArrayParameterSource(["c_W": [1, 2], "c_b": [0]]))
        }
    }

    @Test("NaN or infinity in parameters with validateParameters; accepted without")
    func nonFiniteParameters() throws {
        let model = try Self.parameterModel()
        for (name, value) in [("conv1_W", Float.nan), ("fc_b", Float.infinity), ("bn1_mean", -Float.infinity)] {
            var parameters = Self.goodParameters()
            parameters[name]![1] = value
            Self.expectError(.invalidParameter, mentioning: [name], "\(name) = \(value)") {
                try model.compile(validateParameters: true, from: ArrayParameterSource(parameters))
            }
            #expect(!model.isCompiled)
        }
        var parameters = Self.goodParameters()
        parameters["conv1_W"]![0] = .nan
        try model.compile(validateParameters: false, from: ArrayParameterSource(parameters))
        #expect(model.isCompiled)
    }

    @Test("BatchNormalization with variance + epsilon <= 0: standalone and folded")
    func negativeVariance() throws {
        let model = try Self.parameterModel()  // bn1 folded into conv1
        for variance: Float in [-1, -0.001] {  // -0.001 + 0.001 == 0
            var parameters = Self.goodParameters()
            parameters["bn1_variance"]![2] = variance
            Self.expectError(.invalidParameter, mentioning: ["bn1"], "folded, variance \(variance)") {
                try model.compile(from: ArrayParameterSource(parameters))
            }
        }
        let input = Input(width: 2, height: 2, channels: 2)
        let standalone = try Model(input: input, output: input --> BatchNormalization(epsilon: 0.01, name: "norm"))
        Self.expectError(.invalidParameter, mentioning: ["norm"], "standalone") {
            try standalone.compile(from: ArrayParameterSource(["norm_gamma": [1, 1], "norm_beta": [0, 0], "norm_mean": [0, 0],
                                                               "norm_variance": [1, -0.5]]))
        }
        #expect(!model.isCompiled && !standalone.isCompiled)
    }

    @Test("A failed compile leaves a compiled model working, with the same outputs")
    func failedCompileKeepsModel() throws {
        let model = try Self.parameterModel()
        try model.compile(from: ArrayParameterSource(Self.goodParameters()))
        let x = try Self.input()
        let before = try model.predict(x)

        var missing = Self.goodParameters(); missing["fc_b"] = nil
        var wrongCount = Self.goodParameters(); wrongCount["conv1_W"]!.removeLast()
        var unused = Self.goodParameters(); unused["extra"] = [1]
        var badVariance = Self.goodParameters(); badVariance["bn1_variance"]![0] = -5
        var nan = Self.goodParameters(); nan["fc_W"]![3] = .nan
        var other = Self.goodParameters(); other["fc_b"] = [100, -100]  // valid, but paired with a failure below
        other["bn1_mean"] = nil
        for (context, parameters) in [("missing", missing), ("wrong count", wrongCount), ("unused", unused),
                                      ("bad variance", badVariance), ("nan", nan), ("partly new", other)] {
            #expect(throws: AnvilError.self, "\(context)") {
                try model.compile(validateParameters: true, from: ArrayParameterSource(parameters))
            }
            #expect(model.isCompiled)
            #expect(try model.predict(x) == before, "outputs changed after a failed compile (\(context))")
        }
        // The pytorch layout with the same (forge-ordered) arrays compiles but differs: a successful compile replaces.
        try model.compile(layout: .pytorch, from: ArrayParameterSource(Self.goodParameters()))
        #expect(try model.predict(x) != before)
        try model.compile(from: ArrayParameterSource(Self.goodParameters()))
        #expect(try model.predict(x) == before)
    }

    // MARK: - Predict

    @Test("predict before compile")
    func predictBeforeCompile() throws {
        let model = try Self.parameterModel()
        Self.expectError(.notCompiled) { _ = try model.predict(try Self.input()) }
        Self.expectError(.notCompiled, "batch API") { _ = try model.predict([try Self.input()]) }
        Self.expectError(.notCompiled, "unsafe API") {
            let input = [Float](repeating: 0, count: 32)
            var output = [Float](repeating: 0, count: 2)
            try input.withUnsafeBufferPointer { i in
                try output.withUnsafeMutableBufferPointer { o in try model.predict(i, batch: 1, into: o) }
            }
        }
    }

    @Test("predict with a wrong shape, value count, batch 0, input count, mixed batches")
    func predictBadInput() throws {
        let model = try Self.parameterModel()
        try model.compile(from: ArrayParameterSource(Self.goodParameters()))
        Self.expectError(.invalidInput, mentioning: ["(4, 4, 2)", "(4, 4, 3)"], "wrong shape") {
            _ = try model.predict(try Tensor(batch: 1, shape: Shape(height: 4, width: 4, channels: 3), values: [Float](repeating: 0, count: 48)))
        }
        Self.expectError(.invalidInput, mentioning: ["(4, 4, 2)", "(2, 8, 2)"], "same count, wrong shape") {
            _ = try model.predict(try Tensor(batch: 1, shape: Shape(height: 2, width: 8, channels: 2), values: [Float](repeating: 0, count: 32)))
        }
        Self.expectError(.invalidInput, mentioning: ["63"], "wrong value count") {
            var t = try Self.input()
            t.values.removeLast()
            _ = try model.predict(t)
        }
        Self.expectError(.invalidInput, mentioning: ["0"], "batch 0") {
            var t = try Self.input()
            t.batch = 0
            t.values = []
            _ = try model.predict(t)
        }
        Self.expectError(.invalidInput, mentioning: ["-1"], "batch -1") {
            var t = try Self.input()
            t.batch = -1
            _ = try model.predict(t)
        }
        Self.expectError(.invalidInput, mentioning: ["1", "2"], "two tensors for one input") {
            _ = try model.predict([try Self.input(), try Self.input()])
        }
        Self.expectError(.invalidInput, mentioning: [], "no tensors") { _ = try model.predict([Tensor]()) }
        Self.expectError(.invalidInput, mentioning: ["0"], "Tensor with batch 0") {
            _ = try Tensor(batch: 0, shape: Shape(height: 1, width: 1, channels: 1), values: [])
        }
        Self.expectError(.invalidInput, mentioning: ["3", "2"], "Tensor with wrong count") {
            _ = try Tensor(batch: 1, shape: Shape(height: 1, width: 1, channels: 3), values: [1, 2])
        }
        Self.expectError(.invalidInput, mentioning: [], "Tensor with zero channels") {
            _ = try Tensor(batch: 1, shape: Shape(height: 1, width: 1, channels: 0), values: [])
        }
        Self.expectError(.invalidInput, mentioning: ["2"], "unsafe API, output too small") {
            let input = [Float](repeating: 0, count: 64)
            var output = [Float](repeating: 0, count: 3)
            try input.withUnsafeBufferPointer { i in
                try output.withUnsafeMutableBufferPointer { o in try model.predict(i, batch: 2, into: o) }
            }
        }
        Self.expectError(.invalidInput, mentioning: [], "unsafe API, batch 0") {
            let input = [Float](repeating: 0, count: 32)
            var output = [Float](repeating: 0, count: 2)
            try input.withUnsafeBufferPointer { i in
                try output.withUnsafeMutableBufferPointer { o in try model.predict(i, batch: 0, into: o) }
            }
        }

        // Two inputs: mixed batches, wrong count; single-tensor predict refused.
        let a = Input(width: 2, height: 2, channels: 1), b = Input(width: 2, height: 2, channels: 1, name: "second")
        let two = try Model(inputs: [a, b], outputs: [[a, b] --> Add()])
        try two.compile(from: ArrayParameterSource([:]))
        let one = try Tensor(batch: 1, shape: Shape(height: 2, width: 2, channels: 1), values: [1, 2, 3, 4])
        let pair = try Tensor(batch: 2, shape: Shape(height: 2, width: 2, channels: 1), values: [Float](repeating: 1, count: 8))
        Self.expectError(.invalidInput, mentioning: ["second", "2", "1"], "mixed batches") { _ = try two.predict([one, pair]) }
        Self.expectError(.invalidInput, mentioning: ["2", "1"], "one tensor for two inputs") { _ = try two.predict([one]) }
        Self.expectError(.invalidInput, mentioning: [], "single-tensor predict on a two-input model") { _ = try two.predict(one) }
        #expect(try two.predict([one, one])[0].values == [2, 4, 6, 8])
    }

    // MARK: - Giant sizes

    @Test("Giant sizes whose products overflow Int throw instead of trapping")
    func giantSizes() {
        let huge = Int.max / 2
        Self.expectError(.invalidShape, mentioning: ["giant"], "conv channels Int.max/2") {
            _ = try Self.model(Convolution(kernel: (3, 3), channels: huge, name: "giant"))
        }
        Self.expectError(.invalidShape, mentioning: ["giant"], "pointwise channels Int.max/2") {
            _ = try Self.model(PointwiseConvolution(channels: huge, name: "giant"))
        }
        Self.expectError(.invalidShape, mentioning: ["giant"], "dense neurons Int.max/2") {
            _ = try Self.model(Dense(neurons: huge, name: "giant"))
        }
        Self.expectError(.invalidShape, mentioning: ["giant"], "depthwise multiplier Int.max/2") {
            _ = try Self.model(DepthwiseConvolution(kernel: (3, 3), multiplier: huge, name: "giant"))
        }
        Self.expectError(.invalidShape, mentioning: ["giant"], "resize to Int.max/2 rows") {
            _ = try Self.model(Resize(height: huge, width: 4, name: "giant"))
        }
        Self.expectError(.invalidShape, mentioning: ["giant"], "resize by 1e30") {
            _ = try Self.model(Resize(scaleHeight: 1e30, scaleWidth: 1, name: "giant"))
        }
        Self.expectError(.invalidShape, mentioning: ["giant"], "concatenated channels overflow") {
            let a = Input(width: 1, height: 1, channels: huge + 1), b = Input(width: 1, height: 1, channels: huge + 1)
            _ = try Model(inputs: [a, b], outputs: [[a, b] --> Concatenate(name: "giant")])
        }
        Self.expectError(.invalidShape, mentioning: ["big"], "input Int.max/2 x 4 x 4") {
            let input = Input(width: huge, height: 4, channels: 4, name: "big")
            _ = try Model(input: input, output: input --> Activation(.relu))
        }
        Self.expectError(.invalidOption, mentioning: ["giant"], "kernel Int.max") {
            _ = try Self.model(Convolution(kernel: (Int.max, 1), channels: 2, name: "giant"))
        }
        Self.expectError(.invalidOption, mentioning: ["giant"], "dilation Int.max") {
            _ = try Self.model(MaxPooling(kernel: (2, 2), dilation: (1, Int.max), name: "giant"))
        }
        Self.expectError(.invalidOption, mentioning: ["giant"], "pad Int.max") {
            _ = try Self.model(Convolution(kernel: (3, 3), channels: 2, padding: .explicit(top: Int.max, left: 0, bottom: 0, right: 0), name: "giant"))
        }
    }

    @Test("Tensor with a batch whose value count overflows Int: an error, not a trap")
    func tensorCountOverflow() async {
        await #expect(processExitsWith: .success, "Tensor.init: batch * shape.count overflows") {
            do {
                _ = try Tensor(batch: Int.max / 2, shape: Shape(height: 1, width: 1, channels: 3), values: [])
                exit(2)
            } catch let error as AnvilError {
                exit(error.code == .invalidInput ? 0 : 3)
            }
        }
    }

    @Test("SAME padding with stride Int.max: a shape or an error, not a trap")
    func sameStrideIntMax() async {
        await #expect(processExitsWith: .success, "WindowGeometry SAME: size + stride - 1 overflows") {
            let input = Input(width: 8, height: 8, channels: 1)
            do {
                let model = try Model(input: input, output: input --> Convolution(kernel: (3, 3), channels: 2, stride: (Int.max, 1)))
                exit(model.outputShapes == [Shape(height: 1, width: 8, channels: 2)] ? 0 : 2)
            } catch is AnvilError {
                exit(0)
            }
        }
    }

    @Test("Ceil-mode pooling with stride Int.max: a shape or an error, not a trap")
    func ceilStrideIntMax() async {
        await #expect(processExitsWith: .success, "WindowGeometry.outputSize ceil mode: span + stride - 1 overflows") {
            let input = Input(width: 8, height: 8, channels: 1)
            do {
                let model = try Model(input: input, output: input --> MaxPooling(kernel: (2, 2), stride: (Int.max, 1), ceilMode: true))
                exit(model.outputShapes == [Shape(height: 1, width: 7, channels: 1)] ? 0 : 2)
            } catch is AnvilError {
                exit(0)
            }
        }
    }

    @Test("SAME pooling over an input Int.max wide: a shape or an error, not a trap")
    func sameOnWidestInput() async {
        await #expect(processExitsWith: .success, "WindowGeometry SAME: size + stride - 1 overflows") {
            let input = Input(width: Int.max, height: 1, channels: 1)
            do {
                let model = try Model(input: input, output: input --> MaxPooling(kernel: (1, 2), stride: (1, 2), padding: .same))
                exit(model.outputShapes == [Shape(height: 1, width: Int.max / 2 + 1, channels: 1)] ? 0 : 2)
            } catch is AnvilError {
                exit(0)
            }
        }
    }

    @Test("Explicit pads on an input Int.max wide: a shape or an error, not a trap")
    func explicitPadsOnWidestInput() async {
        await #expect(processExitsWith: .success, "WindowGeometry: size + before + after overflows") {
            let input = Input(width: Int.max, height: 1, channels: 1)
            do {
                let model = try Model(input: input, output: input --> MaxPooling(kernel: (1, 2), stride: (1, 2),
                                                                                  padding: .explicit(top: 0, left: 1, bottom: 0, right: 1)))
                exit(model.outputShapes == [Shape(height: 1, width: Int.max / 2 + 1, channels: 1)] ? 0 : 2)
            } catch is AnvilError {
                exit(0)
            }
        }
    }

    @Test("layers, parameterCount and summary of a model whose MAC count overflows Int do not trap")
    func summaryMacOverflow() async {
        await #expect(processExitsWith: .success, "Convolution.macs: output.count * taps overflows") {
            // 2^50 activations (valid), a 3x3 conv with 1024 input channels: 9 * 2^60 MACs.
            let input = Input(width: 1 << 20, height: 1 << 20, channels: 1 << 10)
            do {
                let model = try Model(input: input, output: input --> Convolution(kernel: (3, 3), channels: 1 << 10))
                _ = model.layers
                _ = model.parameterCount
                _ = model.summary()
            } catch is AnvilError {}
        }
    }

    @Test("summary of a model whose activation memory overflows Int does not trap")
    func activationMemoryOverflowSummary() async {
        await #expect(processExitsWith: .success, "ExecutionPlan.floatsPerImage / Model.activationBytesPerImage overflow") {
            // Two live 2^62-float tensors: 2^63 floats per image.
            let input = Input(width: 1 << 31, height: 1 << 31, channels: 1)
            do {
                let model = try Model(input: input, output: input --> Activation(.relu))
                _ = model.summary()
            } catch is AnvilError {}
        }
    }

    @Test("compile of a model whose activation memory overflows Int throws or succeeds, never traps")
    func activationMemoryOverflowCompile() async {
        await #expect(processExitsWith: .success, "CompiledModel.init: slot offsets overflow") {
            let input = Input(width: 1 << 31, height: 1 << 31, channels: 1)
            do {
                let model = try Model(input: input, output: input --> Activation(.relu))
                try model.compile(from: ArrayParameterSource([:]))
            } catch is AnvilError {}
        }
    }

    @Test("Unsafe predict with a batch whose output size overflows Int: an error, not a trap")
    func unsafePredictOverflow() async {
        await #expect(processExitsWith: .success, "Model.predict(_:batch:into:): batch * output count overflows") {
            let input = Input(width: 1, height: 1, channels: 1)
            do {
                let model = try Model(input: input, output: input --> Resize(height: 1000, width: 1000))
                try model.compile(from: ArrayParameterSource([:]))
                let storage = UnsafeMutablePointer<Float>.allocate(capacity: 4)
                // Never read: the sizes must be rejected first.
                let batch = 1 << 50
                let inputBuffer = UnsafeBufferPointer(start: UnsafePointer(storage), count: batch)
                let outputBuffer = UnsafeMutableBufferPointer(start: storage, count: 4)
                try model.predict(inputBuffer, batch: batch, into: outputBuffer)
                exit(2)
            } catch let error as AnvilError {
                exit(error.code == .invalidInput ? 0 : 3)
            }
        }
    }
}
