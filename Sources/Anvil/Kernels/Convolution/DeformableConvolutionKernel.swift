/// A ``DeformableConvolution`` layer's kernel: for each output pixel, every kernel cell's
/// sample of every input channel (bilinear at the grid position plus the offset of the
/// channel's offset group, zero outside the image, times the mask), then each output channel's
/// dot product with its group's weights, in double precision; split over the worker pool by
/// output rows.
struct DeformableConvolutionKernel: RangeKernel {
    let geometry: WindowGeometry
    let inputChannels: Int
    let outputChannels: Int
    let groups: Int
    let offsetGroups: Int
    let hasMask: Bool
    /// `[out][kh][kw][in/groups]`.
    let weights: [Float]
    let biases: [Float]

    func run(_ io: KernelIO) {
        let g = geometry, cells = g.kernelHeight * g.kernelWidth
        Compute.parallelFor(io.batch * g.outputHeight,
                            costPerItem: g.outputWidth * cells * (inputChannels * 4 + outputChannels * inputChannels / groups),
                            KernelRange(kernel: self, io: io))
    }

    /// Computes the output rows in `range` (item-major).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let g = geometry, cells = g.kernelHeight * g.kernelWidth
        let perGroup = inputChannels / groups, outputsPerGroup = outputChannels / groups
        let perOffsetGroup = inputChannels / offsetGroups
        let imageSize = g.inputHeight * g.inputWidth * inputChannels
        // One pixel's samples, [cell][channel], on the stack: nothing is allocated at predict.
        withUnsafeTemporaryAllocation(of: Double.self, capacity: cells * inputChannels) { samples in
            weights.withUnsafeBufferPointer { w in
                for row in range {
                    let item = row / g.outputHeight, oy = row % g.outputHeight
                    let image = io.inputs[0] + item * imageSize
                    for ox in 0 ..< g.outputWidth {
                        let pixel = row * g.outputWidth + ox
                        let offsets = io.inputs[1] + pixel * offsetGroups * cells * 2
                        let mask = hasMask ? io.inputs[2] + pixel * offsetGroups * cells : nil
                        for group in 0 ..< offsetGroups {
                            for ky in 0 ..< g.kernelHeight {
                                for kx in 0 ..< g.kernelWidth {
                                    let cell = ky * g.kernelWidth + kx, slot = group * cells + cell
                                    let y = Double(oy * g.strideHeight - g.padTop + ky * g.dilationHeight) + Double(offsets[slot * 2])
                                    let x = Double(ox * g.strideWidth - g.padLeft + kx * g.dilationWidth) + Double(offsets[slot * 2 + 1])
                                    let scale = mask.map { Double($0[slot]) } ?? 1
                                    sample(image, y: y, x: x, scale: scale, channels: group * perOffsetGroup ..< (group + 1) * perOffsetGroup,
                                           into: samples.baseAddress! + cell * inputChannels)
                                }
                            }
                        }
                        let output = io.output + pixel * outputChannels
                        for o in 0 ..< outputChannels {
                            let first = (o / outputsPerGroup) * perGroup
                            var sum = Double(biases[o])
                            for cell in 0 ..< cells {
                                let weight = w.baseAddress! + (o * cells + cell) * perGroup
                                let values = samples.baseAddress! + cell * inputChannels + first
                                for i in 0 ..< perGroup { sum += Double(weight[i]) * values[i] }
                            }
                            output[o] = Float(sum)
                        }
                    }
                }
            }
        }
    }

    /// Writes `scale` × the bilinear sample at (y, x) of `image`'s `channels` into `values`
    /// (indexed by channel); taps outside the image, and points that are not numbers, read 0.
    func sample(_ image: UnsafePointer<Float>, y: Double, x: Double, scale: Double, channels: Range<Int>,
                into values: UnsafeMutablePointer<Double>) {
        let g = geometry
        for c in channels { values[c] = 0 }
        guard y > -1, y < Double(g.inputHeight), x > -1, x < Double(g.inputWidth) else { return }
        let y0 = Int(y.rounded(.down)), x0 = Int(x.rounded(.down))
        let ly = y - Double(y0), lx = x - Double(x0)
        for dy in 0 ..< 2 where y0 + dy >= 0 && y0 + dy < g.inputHeight {
            for dx in 0 ..< 2 where x0 + dx >= 0 && x0 + dx < g.inputWidth {
                let weight = scale * (dy == 0 ? 1 - ly : ly) * (dx == 0 ? 1 - lx : lx)
                let tap = image + ((y0 + dy) * g.inputWidth + x0 + dx) * inputChannels
                for c in channels { values[c] += weight * Double(tap[c]) }
            }
        }
    }
}
