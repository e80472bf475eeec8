import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// `DeformableConvolution` against a naive float64 reference of ONNX's `DeformConv` written
/// here in NCHW (bilinear taps with zeros outside, offsets per offset group, mask, groups,
/// bias), weights in PyTorch's layout as the importer gives them.
@Suite struct DeformableConvolutionKernelTests {
    struct Case: Sendable, CustomStringConvertible {
        var c = 4, o = 4, h = 6, w = 5, k = (3, 2), stride = (1, 1), dilation = (1, 1), pads = (0, 0, 0, 0)
        var groups = 1, offsetGroups = 1, mask = false, bias = false
        var description: String { "c\(c) o\(o) k\(k) s\(stride) d\(dilation) p\(pads) g\(groups) og\(offsetGroups) mask \(mask) bias \(bias)" }
        var oh: Int { (h + pads.0 + pads.2 - (dilation.0 * (k.0 - 1) + 1)) / stride.0 + 1 }
        var ow: Int { (w + pads.1 + pads.3 - (dilation.1 * (k.1 - 1) + 1)) / stride.1 + 1 }
    }

    /// ONNX DeformConv of one item: x [c][h][w], weights [o][c/g][kh][kw], offsets
    /// [og][kh][kw][2][oh][ow], mask [og][kh][kw][oh][ow] → [o][oh][ow].
    static func naive(_ t: Case, x: [Double], weights: [Double], offsets: [Double], mask: [Double]?, bias: [Double]?) -> [Double] {
        func pixel(_ c: Int, _ y: Int, _ xx: Int) -> Double { y < 0 || y >= t.h || xx < 0 || xx >= t.w ? 0 : x[(c * t.h + y) * t.w + xx] }
        func bilinear(_ c: Int, _ y: Double, _ xx: Double) -> Double {
            let y0 = Int(y.rounded(.down)), x0 = Int(xx.rounded(.down)), ly = y - Double(y0), lx = xx - Double(x0)
            return (1 - ly) * (1 - lx) * pixel(c, y0, x0) + (1 - ly) * lx * pixel(c, y0, x0 + 1)
                + ly * (1 - lx) * pixel(c, y0 + 1, x0) + ly * lx * pixel(c, y0 + 1, x0 + 1)
        }
        let (kh, kw) = t.k, cpg = t.c / t.groups, opg = t.o / t.groups, cpog = t.c / t.offsetGroups
        var out: [Double] = []
        for o in 0 ..< t.o { for i in 0 ..< t.oh { for j in 0 ..< t.ow {
            var sum = bias?[o] ?? 0
            for ci in 0 ..< cpg {
                let c = (o / opg) * cpg + ci, g = c / cpog
                for ky in 0 ..< kh { for kx in 0 ..< kw {
                    let base = ((g * kh + ky) * kw + kx)
                    let dy = offsets[((base * 2) * t.oh + i) * t.ow + j], dx = offsets[((base * 2 + 1) * t.oh + i) * t.ow + j]
                    let y = Double(i * t.stride.0 - t.pads.0 + ky * t.dilation.0) + dy
                    let xx = Double(j * t.stride.1 - t.pads.1 + kx * t.dilation.1) + dx
                    let m = mask.map { $0[(base * t.oh + i) * t.ow + j] } ?? 1
                    sum += weights[((o * cpg + ci) * kh + ky) * kw + kx] * bilinear(c, y, xx) * m
                } }
            }
            out.append(sum)
        } } }
        return out
    }

    static let cases: [Case] = [
        Case(),
        Case(c: 2, o: 3, h: 5, w: 5, k: (2, 2), pads: (1, 1, 1, 1), bias: true),
        Case(c: 4, o: 6, h: 7, w: 8, k: (3, 3), stride: (2, 1), dilation: (1, 2), pads: (1, 0, 2, 1), groups: 2, offsetGroups: 2, mask: true, bias: true),
        Case(c: 6, o: 2, h: 5, w: 6, k: (1, 3), groups: 2, offsetGroups: 3, mask: true),
    ]

    /// Channels-first [ch][h][w] values to channels-last.
    static func channelsLast(_ v: [Float], channels: Int, h: Int, w: Int) -> [Float] {
        var out: [Float] = []
        for y in 0 ..< h { for x in 0 ..< w { for c in 0 ..< channels { out.append(v[(c * h + y) * w + x]) } } }
        return out
    }

