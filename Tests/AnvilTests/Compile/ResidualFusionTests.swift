import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Residual connections fused into the convolution that produces one of the `Add`'s inputs:
/// the plan fuses only when it may (two inputs, the other one computed earlier, the
/// convolution's output used nowhere else) and the results match the naive layers computed
/// one by one — through the direct kernel's in-register add and through the wrapper other
/// kernels get, with a folded BatchNormalization and every way of giving the activation; the
/// direct kernel writes its output over the residual's buffer exactly when that is safe.
@Suite("Residual fusion")
struct ResidualFusionTests {
    /// The steps' fused Add nodes of a model.
    static func fusedAdds(_ model: Model) -> [Int] { model.plan.steps.flatMap { $0.fusions(ResidualAddFusion.self).map(\.node) } }

    @Test("conv(x) + x, then an Activation layer: fused into the direct kernel")
    func intoDirectKernel() throws {
        var random = RefRandom(seed: 8_101)
        let x = random.tensor(n: 3, h: 5, w: 7, c: 20)
        let weights = random.floats(20 * 20), bias = random.floats(20)
        let input = Input(width: 7, height: 5, channels: 20)
        let sum = [input --> PointwiseConvolution(channels: 20, name: "pw"), input] --> Add(name: "add")
        let model = try Model(input: input, output: sum --> Activation(.relu6, name: "act"))
        #expect(Self.fusedAdds(model).count == 1 && model.plan.steps.count == 1)
        try model.compile(from: ArrayParameterSource(["pw_W": weights, "pw_b": bias]))
        let actual = try model.predict(try x.tensor())
        let conv = Naive.convolution(x, weights: weights, bias: bias, outputChannels: 20, kernel: (1, 1), padding: .valid)
        refExpectClose(actual, Naive.add([conv, x], activation: .relu6), "pw + x, relu6")
    }

    @Test("ResNet's bottleneck end: conv → BatchNormalization → Add(relu) with a projection shortcut computed later")
    func bottleneck() throws {
        var random = RefRandom(seed: 8_202)
        let x = random.tensor(n: 2, h: 6, w: 6, c: 9)
        let w3 = random.floats(17 * 9 * 9), wp = random.floats(17 * 9), bp = random.floats(17)
        let gamma = random.floats(17, 0.5, 1.5), beta = random.floats(17), mean = random.floats(17)
        let variance = random.floats(17, 0.2, 2)
        let input = Input(width: 6, height: 6, channels: 9)
        // The main branch comes first in the graph, the shortcut second: the Add fuses into the
        // shortcut's convolution (the later one), reading the main branch as its residual.
        let main = input --> Convolution(kernel: (3, 3), channels: 17, useBias: false, name: "conv")
            --> BatchNormalization(epsilon: 1e-5, name: "bn")
        let shortcut = input --> Convolution(kernel: (1, 1), channels: 17, padding: .valid, name: "proj")
        let model = try Model(input: input, output: [main, shortcut] --> Add(activation: .relu, name: "add"))
        #expect(Self.fusedAdds(model).count == 1)
        try model.compile(from: ArrayParameterSource([
            "conv_W": w3, "bn_gamma": gamma, "bn_beta": beta, "bn_mean": mean, "bn_variance": variance,
            "proj_W": wp, "proj_b": bp,
        ]))
        let actual = try model.predict(try x.tensor())
        let conv = Naive.convolution(x, weights: w3, bias: nil, outputChannels: 17, kernel: (3, 3))
        let normalized = Naive.batchNormalization(conv, gamma: gamma, beta: beta, mean: mean, variance: variance, epsilon: 1e-5)
        let projected = Naive.convolution(x, weights: wp, bias: bp, outputChannels: 17, kernel: (1, 1), padding: .valid)
        refExpectClose(actual, Naive.add([normalized, projected], activation: .relu), "bottleneck")
    }

