/// Global average or max pooling: one value per channel per image.
///
/// Each image's channels go 16 at a time, a strip's running values in a vector register over
/// all the pixels (a loop over all channels per pixel would read and write them in memory at
/// each pixel). Images are the work items. With fewer images than threads, an average's pixels
/// are split instead: each thread sums a band of rows — the band the layer before it wrote on
/// the same core, as row-split kernels split — into scratch, and the bands' sums are added in
/// order (``Bands``). Splitting an image's channels instead would have each thread read half
/// its input from the other core's cache, and so would one thread alone. A maximum keeps one
/// thread per image: a band starting on a NaN would not skip it as the whole loop does.
struct GlobalPoolingKernel: RangeKernel {
    let pixels: Int
    let channels: Int
    let average: Bool

    /// Channels per strip: one 16-float vector.
    static let channelStrip = 16

    /// The fewest input floats per image for which an average is split into bands: below it the
    /// hand-off to another thread costs more than half the pooling.
    static let bandMinimum = 32_768

    /// Bands per image: one per thread (a band at least a pixel), when an average of fewer
    /// images than threads is large enough to split.
    func bands(batch: Int, threads: Int) -> Int {
        average && batch < threads && pixels * channels >= Self.bandMinimum ? min(threads, pixels) : 1
    }

    /// Room for the bands' sums at any thread count: no thread count gives more bands than the most.
    func scratchCount(batch: Int) -> Int {
        let bands = bands(batch: batch, threads: Compute.maximumThreadCount)
        return bands > 1 ? saturatingProduct(batch * bands, channels) : 0
    }

    func run(_ io: KernelIO) {
        run(io, bands: bands(batch: io.batch, threads: Compute.threadCount))
    }

    /// The pooling with each image's pixels summed in `bands` bands (an average; `io.scratch`
    /// holds `batch × bands × channels` floats), or with images as the work items when `bands` is 1.
    func run(_ io: KernelIO, bands: Int) {
        guard bands > 1 else {
            Compute.parallelFor(io.batch, costPerItem: pixels * channels, KernelRange(kernel: self, io: io))
            return
        }
        Compute.parallelFor(io.batch * bands, costPerItem: pixels * channels / bands, Bands(kernel: self, io: io, bands: bands))
        // The bands' sums in order, then the scale, as `strip` scales a whole image's sum.
        let scale = 1 / Float(pixels)
        for image in 0 ..< io.batch {
            let sums = io.scratch + image * bands * channels, out = io.output + image * channels
            for c in 0 ..< channels {
                var total = sums[c]
                for band in 1 ..< bands { total += sums[band * channels + c] }
                out[c] = total * scale
            }
        }
    }

    /// Work items `image * bands + band`: the sums over band `band` of image `image`'s pixels
    /// (pixels `pixels · band / bands ..< pixels · (band + 1) / bands`), unscaled, into scratch.
    struct Bands: ParallelJob {
        let kernel: GlobalPoolingKernel
        let io: KernelIO
        let bands: Int

        func run(_ range: Range<Int>) {
            let pixels = kernel.pixels, channels = kernel.channels
            let width = min(GlobalPoolingKernel.channelStrip, channels)
            for item in range {
                let image = item / bands, band = item % bands
                let first = pixels * band / bands, last = pixels * (band + 1) / bands
                let base = io.inputs[0] + (image * pixels + first) * channels
                let out = io.scratch + item * channels
                for start in stride(from: 0, to: channels, by: width) {
                    let offset = min(start, channels - width)
                    kernel.strip(base + offset, pixels: last - first, count: width, scale: false, into: out + offset)
                }
            }
        }
    }

    /// Images `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        // Rows of 16 or more channels go in whole strips, the last one ending with the row: its
        // first lanes redo channels of the strip before with the same operations in the same
        // order, so they write the same values (filling a partial vector lane by lane at every
        // pixel costs far more).
        let width = min(Self.channelStrip, channels)
        for image in range {
            let base = io.inputs[0] + image * pixels * channels, out = io.output + image * channels
            for start in stride(from: 0, to: channels, by: width) {
                let first = min(start, channels - width)
                strip(base + first, pixels: pixels, count: width, scale: average, into: out + first)
            }
        }
    }

    /// One strip of `count` (1–16) channels over `pixels` pixels from `base`, in a vector
    /// register, each lane as a scalar loop would make it: the sum in pixel order (times
    /// 1 / ``pixels`` when `scale`), or the maximum keeping the running value unless a pixel's is
    /// greater or equal (so a NaN pixel is skipped, as `max(out, source)` does).
    @inline(__always)
    private func strip(_ base: UnsafePointer<Float>, pixels: Int, count: Int, scale: Bool, into out: UnsafeMutablePointer<Float>) {
        var value = load(base, count: count)
        for p in 1 ..< max(pixels, 1) {
            let source = load(base + p * channels, count: count)
            if average {
                value += source
            } else {
                value.replace(with: source, where: source .>= value)
            }
        }
        if scale { value *= 1 / Float(self.pixels) }
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
