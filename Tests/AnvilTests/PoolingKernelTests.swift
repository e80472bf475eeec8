import Foundation
import Testing
@testable import Anvil

/// Max pooling's C kernel, both bodies, against the naive reference (the model-level pooling
/// tests in ReferenceLayerTests cover the body the CPU picks), and how both treat NaN.
@Suite("Max pooling kernel")
struct PoolingKernelTests {
    static func run(_ x: RefTensor, _ g: WindowGeometry, portable: Bool) -> [Float] {
        var kernel = PoolingKernel(geometry: g, channels: x.c, mode: .max)
        kernel.portableBody = portable
        return refRunKernel(kernel, input: x.floats, batch: x.n, inputShape: x.shape,
                            outputShape: Shape(height: g.outputHeight, width: g.outputWidth, channels: x.c))
    }

    @Test("Random windows, strides, pads, dilations and channel counts (1 … 75)", arguments: [false, true])
    func matchesReference(portable: Bool) throws {
        var random = RefRandom(seed: 515)
        var checked = 0
        while checked < 40 {
            let kernel = (random.int(1 ... 4), random.int(1 ... 4)), stride = (random.int(1 ... 3), random.int(1 ... 3))
            let dilation = (random.int(1 ... 2), random.int(1 ... 2))
            let padding: Padding = random.bool() ? .valid
                : .explicit(top: random.int(0 ... 1), left: random.int(0 ... 1), bottom: random.int(0 ... 1), right: random.int(0 ... 1))
            let x = random.tensor(n: random.int(1 ... 2), h: random.int(4 ... 9), w: random.int(4 ... 9),
                                  c: random.pick([1, 3, 8, 13, 32, 40, 75]))
            guard let expected = Naive.maxPool(x, kernel: kernel, stride: stride, padding: padding, dilation: dilation),
                  let g = try? WindowGeometry(input: x.shape, kernel: kernel, stride: stride, dilation: dilation, padding: padding)
            else { continue }
            let actual = Self.run(x, g, portable: portable)
            #expect(actual == expected.floats, "\(portable ? "portable" : "AVX2") \(x) kernel \(kernel) stride \(stride) dilation \(dilation) \(padding)")
            checked += 1
        }
    }

    @Test("Both bodies skip NaN inputs alike")
    func nanInputs() throws {
        var x = RefTensor(n: 1, h: 2, w: 2, c: 40, floats: (0 ..< 160).map { Float($0 % 7) })
        x.v[0] = .nan; x.v[40 + 1] = .nan; x.v[5] = .nan; x.v[45] = .nan; x.v[85] = .nan; x.v[125] = .nan
        let g = try WindowGeometry(input: x.shape, kernel: (2, 2), stride: (2, 2), dilation: (1, 1), padding: .valid)
        let avx = Self.run(x, g, portable: false), portable = Self.run(x, g, portable: true)
        #expect(avx.map(\.bitPattern) == portable.map(\.bitPattern))
        #expect(avx[5] == -.infinity)          // all four cells NaN
        #expect(avx[0] == Float([40, 80, 120].map { $0 % 7 }.max()!))  // the other three cells
    }
}
