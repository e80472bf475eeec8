import Foundation
import Synchronization
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Fusion is the compiler's promise, not each layer's: a fusable layer whose kernel forgets the
/// fused activation, BatchNormalization or residual still gives the right output (the compiler
/// applies what the kernel reports it did not), and a kernel that applies the wrong thing fails
/// compilation loudly. Built-in kernels apply everything themselves and are never wrapped.
@Suite("Fusion guarantee")
struct FusionGuaranteeTests {
    /// Doubles its input; its kernel ignores everything the compiler fused into it.
    final class ForgetfulDoubling: FusableLayer {
        let name: String?
        let activation: ActivationFunction = .none
        let absorbs: FusionCapabilities
        /// What the kernel claims to apply (`nil`: it does not report at all).
        let reportedActivation: ActivationFunction?

        init(absorbs: FusionCapabilities = .all, reportedActivation: ActivationFunction? = nil, name: String) {
            self.absorbs = absorbs
            self.reportedActivation = reportedActivation
            self.name = name
        }

        func outputShape(for inputs: [Shape]) throws -> Shape { inputs[0] }

        func makeKernel(_ context: KernelContext) throws -> any Kernel {
            // Forgets context.fusedActivation, context.foldedAffine and context.fusedResidual.
            if let reportedActivation { return ReportingDoublingKernel(appliedActivation: reportedActivation) }
            return DoublingKernel()
        }
    }

    /// Doubles its input; reads the folded affine map its context offers and says it leaves it
    /// out, or, with `folds`, scales its doubling by it and says so.
    final class AffineReadingDoubling: FusableLayer {
        let name: String?
        let activation: ActivationFunction = .none
        let absorbs: FusionCapabilities = [.batchNormalization]
        let folds: Bool
        /// Whether the compiler offered a folded affine map (set when the kernel is built).
        let offered = Mutex(false)

        init(folds: Bool, name: String) {
            self.folds = folds
            self.name = name
        }

        func outputShape(for inputs: [Shape]) throws -> Shape { inputs[0] }

        func makeKernel(_ context: KernelContext) throws -> any Kernel { try makeFusedKernel(context).kernel }

        func makeFusedKernel(_ context: KernelContext) throws -> FusedKernel {
            offered.withLock { $0 = context.foldedAffine != nil }
            guard folds, let affine = context.foldedAffine else { return FusedKernel(DoublingKernel(), appliesFoldedAffine: false) }
            return FusedKernel(AffineDoublingKernel(scale: affine.scale, shift: affine.shift), appliesFoldedAffine: true)
        }
    }

    /// `output = scale[c] * 2 * input[0] + shift[c]`.
    struct AffineDoublingKernel: Kernel {
        let scale: [Float], shift: [Float]
        func run(_ io: KernelIO) {
            let channels = io.outputShape.channels
            for i in 0 ..< io.batch * io.outputShape.count { io.output[i] = scale[i % channels] * 2 * io.inputs[0][i] + shift[i % channels] }
        }
    }

    /// `output = 2 * input[0]`; knows nothing of epilogues.
    struct DoublingKernel: Kernel {
        func run(_ io: KernelIO) {
            for i in 0 ..< io.batch * io.outputShape.count { io.output[i] = 2 * io.inputs[0][i] }
        }
    }

    /// `output = activation(2 * input[0])`, and says so.
    struct ReportingDoublingKernel: EpilogueReportingKernel {
        let appliedActivation: ActivationFunction
        var addsResidual: Bool { false }
        func run(_ io: KernelIO) {
            for i in 0 ..< io.batch * io.outputShape.count { io.output[i] = appliedActivation(2 * io.inputs[0][i]) }
        }
    }

    static func doubled(_ x: RefTensor) -> RefTensor {
        var y = x
        y.v = x.v.map { 2 * $0 }
        return y
    }

    @Test("A forgotten fused activation is applied by the compiler")
    func forgottenActivation() throws {
        var random = RefRandom(seed: 9_101)
        let x = random.tensor(n: 2, h: 3, w: 4, c: 5)
        let input = Input(width: 4, height: 3, channels: 5)
        let model = try Model(input: input, output: input --> ForgetfulDoubling(name: "double") --> Activation(.relu, name: "act"))
        #expect(model.plan.steps.count == 1 && !model.plan.steps[0].fusions(ActivationFusion.self).isEmpty)
        try model.compile(from: ArrayParameterSource([:]))
        refExpectClose(try model.predict(try x.tensor()), Naive.activation(Self.doubled(x), .relu), "relu(2x)")
    }

