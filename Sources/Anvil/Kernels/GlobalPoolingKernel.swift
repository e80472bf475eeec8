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
        for image in range {
            let base = io.inputs[0] + image * pixels * channels, out = io.output + image * channels
            for first in stride(from: 0, to: channels, by: Self.channelStrip) {
                // A partial last strip of a row of 16 or more channels is the whole strip that
                // ends with the row: its first lanes redo channels of the strip before, with the
                // same operations in the same order, so they write the same values.
                if channels - first < Self.channelStrip, channels >= Self.channelStrip {
                    let last = channels - Self.channelStrip
                    strip(base + last, count: Self.channelStrip, into: out + last)
                } else {
                    strip(base + first, count: min(Self.channelStrip, channels - first), into: out + first)
                }
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

    /// `count` floats at `values` in the first lanes of a vector (zero in the others: a last,
    /// partial strip must not read past its row).
    @inline(__always)
    private func load(_ values: UnsafePointer<Float>, count: Int) -> SIMD16<Float> {
        if count == Self.channelStrip { return UnsafeRawPointer(values).loadUnaligned(as: SIMD16<Float>.self) }
        var vector = SIMD16<Float>()
        for c in 0 ..< count { vector[c] = values[c] }
        return vector
    }
}
