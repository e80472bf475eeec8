/// A ``MaxPoolingIndices`` layer's kernel: for each output pixel and channel, the window's
/// cells inside the image scanned row by row, the first largest kept, its position written in
/// ONNX's NCHW numbering of the whole batch; split over the worker pool by output rows.
struct MaxPoolingIndicesKernel: RangeKernel {
    let geometry: WindowGeometry
    let channels: Int
    let columnMajor: Bool

    func run(_ io: KernelIO) {
        let g = geometry
        Compute.parallelFor(io.batch * g.outputHeight, costPerItem: g.outputWidth * channels * g.kernelHeight * g.kernelWidth,
                            KernelRange(kernel: self, io: io))
    }

    /// Writes the output rows in `range` (item-major).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let g = geometry, plane = g.inputHeight * g.inputWidth
        for row in range {
            let item = row / g.outputHeight, oy = row % g.outputHeight
            let image = io.inputs[0] + item * plane * channels
            for ox in 0 ..< g.outputWidth {
                let output = io.output + (row * g.outputWidth + ox) * channels
                for c in 0 ..< channels {
                    var best = -Float.infinity, at = (-1, -1)
                    for ky in 0 ..< g.kernelHeight {
                        let y = oy * g.strideHeight - g.padTop + ky * g.dilationHeight
                        guard y >= 0, y < g.inputHeight else { continue }
                        for kx in 0 ..< g.kernelWidth {
                            let x = ox * g.strideWidth - g.padLeft + kx * g.dilationWidth
                            guard x >= 0, x < g.inputWidth else { continue }
                            let value = image[(y * g.inputWidth + x) * channels + c]
                            // (A window of NaNs and −∞ still points at its first cell.)
                            if value > best || at.0 < 0 { best = value; at = (y, x) }
                        }
                    }
                    let within = columnMajor ? at.1 * g.inputHeight + at.0 : at.0 * g.inputWidth + at.1
                    output[c] = Float((item * channels + c) * plane + within)
                }
            }
        }
    }
}