    @Test("A forgotten BatchNormalization, residual and activation are applied in order")
    func forgottenEverything() throws {
        var random = RefRandom(seed: 9_202)
        let x = random.tensor(n: 2, h: 3, w: 3, c: 4)
        let gamma = random.floats(4, 0.5, 1.5), beta = random.floats(4), mean = random.floats(4)
        let variance = random.floats(4, 0.2, 2)
        let input = Input(width: 3, height: 3, channels: 4)
        let branch = input --> ForgetfulDoubling(name: "double") --> BatchNormalization(epsilon: 1e-3, name: "bn")
        let model = try Model(input: input, output: [branch, input] --> Add(activation: .relu6, name: "add"))
        let step = try #require(model.plan.steps.first)
        #expect(model.plan.steps.count == 1 && !step.fusions(BatchNormalizationFold.self).isEmpty && !step.fusions(ResidualAddFusion.self).isEmpty)
        try model.compile(from: ArrayParameterSource(["bn_gamma": gamma, "bn_beta": beta, "bn_mean": mean, "bn_variance": variance]))
        let normalized = Naive.batchNormalization(Self.doubled(x), gamma: gamma, beta: beta, mean: mean, variance: variance,
                                                  epsilon: 1e-3)
        refExpectClose(try model.predict(try x.tensor()), Naive.add([normalized, x], activation: .relu6), "relu6(bn(2x) + x)")
    }

    @Test("Reading the offered BatchNormalization takes nothing: what the layer reports decides who applies it", arguments: [false, true])
    func affineReportedNotRead(folds: Bool) throws {
        var random = RefRandom(seed: 9_303)
        let x = random.tensor(n: 2, h: 3, w: 3, c: 4)
        let gamma = random.floats(4, 0.5, 1.5), beta = random.floats(4), mean = random.floats(4)
        let variance = random.floats(4, 0.2, 2)
        let input = Input(width: 3, height: 3, channels: 4)
        let layer = AffineReadingDoubling(folds: folds, name: "double")
        let model = try Model(input: input, output: input --> layer --> BatchNormalization(epsilon: 1e-3, name: "bn"))
        #expect(model.plan.steps.count == 1)
        try model.compile(from: ArrayParameterSource(["bn_gamma": gamma, "bn_beta": beta, "bn_mean": mean, "bn_variance": variance]))
        #expect(layer.offered.withLock { $0 })
        let kernel = try model.compilation().model(for: model.inputShapes).steps[0].kernel
        #expect((kernel is EpilogueKernel) == !folds, "the compiler applies the map only when the layer leaves it out")
        let expected = Naive.batchNormalization(Self.doubled(x), gamma: gamma, beta: beta, mean: mean, variance: variance,
                                                epsilon: 1e-3)
        refExpectClose(try model.predict(try x.tensor()), expected, "bn(2x)")
    }

