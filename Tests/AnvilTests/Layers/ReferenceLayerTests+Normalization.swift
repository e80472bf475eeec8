import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ReferenceLayerTests``: Pad, the instance / layer / group normalisations, LRN and Lp pooling.
extension ReferenceLayerTests {
    @Test("Pad: constant (any value), reflect and edge on height, width and channels", arguments: Pad.Mode.allCases)
    func pad(mode: Pad.Mode) throws {
        var rng = RefRandom(seed: 3300 + Pad.Mode.allCases.firstIndex(of: mode)!)
        for _ in 0 ..< 10 {
            let x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(1 ... 5), w: rng.int(1 ... 5), c: rng.pick([1, 3, 8, 11]))
            func draw(_ size: Int) -> Int { mode == .reflect ? rng.int(0 ... size - 1) : rng.int(0 ... 3) }
            let pads = (draw(x.h), draw(x.w), draw(x.c), draw(x.h), draw(x.w), draw(x.c))
            let value = mode == .constant ? Double(rng.float(-2, 2)) : 0
            let expected = Naive.pad(x, pads: pads, mode: mode.rawValue, value: Double(Float(value)))
            let y = try refRun(x) {
                $0 --> Pad(top: pads.0, left: pads.1, bottom: pads.3, right: pads.4, front: pads.2, back: pads.5, mode: mode,
                           value: Float(value))
            }
            refExpectClose(y, expected, "pad \(mode) \(x) pads \(pads) value \(value)")
        }
    }

    @Test("GroupNormalization and InstanceNormalization: random groups, epsilon, with and without gamma/beta",
          arguments: 0 ..< 12)
    func groupNormalization(seed: Int) throws {
        var rng = RefRandom(seed: 3400 + seed)
        let groups = rng.pick([1, 2, 3, 4]), c = groups * rng.pick([1, 2, 3, 5, 9])
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(1 ... 6), w: rng.int(1 ... 6), c: c, -3, 5)
        let epsilon = rng.pick([1e-5, 1e-3, 0.1] as [Float]), affine = rng.bool()
        let gamma = rng.floats(c), beta = rng.floats(c)
        let parameters = affine ? ["n_gamma": gamma, "n_beta": beta] : [:]
        let expected = Naive.groupNormalization(x, groups: groups, epsilon: Double(epsilon), gamma: affine ? gamma : nil,
                                                beta: affine ? beta : nil)
        let y = try refRun(x, parameters: parameters) { $0 --> GroupNormalization(groups: groups, epsilon: epsilon, affine: affine, name: "n") }
        refExpectClose(y, expected, "group norm \(x) groups \(groups) epsilon \(epsilon) affine \(affine)")
        let instance = Naive.groupNormalization(x, groups: c, epsilon: Double(epsilon), gamma: affine ? gamma : nil,
                                                beta: affine ? beta : nil)
        let z = try refRun(x, parameters: parameters) { $0 --> InstanceNormalization(epsilon: epsilon, affine: affine, name: "n") }
        refExpectClose(z, instance, "instance norm \(x) epsilon \(epsilon) affine \(affine)")
    }

    @Test("LayerNormalization over channels: random channel counts (vector widths and tails)", arguments: 0 ..< 8)
    func layerNormalization(seed: Int) throws {
        var rng = RefRandom(seed: 3500 + seed)
        let c = rng.pick([1, 2, 7, 8, 16, 19, 40])
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(1 ... 5), w: rng.int(1 ... 5), c: c, -2, 4)
        let epsilon = rng.pick([1e-6, 1e-5, 0.01] as [Float]), affine = rng.bool()
        let gamma = rng.floats(c), beta = rng.floats(c)
        let expected = Naive.layerNormalization(x, epsilon: Double(epsilon), gamma: affine ? gamma : nil, beta: affine ? beta : nil)
        let y = try refRun(x, parameters: affine ? ["n_gamma": gamma, "n_beta": beta] : [:]) {
            $0 --> LayerNormalization(epsilon: epsilon, affine: affine, name: "n")
        }
        refExpectClose(y, expected, "layer norm \(x) epsilon \(epsilon) affine \(affine)")
    }

    @Test("LayerNormalization over the last 1, 2 or 3 axes: images, sequences and vectors", arguments: 0 ..< 10)
    func layerNormalizationAxes(seed: Int) throws {
        var rng = RefRandom(seed: 3550 + seed)
        let rank = rng.pick([2, 3, 4, 4]), axes = rng.int(1 ... rank - 1)
        let h = rank == 4 ? rng.int(1 ... 5) : 1, w = rank >= 3 ? rng.int(1 ... 6) : 1, c = rng.pick([1, 2, 7, 8, 19])
        var x = rng.tensor(n: rng.pick(refBatchSizes), h: h, w: w, c: c, -2, 4)
        x.rank = rank
        let size = [h, w, c].suffix(axes).reduce(1, *)
        let epsilon = rng.pick([1e-6, 1e-5, 0.01] as [Float]), affine = rng.bool()
        let gamma = rng.floats(size), beta = rng.floats(size)
        let expected = Naive.layerNormalization(x, axes: axes, epsilon: Double(epsilon), gamma: affine ? gamma : nil,
                                                beta: affine ? beta : nil)
        let input = Input(shape: x.shape)
        let model = try Model(input: input, output: input --> LayerNormalization(axes: axes, epsilon: epsilon, affine: affine, name: "n"))
        try model.compile(from: ArrayParameterSource(affine ? ["n_gamma": gamma, "n_beta": beta] : [:]))
        let y = try model.predict(try x.tensor())
        refExpectClose(y, expected, "layer norm rank \(rank) axes \(axes) \(x) epsilon \(epsilon) affine \(affine)")
    }

    @Test("LocalResponseNormalization: sizes 1 … 6, beta 0.75 / 0.5 / other, bias", arguments: 0 ..< 10)
    func localResponseNormalization(seed: Int) throws {
        var rng = RefRandom(seed: 3600 + seed)
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(1 ... 4), w: rng.int(1 ... 4), c: rng.pick([1, 3, 8, 13, 24, 37]), -3, 3)
        let size = rng.int(1 ... 6), alpha = rng.pick([1e-4, 0.01, 0.5] as [Float])
        let beta = rng.pick([0.75, 0.5, 0.6] as [Float]), bias = rng.pick([1, 2, 0.5] as [Float])
        let expected = Naive.localResponseNormalization(x, size: size, alpha: Double(alpha), beta: Double(beta), bias: Double(bias))
        let y = try refRun(x) { $0 --> LocalResponseNormalization(size: size, alpha: alpha, beta: beta, bias: bias) }
        refExpectClose(y, expected, "lrn \(x) size \(size) alpha \(alpha) beta \(beta) bias \(bias)")
    }

    @Test("LpPooling: p 1, 2, 3; random windows, strides, pads, dilations", arguments: [1, 2, 3] as [Float])
    func lpPooling(p: Float) throws {
        var rng = RefRandom(seed: 3700 + Int(p))
        var checked = 0
        while checked < 10 {
            let kernel = (rng.int(1 ... 3), rng.int(1 ... 3)), stride = (rng.int(1 ... 2), rng.int(1 ... 2))
            let dilation = (rng.int(1 ... 2), 1)
            let padding: Padding = rng.bool() ? .valid
                : .explicit(top: rng.int(0 ... min(1, kernel.0 - 1)), left: rng.int(0 ... min(1, kernel.1 - 1)), bottom: 0,
                            right: rng.int(0 ... min(1, kernel.1 - 1)))
            let x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(3 ... 6), w: rng.int(3 ... 6), c: rng.pick([1, 5, 8, 12]))
            guard let expected = Naive.lpPool(x, p: Double(p), kernel: kernel, stride: stride, padding: padding, dilation: dilation)
            else { continue }
            let y = try refRun(x) { $0 --> LpPooling(p: p, kernel: kernel, stride: stride, padding: padding, dilation: dilation) }
            refExpectClose(y, expected, "lp pool p \(p) \(x) kernel \(kernel) stride \(stride) \(padding) dilation \(dilation)")
            checked += 1
        }
    }
}