    @Test("Kernels without an in-register add (Winograd 3×3, grouped im2col, 5×5 Winograd) get the wrapper",
          arguments: [(3, 1), (3, 2), (5, 1)])
    func wrapped(kernel: Int, groups: Int) throws {
        var random = RefRandom(seed: 8_303 + kernel * 10 + groups)
        let x = random.tensor(n: 2, h: 28, w: 28, c: 32)
        let weights = random.floats(32 * kernel * kernel * 32 / groups), bias = random.floats(32)
        let g = try WindowGeometry(input: x.shape, kernel: (kernel, kernel), stride: (1, 1), dilation: (1, 1), padding: .same)
        // 28×28: at 14×14 the cost model prefers the direct kernel for 32 channels.
        if kernel == 3 && groups == 1 && ConvolutionOverride.current == .auto {
            #expect(ConvolutionSelection.algorithm(geometry: g, inputChannels: 32, outputChannels: 32, groups: 1).winogradVariant != nil)
        }
        let input = Input(width: 28, height: 28, channels: 32)
        let conv = input --> Convolution(kernel: (kernel, kernel), channels: 32, groups: groups, name: "conv")
        let model = try Model(input: input, output: [conv, input] --> Add(activation: .relu, name: "add"))
        #expect(Self.fusedAdds(model).count == 1)
        try model.compile(from: ArrayParameterSource(["conv_W": weights, "conv_b": bias]))
        let actual = try model.predict(try x.tensor())
        let expected = Naive.convolution(x, weights: weights, bias: bias, outputChannels: 32, kernel: (kernel, kernel),
                                         groups: groups)
        refExpectClose(actual, Naive.add([expected, x], activation: .relu), "\(kernel)×\(kernel), \(groups) group(s)")
    }

    @Test("A depthwise convolution's output is added by the Add step, not fused")
    func depthwiseNotFused() throws {
        var random = RefRandom(seed: 8_313)
        let x = random.tensor(n: 2, h: 8, w: 8, c: 16)
        let weights = random.floats(16 * 9), bias = random.floats(16)
        let input = Input(width: 8, height: 8, channels: 16)
        let model = try Model(input: input, output: [input --> DepthwiseConvolution(kernel: (3, 3), name: "conv"), input]
                                  --> Add(activation: .relu, name: "add"))
        #expect(Self.fusedAdds(model).isEmpty)
        try model.compile(from: ArrayParameterSource(["conv_W": weights, "conv_b": bias]))
        let conv = Naive.depthwise(x, weights: weights, bias: bias, multiplier: 1, kernel: (3, 3))
        refExpectClose(try model.predict(try x.tensor()), Naive.add([conv, x], activation: .relu), "depthwise")
    }

    /// `a = pw(x)`, `b = pw(a)`, then `pw(b) + a` (the Add fused into the last convolution, `a`
    /// its residual), optionally followed by `+ a` again (so `a` outlives the fused step), or
    /// with the last convolution reading `a` itself (`pw(a) + a`). 72 channels: more blocks than
    /// one tile takes, so a kernel writing over its own input would read outputs as inputs.
    enum Block: CaseIterable { case residualDies, residualReadLater, residualIsConvInput }

    static func block(_ kind: Block) throws -> Model {
        let input = Input(width: 6, height: 5, channels: 72)
        let a = input --> PointwiseConvolution(channels: 72, name: "a")
        let last: SymbolicTensor
        if kind == .residualIsConvInput {
            last = a --> PointwiseConvolution(channels: 72, name: "c")
        } else {
            last = a --> PointwiseConvolution(channels: 72, activation: .relu, name: "b") --> PointwiseConvolution(channels: 72, name: "c")
        }
        let sum = [last, a] --> Add(activation: .relu, name: "add")
        return try Model(input: input, output: kind == .residualReadLater ? [sum, a] --> Add(name: "again") : sum)
    }