    @Test("A kernel that applies a different activation than the fused one fails compilation")
    func wrongActivationFailsLoudly() throws {
        let input = Input(width: 2, height: 2, channels: 3)
        let model = try Model(input: input, output: input --> ForgetfulDoubling(reportedActivation: .sigmoid, name: "double")
                                  --> Activation(.relu, name: "act"))
        #expect {
            try model.compile(from: ArrayParameterSource([:]))
        } throws: { error in
            guard let error = error as? AnvilError else { return false }
            return error.code == .internalError && error.message.contains("'double'") && error.message.contains("relu")
        }
        #expect(!model.isCompiled)
    }

    @Test("A layer that does not declare a capability is not fused with it")
    func undeclaredCapability() throws {
        let input = Input(width: 2, height: 2, channels: 3)
        let model = try Model(input: input, output: input --> ForgetfulDoubling(absorbs: [.batchNormalization], name: "double")
                                  --> Activation(.relu, name: "act"))
        #expect(model.plan.steps.count == 2)
    }

    @Test("Built-in kernels apply the whole epilogue themselves: nothing is wrapped")
    func builtInKernelsAreNotWrapped() throws {
        let input = Input(width: 6, height: 6, channels: 8)
        let main = input --> Convolution(kernel: (3, 3), channels: 8, useBias: false, name: "conv")
            --> BatchNormalization(name: "bn")
        let summed = [main, input] --> Add(activation: .relu, name: "add")
        let output = summed --> DepthwiseConvolution(kernel: (3, 3), name: "dw") --> Activation(.relu6, name: "act")
            --> Dense(neurons: 4, name: "fc") --> Activation(.sigmoid, name: "sig")
        let gated = [output, output --> Activation(.tanh, name: "gate")] --> Elementwise(.multiply, name: "mul")
            --> Activation(.gelu, name: "gelu")
            --> BatchNormalization(name: "bn2") --> Activation(.relu, name: "relu2")
        let model = try Model(input: input, output: gated)
        try model.compile(from: RandomParameterSource(seed: 3))
        let kernels = try model.compilation().model(for: model.inputShapes).steps.map(\.kernel)
        #expect(kernels.count == 6)
        #expect((kernels[kernels.count - 2] as? ElementwiseKernel)?.appliedActivation == .gelu)
        #expect((kernels.last as? ChannelAffineKernel)?.appliedActivation == .relu)
        #expect(!kernels.contains { $0 is EpilogueKernel })
    }

    @Test("A concatenation along channels takes a following BatchNormalization and activation; along the height it does not")
    func concatenationTakesNormalization() throws {
        let input = Input(width: 4, height: 4, channels: 3)
        let joined = [input, input --> Activation(.tanh, name: "t")] --> Concatenate(name: "cat")
            --> BatchNormalization(name: "bn") --> Activation(.relu, name: "relu")
        let model = try Model(input: input, output: joined)
        try model.compile(from: RandomParameterSource(seed: 4))
        let kernels = try model.compilation().model(for: model.inputShapes).steps.map(\.kernel)
        #expect(kernels.count == 2)
        let concatenation = try #require(kernels.last as? ConcatenateKernel)
        #expect(concatenation.affine != nil && concatenation.appliedActivation == .relu)

        let stacked = [input, input] --> Concatenate(axis: 1, name: "cat") --> BatchNormalization(name: "bn")
            --> Activation(.relu, name: "relu")
        let heightModel = try Model(input: input, output: stacked)
        try heightModel.compile(from: RandomParameterSource(seed: 4))
        let heightKernels = try heightModel.compilation().model(for: heightModel.inputShapes).steps.map(\.kernel)
        #expect(heightKernels.count == 1 && heightKernels[0] is EpilogueKernel)
    }

    @Test("A channel shuffle after a concatenation along channels is fused into it, after a norm and activation too; not when the joined tensor is read again")
    func concatenationTakesShuffle() throws {
        let input = Input(width: 4, height: 4, channels: 6)
        func kernels(_ build: (SymbolicTensor) -> SymbolicTensor) throws -> [any Kernel] {
            let model = try Model(input: input, output: build(input))
            try model.compile(from: RandomParameterSource(seed: 4))
            return try model.compilation().model(for: model.inputShapes).steps.map(\.kernel)
        }
        let plain = try kernels { [$0, $0 --> Activation(.tanh, name: "t")] --> Concatenate(name: "cat") --> ChannelShuffle(groups: 3) }
        #expect(plain.count == 2 && (plain.last as? ConcatenateKernel)?.shuffleGroups == 3)

        let normalized = try kernels {
            [$0, $0 --> Activation(.tanh, name: "t")] --> Concatenate(name: "cat") --> BatchNormalization(name: "bn")
                --> Activation(.relu, name: "relu") --> ChannelShuffle(groups: 2)
        }
        let concatenation = try #require(normalized.last as? ConcatenateKernel)
        #expect(normalized.count == 2 && concatenation.shuffleGroups == 2 && concatenation.affine != nil
                && concatenation.appliedActivation == .relu)

        let reread = try kernels { x in
            let cat = [x, x --> Activation(.tanh, name: "t")] --> Concatenate(name: "cat")
            return [cat --> ChannelShuffle(groups: 2), cat] --> Add()
        }
        #expect(reread.count == 4 && (reread[1] as? ConcatenateKernel)?.shuffleGroups == nil)
    }

    @Test("A channel slice read only by a concatenation along channels is folded into it; one read again or with a step is not")
    func concatenationReadsSlices() throws {
        let input = Input(width: 4, height: 4, channels: 8)
        let block = [input --> Slice(axis: -1, start: 0, end: 4), input --> Slice(axis: -1, start: 4) --> Activation(.tanh)]
            --> Concatenate() --> ChannelShuffle(groups: 2)
        let model = try Model(input: input, output: block)
        try model.compile(from: RandomParameterSource(seed: 4))
        let steps = try model.compilation().model(for: model.inputShapes).steps
        // The second slice, the activation, and the concatenation with the first slice and the shuffle.
        #expect(steps.count == 3)
        let concatenation = try #require(steps.last?.kernel as? ConcatenateKernel)
        #expect(concatenation.windows.map(\.first) == [0, 0] && concatenation.windows.map(\.stride) == [8, 4])
        #expect(steps.last?.inputShapes.map(\.channels) == [8, 4])

        let half = input --> Slice(axis: -1, start: 0, end: 4)
        let kept = try Model(input: input, output: [half, half --> Activation(.tanh), input --> Slice(axis: -1, step: 2)] --> Concatenate())
        try kept.compile(from: RandomParameterSource(seed: 4))
        #expect(try kept.compilation().model(for: kept.inputShapes).steps.count == 4)
    }
}

