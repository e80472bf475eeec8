import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Two folds of the execution plan, each checked twice: that the plan folds exactly when it may
/// (the steps it builds), and that the result matches the naive layers computed one by one.
/// - A zero `Pad` before a convolution, a depthwise convolution or an average pooling that counts
///   padding runs inside that layer's window padding.
/// - A squeeze-and-excitation gate multiplies the feature map inside the step that computes the
///   gate (``GatedKernel``).
@Suite("Plan folding: zero Pad into windows, squeeze-and-excitation gates")
struct PlanFoldingTests {
    static func foldedPads(_ model: Model) -> Int { model.plan.steps.filter { !$0.fusions(ZeroPadFold.self).isEmpty }.count }
    static func fusedGates(_ model: Model) -> Int { model.plan.steps.filter { !$0.fusions(SqueezeExcitationGateFusion.self).isEmpty }.count }

    // MARK: - Pad

    @Test("A zero Pad folds into the convolution after it (own padding valid or same, stride 1 or 2)",
          arguments: [(Padding.valid, 1), (.same, 2), (.explicit(top: 1, left: 0, bottom: 0, right: 1), 1)])
    func padIntoConvolution(padding: Padding, stride: Int) throws {
        var random = RefRandom(seed: 9_101 + stride)
        let x = random.tensor(n: 2, h: 9, w: 8, c: 5)
        let weights = random.floats(7 * 3 * 3 * 5), bias = random.floats(7)
        let input = Input(width: 8, height: 9, channels: 5)
        let output = input --> Pad(top: 1, left: 1, bottom: 0, right: 1, name: "pad")
            --> Convolution(kernel: (3, 3), channels: 7, stride: (stride, stride), padding: padding,
                            activation: .relu, name: "conv")
        let model = try Model(input: input, output: output)
        #expect(Self.foldedPads(model) == 1 && model.plan.steps.count == 1)
        try model.compile(from: ArrayParameterSource(["conv_W": weights, "conv_b": bias]))
        let padded = Naive.pad(x, pads: (1, 1, 0, 0, 1, 0), mode: "constant", value: 0)
        let expected = Naive.convolution(padded, weights: weights, bias: bias, outputChannels: 7, kernel: (3, 3),
                                         stride: (stride, stride), padding: padding, activation: .relu)
        refExpectClose(try model.predict(try x.tensor()), expected, "Pad --> conv \(padding) stride \(stride)")
    }

    @Test("A zero Pad folds into a depthwise convolution and into an average pooling that counts padding")
    func padIntoDepthwiseAndAveragePooling() throws {
        var random = RefRandom(seed: 9_202)
        let x = random.tensor(n: 2, h: 7, w: 7, c: 12)
        let weights = random.floats(12 * 3 * 3), bias = random.floats(12)
        let input = Input(width: 7, height: 7, channels: 12)
        let depthwise = input --> Pad(top: 0, left: 0, bottom: 1, right: 1)
            --> DepthwiseConvolution(kernel: (3, 3), stride: (2, 2), padding: .valid, name: "dw")
        let pooled = depthwise --> Pad(top: 1, left: 1, bottom: 1, right: 1)
            --> AveragePooling(kernel: (3, 3), stride: (1, 1), padding: .explicit(1), countIncludesPadding: true)
        let model = try Model(input: input, output: pooled)
        #expect(Self.foldedPads(model) == 2 && model.plan.steps.count == 2)
        try model.compile(from: ArrayParameterSource(["dw_W": weights, "dw_b": bias]))
        let dw = Naive.depthwise(Naive.pad(x, pads: (0, 0, 0, 1, 1, 0), mode: "constant", value: 0), weights: weights,
                                 bias: bias, multiplier: 1, kernel: (3, 3), stride: (2, 2), padding: .valid)
        let expected = Naive.averagePool(Naive.pad(dw, pads: (1, 1, 0, 1, 1, 0), mode: "constant", value: 0),
                                         kernel: (3, 3), stride: (1, 1), padding: .explicit(1), countIncludesPadding: true)!
        refExpectClose(try model.predict(try x.tensor()), expected, "Pad --> depthwise --> Pad --> average pooling")
    }

