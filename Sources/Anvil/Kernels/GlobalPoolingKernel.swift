/// Global average or max pooling: one value per channel per image.
///
/// Each image's channels go 16 at a time, a strip's running values in a vector register over
/// all the pixels (a loop over all channels per pixel read and wrote them in memory at each
/// pixel: EfficientNet-B0's poolings 0.20 → 0.15 ms per prediction). Images are the work items:
/// splitting one image's strips between two threads cost more than it saved (0.23 → 0.26 ms;
/// these poolings take 5–45 µs each).
struct GlobalPoolingKernel: RangeKernel {
    let pixels: Int
    let channels: Int
    let average: Bool

    /// Channels per strip: one 16-float vector.
    static let channelStrip = 16

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch, costPerItem: pixels * channels, KernelRange(kernel: self, io: io))
    }

    /// Images `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        // Rows of 16 or more channels go in whole strips, the last one ending with the row: its
        // first lanes redo channels of the strip before with the same operations in the same
        // order, so they write the same values (filling a partial vector lane by lane at every
        // pixel cost MobileNet v3 large's 28 × 28 × 72 poolings 0.029 ms against 0.004).
        let width = min(Self.channelStrip, channels)
        for image in range {
            let base = io.inputs[0] + image * pixels * channels, out = io.output + image * channels
            for start in stride(from: 0, to: channels, by: width) {
                let first = min(start, channels - width)
                strip(base + first, count: width, into: out + first)
            }
        }
    }

    /// One strip of `count` (1–16) channels in a vector register, each lane as a scalar loop
    /// would make it: the sum in pixel order, or the maximum keeping the running value unless a
    /// pixel's is greater or equal (so a NaN pixel is skipped, as `max(out, source)` does).
    @inline(__always)
    private func strip(_ base: UnsafePointer<Float>, count: Int, into out: UnsafeMutablePointer<Float>) {
        var value = load(base, count: count)
        for p in 1 ..< max(pixels, 1) {
            let source = load(base + p * channels, count: count)
            if average {
                value += source
            } else {
                value.replace(with: source, where: source .>= value)
            }
        }
        if average { value *= 1 / Float(pixels) }
        if count == Self.channelStrip {
            UnsafeMutableRawPointer(out).storeBytes(of: value, as: SIMD16<Float>.self)
        } else {
            for c in 0 ..< count { out[c] = value[c] }
        }
    }

    /// `count` floats at `values` in the first lanes of a vector (zero in the others: a row of
    /// fewer than 16 channels must not be read past its end).
    @inline(__always)
    private func load(_ values: UnsafePointer<Float>, count: Int) -> SIMD16<Float> {
        if count == Self.channelStrip { return UnsafeRawPointer(values).loadUnaligned(as: SIMD16<Float>.self) }
        var vector = SIMD16<Float>()
        for c in 0 ..< count { vector[c] = values[c] }
        return vector
    }
}
