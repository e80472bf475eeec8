/// Precomputed weights for resampling one axis from `inputSize` to `outputSize` samples; the
/// building block of ``Image/resized(width:height:filter:)``. This is Pillow's
/// `precompute_coeffs` (`libImaging/Resample.c`), so results match `Image.resize` on float images.
///
/// Pixel `i` covers `[i, i + 1)`, so its centre is `i + 0.5` (half-pixel centres). Output
/// sample `o` sits at source position `centre = (o + 0.5) × scale`, `scale = inputSize / outputSize`.
/// With `stretch = max(scale, 1)` and `support = filter.support × stretch`, it reads source
/// pixels `xmin ..< xmax` where `xmin = max(trunc(centre − support + 0.5), 0)` and
/// `xmax = min(trunc(centre + support + 0.5), inputSize)`, with weights
/// `filter((i + 0.5 − centre) / stretch)` normalised to sum to 1:
///
/// - enlarging (`scale ≤ 1`): the plain filter; for the bilinear tent, interpolation between
///   the two nearest centres, and the edge pixel outside the outermost centres;
/// - shrinking (`scale > 1`): the filter widened by the shrink factor, an antialiasing
///   prefilter: bilinear 300 → 20 averages over ±15 source pixels.
///
/// Only the outputs in `window` are computed (all by default): resizing and then cropping is
/// the same as resizing with a window, without computing the pixels the crop throws away.
struct ResamplingKernel {
    /// For each output sample in the window, the first source index it reads.
    let starts: [Int]
    /// For each output sample in the window, how many consecutive source samples it reads.
    let counts: [Int]
    /// The weights, `maxTaps` per output sample (unused slots are 0).
    let weights: [Float]
    /// The stride between the weight rows of consecutive output samples.
    let maxTaps: Int

    /// The source samples the window reads: `starts.min() ..< (starts + counts).max()`.
    var sourceRange: Range<Int> {
        guard let first = starts.min() else { return 0 ..< 0 }
        let end = zip(starts, counts).map { $0 + $1 }.max()!
        return first ..< end
    }

    init(inputSize: Int, outputSize: Int, filter: ResamplingFilter = .bilinear, window: Range<Int>? = nil) {
        let window = window ?? 0 ..< outputSize
        let scale = Double(inputSize) / Double(outputSize)
        let stretch = max(scale, 1)
        let support = filter.support * stretch
        let maxTaps = Int(support.rounded(.up)) * 2 + 1
        var starts = [Int](repeating: 0, count: window.count)
        var counts = [Int](repeating: 0, count: window.count)
        var weights = [Float](repeating: 0, count: window.count * maxTaps)
        var row = [Double](repeating: 0, count: maxTaps)
        for (slot, o) in window.enumerated() {
            let centre = (Double(o) + 0.5) * scale
            // C's (int) cast truncates toward zero, as Pillow's does.
            let xmin = max(Int(centre - support + 0.5), 0)
            let xmax = min(Int(centre + support + 0.5), inputSize)
            var total = 0.0
            let taken = max(0, min(xmax - xmin, maxTaps))
            for t in 0 ..< taken {
                let w = filter.weight((Double(t + xmin) - centre + 0.5) / stretch)
                row[t] = w
                total += w
            }
            if taken == 0 || total == 0 {
                // Cannot happen for positive sizes, but never divide by zero: nearest pixel.
                starts[slot] = min(max(Int(centre), 0), inputSize - 1)
                counts[slot] = 1
                weights[slot * maxTaps] = 1
                continue
            }
            starts[slot] = xmin
            counts[slot] = taken
            for t in 0 ..< taken { weights[slot * maxTaps + t] = Float(row[t] / total) }
        }
        self.starts = starts
        self.counts = counts
        self.weights = weights
        self.maxTaps = maxTaps
    }
}