    @Test("Matches the naive definition", arguments: cases)
    func matchesNaive(_ t: Case) throws {
        var rng = RefRandom(seed: 19)
        let batch = 2, cells = t.k.0 * t.k.1
        let weights = rng.floats(t.o * t.c / t.groups * cells), bias = rng.floats(t.o)
        var image: [Float] = [], offsets: [Float] = [], mask: [Float] = [], expected: [Float] = []
        for _ in 0 ..< batch {
            let x = rng.floats(t.c * t.h * t.w)
            // Offsets up to ±2.5 pixels move samples between pixels and outside the image.
            let off = rng.floats(t.offsetGroups * cells * 2 * t.oh * t.ow, -2.5, 2.5)
            let m = rng.floats(t.offsetGroups * cells * t.oh * t.ow, 0, 1)
            image += Self.channelsLast(x, channels: t.c, h: t.h, w: t.w)
            offsets += Self.channelsLast(off, channels: t.offsetGroups * cells * 2, h: t.oh, w: t.ow)
            mask += Self.channelsLast(m, channels: t.offsetGroups * cells, h: t.oh, w: t.ow)
            let reference = Self.naive(t, x: x.map(Double.init), weights: weights.map(Double.init), offsets: off.map(Double.init),
                                       mask: t.mask ? m.map(Double.init) : nil, bias: t.bias ? bias.map(Double.init) : nil)
            expected += Self.channelsLast(reference.map { Float($0) }, channels: t.o, h: t.oh, w: t.ow)
        }
        let layer = DeformableConvolution(channels: t.o, kernel: t.k, stride: t.stride,
                                          padding: .explicit(top: t.pads.0, left: t.pads.1, bottom: t.pads.2, right: t.pads.3),
                                          dilation: t.dilation, groups: t.groups, offsetGroups: t.offsetGroups, useBias: t.bias)
        var shapes = [Shape(height: t.h, width: t.w, channels: t.c), Shape(height: t.oh, width: t.ow, channels: t.offsetGroups * cells * 2)]
        var inputs = [image, offsets]
        if t.mask { shapes.append(Shape(height: t.oh, width: t.ow, channels: t.offsetGroups * cells)); inputs.append(mask) }
        var parameters: [ParameterKind: ParameterData] = [.weights: ParameterData(weights)]
        if t.bias { parameters[.biases] = ParameterData(bias) }
        let output = try runLayerKernel(layer, inputs, batch: batch, shapes: shapes, parameters: parameters, layout: .pytorch)
        #expect(output.shape == Shape(height: t.oh, width: t.ow, channels: t.o))
        let result = output.values
        for (k, (got, want)) in zip(result, expected).enumerated() {
            #expect(abs(got - want) <= 1e-4 * max(1, abs(want)), "\(t) value \(k): \(got) vs \(want)")
        }
    }

    @Test("Offsets, masks and groups that do not fit are refused")
    func refusals() throws {
        let image = Shape(height: 4, width: 4, channels: 4), offsets = Shape(height: 3, width: 3, channels: 8)
        #expect(try DeformableConvolution(channels: 2, kernel: (2, 2)).outputShape(for: [image, offsets]) == Shape(height: 3, width: 3, channels: 2))
        #expect(throws: AnvilError.self) { try DeformableConvolution(channels: 2, kernel: (2, 2)).outputShape(for: [image, Shape(height: 3, width: 3, channels: 4)]) }
        #expect(throws: AnvilError.self) { try DeformableConvolution(channels: 2, kernel: (2, 2)).outputShape(for: [image, offsets, offsets]) }
        #expect(throws: AnvilError.self) { try DeformableConvolution(channels: 2, kernel: (2, 2), groups: 3).outputShape(for: [image, offsets]) }
        #expect(throws: AnvilError.self) { try DeformableConvolution(channels: 2, kernel: (2, 2), offsetGroups: 3).outputShape(for: [image, offsets]) }
        #expect(throws: AnvilError.self) { try DeformableConvolution(channels: 0, kernel: (2, 2)).outputShape(for: [image, offsets]) }
    }
}
