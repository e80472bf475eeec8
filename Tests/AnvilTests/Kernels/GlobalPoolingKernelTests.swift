import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Global average and max pooling, each image's channels in 16-channel strips (the last one
/// partial or not): against a float64 reference, and split by images as threads split them, bit
/// for bit the same as in one piece; an average's pixels summed in bands (as few images on
/// several threads are) against the same reference.
@Suite("Global pooling kernel")
struct GlobalPoolingKernelTests {
    static let cases: [(batch: Int, height: Int, width: Int, channels: Int)] = [
        (1, 7, 7, 70), (3, 3, 4, 33), (1, 1, 1, 16), (2, 2, 3, 1), (1, 14, 14, 48), (3, 5, 5, 32), (2, 3, 3, 9),
        (1, 28, 28, 72),
    ]

    /// `kernel` over `input` with its images cut at `cuts` (each piece run alone).
    func run(_ kernel: GlobalPoolingKernel, _ input: [Float], batch: Int, cuts: [Int]) -> [Float] {
        var output = [Float](repeating: .nan, count: batch * kernel.channels)
        input.withUnsafeBufferPointer { x in
            output.withUnsafeMutableBufferPointer { y in
                let io = KernelIO(inputs: [x.baseAddress!], output: y.baseAddress!, scratch: y.baseAddress!, batch: batch,
                                  inputShapes: [Shape(height: kernel.pixels, width: 1, channels: kernel.channels)],
                                  outputShape: Shape(height: 1, width: 1, channels: kernel.channels))
                let bounds = [0] + cuts + [batch]
                for i in 0 ..< bounds.count - 1 { kernel.run(bounds[i] ..< bounds[i + 1], io) }
            }
        }
        return output
    }

    @Test("Average and max match the float64 reference, and every split of the images gives the same bits")
    func matchesReferenceAndSplits() {
        var random = RefRandom(seed: 4_242)
        for c in Self.cases {
            let x = random.tensor(n: c.batch, h: c.height, w: c.width, c: c.channels, -4, 4)
            let input = x.v.map(Float.init)
            for average in [true, false] {
                let kernel = GlobalPoolingKernel(pixels: c.height * c.width, channels: c.channels, average: average)
                let whole = refRunKernel(kernel, input: input, batch: c.batch,
                                         inputShape: Shape(height: c.height, width: c.width, channels: c.channels),
                                         outputShape: Shape(height: 1, width: 1, channels: c.channels))
                let expected = average ? Naive.globalAveragePool(x) : Naive.globalMaxPool(x)
                // An average's float sum of p values is within (p − 1)·2⁻²⁴·Σ|x| of the exact one;
                // the scale and the quotient round once more each. A maximum is exact.
                var worst = 0.0
                for b in 0 ..< c.batch {
                    for ch in 0 ..< c.channels {
                        var magnitude = 0.0
                        for y in 0 ..< c.height { for w in 0 ..< c.width { magnitude += abs(x[b, y, w, ch]) } }
                        let pixels = Double(c.height * c.width)
                        let bound = average ? (pixels + 2) * 0x1p-24 * magnitude / pixels : 0
                        let error = abs(Double(whole[b * c.channels + ch]) - expected[b, 0, 0, ch])
                        worst = refWorst(worst, bound > 0 ? error / bound : (error == 0 ? 0 : .infinity))
                    }
                }
                #expect(worst <= 1, "\(c) average \(average): worst error \(worst) of its bound")
                for cuts in [[1], [1, 2]] where cuts.allSatisfy({ $0 < c.batch }) {
                    #expect(refBitDifferences(run(kernel, input, batch: c.batch, cuts: cuts), whole) == 0,
                            "\(c) average \(average): split at \(cuts)")
                }
            }
        }
    }

    @Test("An average summed in bands of pixels matches the float64 reference for every band count")
    func bandsMatchReference() {
        var random = RefRandom(seed: 4_343)
        for c in Self.cases {
            let pixels = c.height * c.width
            let x = random.tensor(n: c.batch, h: c.height, w: c.width, c: c.channels, -4, 4)
            let input = x.v.map(Float.init)
            let kernel = GlobalPoolingKernel(pixels: pixels, channels: c.channels, average: true)
            let expected = Naive.globalAveragePool(x)
            for bands in [2, 3, 5] where bands <= pixels {
                var output = [Float](repeating: .nan, count: c.batch * c.channels)
                var scratch = [Float](repeating: .nan, count: c.batch * bands * c.channels)
                input.withUnsafeBufferPointer { x in
                    output.withUnsafeMutableBufferPointer { y in
                        scratch.withUnsafeMutableBufferPointer { s in
                            let io = KernelIO(inputs: [x.baseAddress!], output: y.baseAddress!, scratch: s.baseAddress!,
                                              batch: c.batch, inputShapes: [Shape(height: pixels, width: 1, channels: c.channels)],
                                              outputShape: Shape(height: 1, width: 1, channels: c.channels))
                            kernel.run(io, bands: bands)
                        }
                    }
                }
                // Any order of adding p values has the sequential sum's bound, (p − 1)·2⁻²⁴·Σ|x|.
                var worst = 0.0
                for b in 0 ..< c.batch {
                    for ch in 0 ..< c.channels {
                        var magnitude = 0.0
                        for y in 0 ..< c.height { for w in 0 ..< c.width { magnitude += abs(x[b, y, w, ch]) } }
                        let bound = (Double(pixels) + 2) * 0x1p-24 * magnitude / Double(pixels)
                        worst = refWorst(worst, abs(Double(output[b * c.channels + ch]) - expected[b, 0, 0, ch]) / bound)
                    }
                }
                #expect(worst <= 1, "\(c) in \(bands) bands: worst error \(worst) of its bound")
            }
        }
    }

    @Test("Bands only for an average of fewer images than threads, large enough to split; scratch for any thread count")
    func bandRule() {
        let large = GlobalPoolingKernel(pixels: 56 * 56, channels: 144, average: true)
        #expect(large.bands(batch: 1, threads: 2) == 2)
        #expect(large.bands(batch: 1, threads: 1) == 1)
        #expect(large.bands(batch: 2, threads: 2) == 1)
        #expect(GlobalPoolingKernel(pixels: 56 * 56, channels: 144, average: false).bands(batch: 1, threads: 2) == 1)
        #expect(GlobalPoolingKernel(pixels: 7 * 7, channels: 16, average: true).bands(batch: 1, threads: 2) == 1)
        for threads in 2 ... max(2, Compute.maximumThreadCount) where threads <= Compute.maximumThreadCount {
            let bands = large.bands(batch: 1, threads: threads)
            #expect(large.scratchCount(batch: 1) >= bands * large.channels)
        }
    }
}
