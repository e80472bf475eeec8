/// Convolution as im2col + `cblas_sgemm`, tiled over output pixels so the im2col buffer stays
/// bounded; 1×1 stride-1 unpadded convolutions multiply the input directly. The bias and
/// activation are applied to each tile right after its GEMM, while it is in cache.
struct Im2colConvolutionKernel: Kernel {
    let geometry: WindowGeometry
    let inputChannels: Int
    let outputChannels: Int
    let groups: Int
    let weights: KernelWeights
    let activation: ActivationFunction

    /// Floats of im2col buffer per tile (8 MB): large enough for efficient GEMMs, small
    /// enough to stay in the last-level cache.
    static let tileBudget = 2 << 20

    var groupInputs: Int { inputChannels / groups }
    var groupOutputs: Int { outputChannels / groups }
    /// The GEMM's K: weights per output channel.
    var depth: Int { geometry.kernelHeight * geometry.kernelWidth * groupInputs }
    var pixels: Int { geometry.outputHeight * geometry.outputWidth }

    var isPointwise: Bool {
        let g = geometry
        return groups == 1 && g.kernelHeight == 1 && g.kernelWidth == 1 && g.strideHeight == 1 && g.strideWidth == 1
            && g.padTop == 0 && g.padLeft == 0 && g.padBottom == 0 && g.padRight == 0
    }

    func tileRows(batch: Int) -> Int {
        min(saturatingProduct(batch, pixels), max(64, Self.tileBudget / max(depth, 1)))
    }

    func scratchCount(batch: Int) -> Int {
        isPointwise ? 0 : tileRows(batch: batch) * depth
    }

    func run(_ io: KernelIO) {
        let rows = io.batch * pixels
        let input = io.inputs[0]
        if isPointwise {
            gemm(rows: rows, outputs: outputChannels, depth: inputChannels, a: input,
                 b: weights.weightPointer, c: io.output, group: 0)
            return
        }
        let tile = tileRows(batch: io.batch)
        var start = 0
        while start < rows {
            let count = min(tile, rows - start)
            for group in 0 ..< groups {
                Compute.parallelFor(count, costPerItem: depth,
                                    Im2col(kernel: self, input: input, scratch: io.scratch, firstRow: start, group: group))
                gemm(rows: count, outputs: groupOutputs, depth: depth, a: io.scratch,
                     b: weights.weightPointer + group * groupOutputs * depth,
                     c: io.output + start * outputChannels + group * groupOutputs, group: group)
            }
            start += count
        }
    }

    /// Copies `count` floats; short runs inline (a `memmove` call costs more than a few floats).
    @inline(__always)
    private func copy(_ source: UnsafePointer<Float>, to destination: UnsafeMutablePointer<Float>, count: Int) {
        if count <= 16 {
            for i in 0 ..< count { destination[i] = source[i] }
        } else {
            destination.update(from: source, count: count)
        }
    }

    /// `C[rows × outputs] (row stride outputChannels) = act(A[rows × depth] · B[outputs × depth]ᵀ + bias)`
    /// for one group's slice of output channels.
    private func gemm(rows: Int, outputs: Int, depth: Int, a: UnsafePointer<Float>,
                      b: UnsafePointer<Float>, c: UnsafeMutablePointer<Float>, group: Int) {
        Gemm.multiply(rows: rows, outputs: outputs, depth: depth, a: a, lda: depth, b: b, ldb: depth, c: c,
                      ldc: outputChannels, bias: weights.biasPointer.map { $0 + group * outputs }, activation: activation)
    }

    /// Rows of the im2col matrix, as a parallel job.
    struct Im2col: ParallelJob {
        let kernel: Im2colConvolutionKernel
        let input: UnsafePointer<Float>
        let scratch: UnsafeMutablePointer<Float>
        let firstRow: Int
        let group: Int
        func run(_ range: Range<Int>) { kernel.im2col(input: input, into: scratch, firstRow: firstRow, rows: range, group: group) }
    }

    /// Writes rows `firstRow + rows` of the im2col matrix for `group` into `scratch`
    /// (row `r` at `scratch + (r - firstRow) * depth`): each row is one output pixel's
    /// receptive field in `[kh][kw][c]` order, zeros where it falls in the padding.
    func im2col(input: UnsafePointer<Float>, into scratch: UnsafeMutablePointer<Float>,
                        firstRow: Int, rows: Range<Int>, group: Int) {
        let g = geometry
        let channels = groupInputs
        let channelOffset = group * channels
        let rowWidth = g.kernelWidth * channels
        // With one group and no horizontal dilation a window row is one contiguous run of
        // the input: copy it at once when it lies inside the image.
        let contiguousRows = groups == 1 && g.dilationWidth == 1
        for local in rows {
            let row = firstRow + local
            let image = row / pixels
            let pixel = row - image * pixels
            let oy = pixel / g.outputWidth
            let ox = pixel - oy * g.outputWidth
            var destination = scratch + local * depth
            let imageBase = input + image * g.inputHeight * g.inputWidth * inputChannels + channelOffset
            for ky in 0 ..< g.kernelHeight {
                let iy = oy * g.strideHeight - g.padTop + ky * g.dilationHeight
                if iy < 0 || iy >= g.inputHeight {
                    destination.update(repeating: 0, count: rowWidth)
                    destination += rowWidth
                    continue
                }
                let lineBase = imageBase + iy * g.inputWidth * inputChannels
                let ix0 = ox * g.strideWidth - g.padLeft
                if contiguousRows && ix0 >= 0 && ix0 + g.kernelWidth <= g.inputWidth {
                    copy(lineBase + ix0 * inputChannels, to: destination, count: rowWidth)
                    destination += rowWidth
                    continue
                }
                for kx in 0 ..< g.kernelWidth {
                    let ix = ox * g.strideWidth - g.padLeft + kx * g.dilationWidth
                    if ix < 0 || ix >= g.inputWidth {
                        for c in 0 ..< channels { destination[c] = 0 }
                    } else {
                        copy(lineBase + ix * inputChannels, to: destination, count: channels)
                    }
                    destination += channels
                }
            }
        }
    }
}
