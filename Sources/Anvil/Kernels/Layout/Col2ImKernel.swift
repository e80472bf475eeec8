/// A ``Col2Im`` layer's kernel: each output pixel gathers, for every block cell that lands on it
/// (those whose position minus the cell's offset is a whole number of strides inside the block
/// grid), that cell's values of its block, summed in double precision; split over the worker
/// pool by output rows. Gathering (not scattering) keeps rows independent and sums in one order.
struct Col2ImKernel: RangeKernel {
    let geometry: WindowGeometry
    let channels: Int

    func run(_ io: KernelIO) {
        let g = geometry
        Compute.parallelFor(io.batch * g.inputHeight, costPerItem: g.inputWidth * channels * g.kernelHeight * g.kernelWidth,
                            KernelRange(kernel: self, io: io))
    }

    /// Writes the output rows in `range` (item-major).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let g = geometry, cells = g.kernelHeight * g.kernelWidth, blockLength = channels * cells
        let blocks = g.outputHeight * g.outputWidth
        withUnsafeTemporaryAllocation(of: Double.self, capacity: channels) { sums in
            for row in range {
                let item = row / g.inputHeight, y = row % g.inputHeight
                let columns = io.inputs[0] + item * blocks * blockLength
                for x in 0 ..< g.inputWidth {
                    sums.update(repeating: 0)
                    for ky in 0 ..< g.kernelHeight {
                        guard let by = Self.block(y + g.padTop - ky * g.dilationHeight, stride: g.strideHeight, count: g.outputHeight) else { continue }
                        for kx in 0 ..< g.kernelWidth {
                            guard let bx = Self.block(x + g.padLeft - kx * g.dilationWidth, stride: g.strideWidth, count: g.outputWidth) else { continue }
                            let values = columns + (by * g.outputWidth + bx) * blockLength + ky * g.kernelWidth + kx
                            for c in 0 ..< channels { sums[c] += Double(values[c * cells]) }
                        }
                    }
                    let pixel = io.output + (row * g.inputWidth + x) * channels
                    for c in 0 ..< channels { pixel[c] = Float(sums[c]) }
                }
            }
        }
    }

    /// The block whose window starts at padded position `start` along an axis, or nil when no
    /// block does (not a multiple of the stride, or outside the grid of `count`).
    static func block(_ start: Int, stride: Int, count: Int) -> Int? {
        guard start >= 0, start % stride == 0, start / stride < count else { return nil }
        return start / stride
    }
}