    /// Every Pad here must run as its own step: its values are not zeros in a window's padding.
    @Test("Pads that do not mean zero window padding stay, and the result is still right", arguments: 0 ..< 7)
    func padsThatStay(variant: Int) throws {
        var random = RefRandom(seed: 9_303 + variant)
        let x = random.tensor(n: 1, h: 6, w: 6, c: 4)
        let weights = random.floats(4 * 3 * 3 * 4), bias = random.floats(4)
        let input = Input(width: 6, height: 6, channels: 4)
        var pads = (1, 1, 0, 1, 1, 0), mode = "constant", value = 0.0
        let pad: Pad
        switch variant {
        case 0: pad = Pad(top: 1, left: 1, bottom: 1, right: 1, value: 0.5); value = 0.5
        case 1: pad = Pad(top: 1, left: 1, bottom: 1, right: 1, mode: .reflect); mode = "reflect"
        case 2: pad = Pad(top: 1, left: 1, bottom: 1, right: 1, mode: .edge); mode = "edge"
        case 3: pad = Pad(top: 1, left: 1, bottom: 1, right: 1, front: 1); pads = (1, 1, 1, 1, 1, 0)
        default: pad = Pad(top: 1, left: 1, bottom: 1, right: 1)
        }
        let padded = input --> pad
        let output: SymbolicTensor
        let inputChannels = pads.2 + 4
        let convWeights = random.floats(4 * 3 * 3 * inputChannels)
        switch variant {
        case 4: output = padded --> MaxPooling(kernel: (3, 3), stride: (1, 1))  // max pools over -∞, not 0
        case 5: output = padded --> AveragePooling(kernel: (3, 3), stride: (1, 1), padding: .explicit(1))  // excludes padding
        case 6: output = padded --> Convolution(kernel: (3, 3), channels: 4, padding: .explicit(2), name: "conv")  // 3 > extent
        default: output = padded --> Convolution(kernel: (3, 3), channels: 4, padding: .valid, name: "conv")
        }
        let model = try Model(input: input, output: output)
        #expect(Self.foldedPads(model) == 0 && model.plan.steps.count == 2, "variant \(variant)")
        let conv = variant < 4 ? convWeights : weights
        try model.compile(from: ArrayParameterSource(variant == 4 || variant == 5 ? [:] : ["conv_W": conv, "conv_b": bias]))
        let p = Naive.pad(x, pads: pads, mode: mode, value: value)
        let expected: RefTensor
        switch variant {
        case 4: expected = Naive.maxPool(p, kernel: (3, 3), stride: (1, 1))!
        case 5: expected = Naive.averagePool(p, kernel: (3, 3), stride: (1, 1), padding: .explicit(1))!
        case 6: expected = Naive.convolution(p, weights: conv, bias: bias, outputChannels: 4, kernel: (3, 3), padding: .explicit(2))
        default: expected = Naive.convolution(p, weights: conv, bias: bias, outputChannels: 4, kernel: (3, 3), padding: .valid)
        }
        refExpectClose(try model.predict(try x.tensor()), expected, "variant \(variant)")
    }

    // MARK: - Squeeze and excitation

