/// Copies the input (optionally reordering `H, W, C` to `C, H, W`), then applies an activation.
struct CopyKernel: Kernel {
    let shape: Shape
    let channelsFirst: Bool
    let activation: ActivationFunction

    func run(_ io: KernelIO) {
        let count = shape.count
        let input = io.inputs[0]
        Compute.parallelFor(io.batch, costPerItem: count) { range in
            for image in range {
                let source = input + image * count
                let out = io.output + image * count
                if channelsFirst {
                    let pixels = shape.height * shape.width
                    for p in 0 ..< pixels { for c in 0 ..< shape.channels { out[c * pixels + p] = source[p * shape.channels + c] } }
                } else {
                    out.update(from: source, count: count)
                }
                activation.apply(out, count: count)
            }
        }
    }
}
