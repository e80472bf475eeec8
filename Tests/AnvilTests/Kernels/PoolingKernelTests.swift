import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Max pooling's C kernel, every body the CPU runs (scalar, AVX2, AVX-512), against the naive
/// reference (the model-level pooling tests in ReferenceLayerTests cover the body the CPU
/// picks), and how each treats NaN.
@Suite("Max pooling kernel")
struct PoolingKernelTests {
    static func run(_ x: RefTensor, _ g: WindowGeometry, isa: InstructionSet) -> [Float] {
        var kernel = PoolingKernel(geometry: g, channels: x.c, mode: .max)
        kernel.instructionSet = isa
        return refRunKernel(kernel, input: x.floats, batch: x.n, inputShape: x.shape,
                            outputShape: Shape(height: g.outputHeight, width: g.outputWidth, channels: x.c))
    }

    @Test("Random windows, strides, pads, dilations and channel counts (1 … 150)", arguments: refInstructionSets)
    func matchesReference(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var random = RefRandom(seed: 515)
        var checked = 0
        while checked < 60 {
            let window = random.poolingWindow()
            let (x, kernel, stride, dilation, padding) = (window.x, window.kernel, window.stride, window.dilation, window.padding)
            guard let expected = Naive.maxPool(x, kernel: kernel, stride: stride, padding: padding, dilation: dilation),
                  let g = try? WindowGeometry(input: x.shape, kernel: kernel, stride: stride, dilation: dilation, padding: padding)
            else { continue }
            let actual = Self.run(x, g, isa: isa)
            #expect(actual == expected.floats, "\(isa) \(x) kernel \(kernel) stride \(stride) dilation \(dilation) \(padding)")
            checked += 1
        }
    }

    @Test("Every body skips NaN inputs: the max of a window's other cells, -infinity if none",
          arguments: refInstructionSets)
    func nanInputs(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        // 83 channels: full vectors of every width (64, 32, 16, 8) and a 3-channel tail.
        let c = 83
        var x = RefTensor(n: 1, h: 2, w: 2, c: c, floats: (0 ..< 4 * c).map { Float($0 % 7) })
        for channel in [0, 5, 40, 66, 81, 82] { x.v[channel] = .nan }                    // first cell NaN
        for channel in [5, 66, 82] { for cell in 1 ..< 4 { x.v[cell * c + channel] = .nan } } // all four
        let g = try WindowGeometry(input: x.shape, kernel: (2, 2), stride: (2, 2), dilation: (1, 1), padding: .valid)
        let actual = Self.run(x, g, isa: isa)
        for channel in 0 ..< c {
            let values = (0 ..< 4).map { Float(x.v[$0 * c + channel]) }.filter { !$0.isNaN }
            let expected = values.max() ?? -.infinity
            #expect(actual[channel].bitPattern == expected.bitPattern, "\(isa) channel \(channel)")
        }
        #expect(actual[5] == -.infinity && actual[66] == -.infinity && actual[82] == -.infinity)
    }
}