    @Test("The direct kernel writes over a residual whose last use it is, and only then", arguments: Block.allCases)
    func inPlace(kind: Block) throws {
        let model = try Self.block(kind)
        let fusedStep = try #require(model.plan.steps.firstIndex { !$0.fusions(ResidualAddFusion.self).isEmpty })
        let step = model.plan.steps[fusedStep]
        let declared = model.plan.steps.indices.map { $0 == fusedStep ? 1 : nil as Int? }
        let shared = BufferPlan(graph: model.graph, plan: model.plan, inPlaceInputs: declared)
        let alone = BufferPlan(graph: model.graph, plan: model.plan)
        #expect((shared.slot[step.output] == shared.slot[step.inputs[1]]) == (kind == .residualDies), "\(kind)")
        #expect(alone.slot[step.output] != alone.slot[step.inputs[1]], "\(kind): without a declaration nothing is shared")
        if kind == .residualDies { #expect(shared.floatsPerImage < alone.floatsPerImage) }

        var random = RefRandom(seed: 8_505)
        let x = random.tensor(n: 3, h: 5, w: 6, c: 72)
        let (wa, wb, wc) = (random.floats(72 * 72), random.floats(72 * 72), random.floats(72 * 72))
        let (ba, bb, bc) = (random.floats(72), random.floats(72), random.floats(72))
        var parameters = ["a_W": wa, "a_b": ba, "c_W": wc, "c_b": bc]
        if kind != .residualIsConvInput { parameters["b_W"] = wb; parameters["b_b"] = bb }
        try model.compile(from: ArrayParameterSource(parameters))
        let a = Naive.convolution(x, weights: wa, bias: ba, outputChannels: 72, kernel: (1, 1), padding: .valid)
        let b = Naive.convolution(a, weights: wb, bias: bb, outputChannels: 72, kernel: (1, 1), padding: .valid, activation: .relu)
        let c = Naive.convolution(kind == .residualIsConvInput ? a : b, weights: wc, bias: bc, outputChannels: 72,
                                  kernel: (1, 1), padding: .valid)
        let sum = Naive.add([c, a], activation: .relu)
        refExpectClose(try model.predict(try x.tensor()), kind == .residualReadLater ? Naive.add([sum, a]) : sum, "\(kind)")
    }

    @Test("No fusion for three inputs, a convolution output used twice, or a convolution with its own activation")
    func notFused() throws {
        var random = RefRandom(seed: 8_404)
        let x = random.tensor(n: 1, h: 4, w: 5, c: 8)
        let weights = random.floats(8 * 8), bias = random.floats(8)
        let params = ["pw_W": weights, "pw_b": bias]
        let conv = Naive.convolution(x, weights: weights, bias: bias, outputChannels: 8, kernel: (1, 1), padding: .valid)

        let input = Input(width: 5, height: 4, channels: 8)
        let pw = input --> PointwiseConvolution(channels: 8, name: "pw")
        let three = try Model(input: input, output: [pw, input, input] --> Add(name: "add"))
        #expect(Self.fusedAdds(three).isEmpty)
        try three.compile(from: ArrayParameterSource(params))
        refExpectClose(try three.predict(try x.tensor()), Naive.add([conv, x, x]), "three inputs")

        let input2 = Input(width: 5, height: 4, channels: 8)
        let pw2 = input2 --> PointwiseConvolution(channels: 8, name: "pw")
        let twice = try Model(input: input2, output: [pw2, pw2] --> Add(name: "add"))
        #expect(Self.fusedAdds(twice).isEmpty)
        try twice.compile(from: ArrayParameterSource(params))
        refExpectClose(try twice.predict(try x.tensor()), Naive.add([conv, conv]), "same tensor twice")

        let input3 = Input(width: 5, height: 4, channels: 8)
        let activated = input3 --> PointwiseConvolution(channels: 8, activation: .relu, name: "pw")
        let ownActivation = try Model(input: input3, output: [activated, input3] --> Add(name: "add"))
        #expect(Self.fusedAdds(ownActivation).isEmpty)
        try ownActivation.compile(from: ArrayParameterSource(params))
        let relu = Naive.convolution(x, weights: weights, bias: bias, outputChannels: 8, kernel: (1, 1), padding: .valid,
                                     activation: .relu)
        refExpectClose(try ownActivation.predict(try x.tensor()), Naive.add([relu, x]), "activation before the add")
    }
}