    /// A MobileNet v3 block's end: conv → SE (pool, 1×1 ReLU, 1×1, gate activation) → multiply →
    /// 1×1 projection; the gate operand first or second, the gate's activation its own or a layer.
    @Test("A squeeze-and-excitation gate multiplies inside the step computing it", arguments: 0 ..< 4)
    func gateFused(variant: Int) throws {
        var random = RefRandom(seed: 9_404 + variant)
        let x = random.tensor(n: 3, h: 5, w: 6, c: 16)
        let w1 = random.floats(16 * 9 * 16), b1 = random.floats(16)
        let ws = random.floats(4 * 16), bs = random.floats(4), we = random.floats(16 * 4), be = random.floats(16)
        let wp = random.floats(8 * 16), bp = random.floats(8)
        let gateFunction: ActivationFunction = variant % 2 == 0 ? .hardSigmoid(alpha: 1.0 / 6.0, beta: 0.5) : .sigmoid
        let multiplyActivation: ActivationFunction = variant == 3 ? .relu : .none
        let input = Input(width: 6, height: 5, channels: 16)
        let map = input --> Convolution(kernel: (3, 3), channels: 16, name: "conv")
        let squeezed = map --> GlobalAveragePooling()
            --> Convolution(kernel: (1, 1), channels: 4, padding: .valid, activation: .relu, name: "fc1")
        let gate = variant < 2
            ? squeezed --> Convolution(kernel: (1, 1), channels: 16, padding: .valid, name: "fc2") --> Activation(gateFunction)
            : squeezed --> Convolution(kernel: (1, 1), channels: 16, padding: .valid, activation: gateFunction, name: "fc2")
        let operands = variant % 2 == 0 ? [gate, map] : [map, gate]
        let product = operands --> Elementwise(.multiply, activation: multiplyActivation)
        let model = try Model(input: input, output: product --> PointwiseConvolution(channels: 8, name: "proj"))
        #expect(Self.fusedGates(model) == 1, "variant \(variant)")
        #expect(!model.plan.steps.contains { model.graph.nodes[$0.node].layer is Elementwise })
        try model.compile(from: ArrayParameterSource([
            "conv_W": w1, "conv_b": b1, "fc1_W": ws, "fc1_b": bs, "fc2_W": we, "fc2_b": be, "proj_W": wp, "proj_b": bp,
        ]))
        let expected = Self.squeezeExcitation(x, w1, b1, ws, bs, we, be, gateFunction, multiplyActivation, wp, bp)
        refExpectClose(try model.predict(try x.tensor()), expected, "SE variant \(variant)")
    }

    @Test("A gate read elsewhere too, or a product of two full maps, is not fused and stays right")
    func gateNotFused() throws {
        var random = RefRandom(seed: 9_505)
        let x = random.tensor(n: 2, h: 4, w: 4, c: 6)
        let w = random.floats(6 * 6), b = random.floats(6)
        let input = Input(width: 4, height: 4, channels: 6)
        let gate = input --> GlobalAveragePooling() --> Convolution(kernel: (1, 1), channels: 6, padding: .valid, name: "fc")
            --> Activation(.sigmoid)
        let product = [input, gate] --> Elementwise(.multiply)
        let shared = try Model(inputs: [input], outputs: [product, gate])
        #expect(Self.fusedGates(shared) == 0)
        // A gate made by a layer of two inputs: its kernel reads every input it has, so it
        // cannot be given the map as one more.
        let pooledGate = input --> GlobalAveragePooling()
        let summed = [pooledGate, pooledGate --> Activation(.tanh)] --> Add(activation: .sigmoid)
        let twoInputs = try Model(input: input, output: [input, summed] --> Elementwise(.multiply))
        #expect(Self.fusedGates(twoInputs) == 0)
        try twoInputs.compile(from: ArrayParameterSource([:]))
        var sumReference = Naive.globalAveragePool(x)
        sumReference.rank = 4
        let gateReference = Naive.add([sumReference, Naive.activation(sumReference, .tanh)], activation: .sigmoid)
        refExpectClose(try twoInputs.predict(try x.tensor()), Naive.elementwise([x, gateReference], .multiply), "x × Add gate")
        let full = input --> PointwiseConvolution(channels: 6, name: "pw")
        let square = try Model(input: input, output: [full, input] --> Elementwise(.multiply))
        #expect(Self.fusedGates(square) == 0)

        try shared.compile(from: ArrayParameterSource(["fc_W": w, "fc_b": b]))
        var pooled = Naive.globalAveragePool(x)
        pooled.rank = 4
        let g = Naive.convolution(pooled, weights: w, bias: b, outputChannels: 6, kernel: (1, 1), padding: .valid,
                                  activation: .sigmoid)
        let outputs = try shared.predict([try x.tensor()])
        refExpectClose(outputs[0], Naive.elementwise([x, g], .multiply), "x × gate")
        try square.compile(from: ArrayParameterSource(["pw_W": w, "pw_b": b]))
        let conv = Naive.convolution(x, weights: w, bias: b, outputChannels: 6, kernel: (1, 1), padding: .valid)
        refExpectClose(try square.predict(try x.tensor()), Naive.elementwise([conv, x], .multiply), "pw(x) × x")
    }

