/// `y = scale[c] * x + shift[c]` per channel (a BatchNormalization that could not be folded),
/// or PReLU `y = x > 0 ? x : slope[c] * x` when `prelu` is set.
struct ChannelAffineKernel: Kernel {
    let channels: Int
    let pixelsPerImage: Int
    let scale: [Float]
    let shift: [Float]
    let prelu: Bool

    func run(_ io: KernelIO) {
        let rows = io.batch * pixelsPerImage
        let input = io.inputs[0]
        scale.withUnsafeBufferPointer { scale in
            shift.withUnsafeBufferPointer { shift in
                Compute.parallelFor(rows, costPerItem: channels) { range in
                    for row in range {
                        let source = input + row * channels
                        let out = io.output + row * channels
                        if prelu {
                            for c in 0 ..< channels { let x = source[c]; out[c] = x > 0 ? x : scale[c] * x }
                        } else {
                            for c in 0 ..< channels { out[c] = scale[c] * source[c] + shift[c] }
                        }
                    }
                }
            }
        }
    }
}
