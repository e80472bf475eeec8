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
        let input = io.inputs[0]
        for item in 0 ..< range.count * strips {
            let image = range.lowerBound + item / strips
            let first = item % strips * Self.channelStrip, count = min(Self.channelStrip, channels - first)
            let out = io.output + image * channels + first
            let base = input + image * pixels * channels + first
            if count == Self.channelStrip {
                strip(UnsafeRawPointer(base), into: UnsafeMutableRawPointer(out))
                continue
            }
            out.update(from: base, count: count)
            for p in 1 ..< max(pixels, 1) {
                let source = base + p * channels
                if average {
                    for c in 0 ..< count { out[c] += source[c] }
                } else {
                    for c in 0 ..< count { out[c] = max(out[c], source[c]) }
                }
            }
            if average {
                let scale = 1 / Float(pixels)
                for c in 0 ..< count { out[c] *= scale }
            }
        }
    }

    /// Strips of ``channelStrip`` channels per image.
    var strips: Int { (channels + Self.channelStrip - 1) / Self.channelStrip }

    /// One whole strip in a vector register, each lane as the scalar loop does it: the sum in
    /// pixel order, or the maximum keeping the running value unless a pixel's is greater or
    /// equal (so a NaN pixel is skipped, as `max(out, source)` did).
    @inline(__always)
    private func strip(_ base: UnsafeRawPointer, into out: UnsafeMutableRawPointer) {
        let stride = channels * MemoryLayout<Float>.stride
        var value = base.loadUnaligned(as: SIMD16<Float>.self)
        for p in 1 ..< max(pixels, 1) {
            let source = base.loadUnaligned(fromByteOffset: p * stride, as: SIMD16<Float>.self)
            if average {
                value += source
            } else {
                value.replace(with: source, where: source .>= value)
            }
        }
        if average { value *= 1 / Float(pixels) }
        out.storeBytes(of: value, as: SIMD16<Float>.self)
    }
}