    @Test("An open-size model with a gate and a folded Pad: right at three sizes")
    func openSizes() throws {
        var random = RefRandom(seed: 9_606)
        let w1 = random.floats(8 * 9 * 3), b1 = random.floats(8), we = random.floats(8 * 8), be = random.floats(8)
        let input = Input(channels: 3)
        let map = input --> Pad(top: 1, left: 1, bottom: 1, right: 1)
            --> Convolution(kernel: (3, 3), channels: 8, stride: (2, 2), padding: .valid, name: "conv")
        let gate = map --> GlobalAveragePooling()
            --> Convolution(kernel: (1, 1), channels: 8, padding: .valid, activation: .sigmoid, name: "fc")
        let model = try Model(input: input, output: [map, gate] --> Elementwise(.multiply))
        #expect(Self.foldedPads(model) == 1 && Self.fusedGates(model) == 1)
        try model.compile(from: ArrayParameterSource(["conv_W": w1, "conv_b": b1, "fc_W": we, "fc_b": be]))
        for (h, w) in [(9, 9), (12, 7), (9, 9), (5, 16)] {
            let x = random.tensor(n: 2, h: h, w: w, c: 3)
            let conv = Naive.convolution(Naive.pad(x, pads: (1, 1, 0, 1, 1, 0), mode: "constant", value: 0), weights: w1,
                                         bias: b1, outputChannels: 8, kernel: (3, 3), stride: (2, 2), padding: .valid)
            var pooled = Naive.globalAveragePool(conv)
            pooled.rank = 4
            let g = Naive.convolution(pooled, weights: we, bias: be, outputChannels: 8, kernel: (1, 1), padding: .valid,
                                      activation: .sigmoid)
            refExpectClose(try model.predict(try x.tensor()), Naive.elementwise([conv, g], .multiply), "\(h)×\(w)")
        }
    }

    /// conv 3×3 → SE → multiply (with its activation) → 1×1 projection, in float64.
    static func squeezeExcitation(_ x: RefTensor, _ w1: [Float], _ b1: [Float], _ ws: [Float], _ bs: [Float],
                                  _ we: [Float], _ be: [Float], _ gate: ActivationFunction, _ after: ActivationFunction,
                                  _ wp: [Float], _ bp: [Float]) -> RefTensor {
        let map = Naive.convolution(x, weights: w1, bias: b1, outputChannels: 16, kernel: (3, 3))
        var pooled = Naive.globalAveragePool(map)
        pooled.rank = 4
        let squeezed = Naive.convolution(pooled, weights: ws, bias: bs, outputChannels: 4, kernel: (1, 1), padding: .valid,
                                         activation: .relu)
        let g = Naive.convolution(squeezed, weights: we, bias: be, outputChannels: 16, kernel: (1, 1), padding: .valid,
                                  activation: gate)
        let product = Naive.elementwise([g, map], .multiply, activation: after)
        return Naive.convolution(product, weights: wp, bias: bp, outputChannels: 8, kernel: (1, 1), padding: .valid)
    }
}
