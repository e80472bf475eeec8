/// A ``DeformableConvolution`` layer's kernel: im2col + GEMM as ``Im2colConvolutionKernel``
/// does it, but each column value is the bilinear sample at the kernel cell's grid position plus
/// the offset of its channel's offset group (zero outside the image, times the mask), computed
/// in double precision. Tiled over output pixels so the column buffer (the kernel's scratch)
/// stays bounded; the columns of a tile are filled over the worker pool, then one `Gemm` per
/// channel group adds the bias.
struct DeformableConvolutionKernel: Kernel {
    let geometry: WindowGeometry
    let inputChannels: Int
    let outputChannels: Int
    let groups: Int
    let offsetGroups: Int
    let hasMask: Bool
    /// `[out][kh][kw][in/groups]`: each output channel's row of the GEMM's B.
    let weights: [Float]
    /// One per output channel (zeros without a bias).
    let biases: [Float]

    var groupInputs: Int { inputChannels / groups }
    var groupOutputs: Int { outputChannels / groups }
    var cells: Int { geometry.kernelHeight * geometry.kernelWidth }
    /// The GEMM's K: weights per output channel, `[kh][kw][c]`.
    var depth: Int { cells * groupInputs }
    var pixels: Int { geometry.outputHeight * geometry.outputWidth }

    func tileRows(batch: Int) -> Int {
        min(saturatingProduct(batch, pixels), max(64, Im2colConvolutionKernel.tileBudget / max(depth, 1)))
    }

    func scratchCount(batch: Int) -> Int { tileRows(batch: batch) * depth }

    func run(_ io: KernelIO) {
        let rows = io.batch * pixels, tile = tileRows(batch: io.batch)
        weights.withUnsafeBufferPointer { w in
            biases.withUnsafeBufferPointer { b in
                var start = 0
                while start < rows {
                    let count = min(tile, rows - start)
                    for group in 0 ..< groups {
                        Compute.parallelFor(count, costPerItem: depth * 8,
                                            Columns(kernel: self, io: io, firstRow: start, group: group))
                        Gemm.multiply(rows: count, outputs: groupOutputs, depth: depth, a: io.scratch, lda: depth,
                                      b: w.baseAddress! + group * groupOutputs * depth, ldb: depth,
                                      c: io.output + start * outputChannels + group * groupOutputs, ldc: outputChannels,
                                      bias: b.baseAddress! + group * groupOutputs)
                    }
                    start += count
                }
            }
        }
    }

    /// Rows of a tile's column matrix, as a parallel job.
    struct Columns: ParallelJob {
        let kernel: DeformableConvolutionKernel
        let io: KernelIO
        let firstRow: Int
        let group: Int
        static var balancesParts: Bool { true }
        func run(_ range: Range<Int>) { kernel.columns(io, firstRow: firstRow, rows: range, group: group) }
    }

    /// Writes rows `firstRow + rows` (output pixels, item-major) of `group`'s column matrix into
    /// the scratch (row `r` at `scratch + (r - firstRow) * depth`, `[kh][kw][c]`).
    func columns(_ io: KernelIO, firstRow: Int, rows: Range<Int>, group: Int) {
        let g = geometry
        let perOffsetGroup = inputChannels / offsetGroups
        let imageSize = g.inputHeight * g.inputWidth * inputChannels
        let groupChannels = group * groupInputs ..< (group + 1) * groupInputs
        for row in rows {
            let pixel = firstRow + row
            let item = pixel / pixels, within = pixel % pixels
            let oy = within / g.outputWidth, ox = within % g.outputWidth
            let image = io.inputs[0] + item * imageSize
            let offsets = io.inputs[1] + pixel * offsetGroups * cells * 2
            let mask = hasMask ? io.inputs[2] + pixel * offsetGroups * cells : nil
            let column = io.scratch + (row - firstRow) * depth
            for offsetGroup in 0 ..< offsetGroups {
                // The channels of this convolution group that this offset group moves.
                let lower = max(groupChannels.lowerBound, offsetGroup * perOffsetGroup)
                let upper = min(groupChannels.upperBound, (offsetGroup + 1) * perOffsetGroup)
                guard lower < upper else { continue }
                let channels = lower ..< upper
                for ky in 0 ..< g.kernelHeight {
                    for kx in 0 ..< g.kernelWidth {
                        let cell = ky * g.kernelWidth + kx, slot = offsetGroup * cells + cell
                        let y = Double(oy * g.strideHeight - g.padTop + ky * g.dilationHeight) + Double(offsets[slot * 2])
                        let x = Double(ox * g.strideWidth - g.padLeft + kx * g.dilationWidth) + Double(offsets[slot * 2 + 1])
                        let scale = mask.map { Double($0[slot]) } ?? 1
                        sample(image, y: y, x: x, scale: scale, channels: channels,
                               into: column + cell * groupInputs + channels.lowerBound - groupChannels.lowerBound)
                    }
                }
            }
        }
    }

    /// Writes `scale` × the bilinear sample at (y, x) of `image`'s `channels` into `values`
    /// (from `channels.lowerBound` on); taps outside the image, and points that are not numbers, read 0.
    func sample(_ image: UnsafePointer<Float>, y: Double, x: Double, scale: Double, channels: Range<Int>,
                into values: UnsafeMutablePointer<Float>) {
        let g = geometry
        let first = channels.lowerBound
        for c in channels { values[c - first] = 0 }
        guard y > -1, y < Double(g.inputHeight), x > -1, x < Double(g.inputWidth) else { return }
        let y0 = Int(y.rounded(.down)), x0 = Int(x.rounded(.down))
        let ly = y - Double(y0), lx = x - Double(x0)
        // The four taps' weights (0 for a tap outside the image) and offsets, then one pass over the channels.
        var weights = SIMD4<Double>(repeating: 0), taps = SIMD4<Int>(repeating: 0)
        for dy in 0 ..< 2 where y0 + dy >= 0 && y0 + dy < g.inputHeight {
            for dx in 0 ..< 2 where x0 + dx >= 0 && x0 + dx < g.inputWidth {
                weights[dy * 2 + dx] = scale * (dy == 0 ? 1 - ly : ly) * (dx == 0 ? 1 - lx : lx)
                taps[dy * 2 + dx] = ((y0 + dy) * g.inputWidth + x0 + dx) * inputChannels
            }
        }
        for c in channels {
            let sum = weights[0] * Double(image[taps[0] + c]) + weights[1] * Double(image[taps[1] + c])
                + weights[2] * Double(image[taps[2] + c]) + weights[3] * Double(image[taps[3] + c])
            values[c - first] = Float(sum)
        }
    }
}
