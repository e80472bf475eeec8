/// Precomputed weights for resampling one axis from `inputSize` to `outputSize` samples
/// with a triangle (tent) filter; the building block of ``Image/resized(width:height:)``.
///
/// Pixel `i` covers `[i, i + 1)`, so its centre is `i + 0.5` (half-pixel centres). Output
/// sample `o` sits at source position `(o + 0.5) × scale` with `scale = inputSize / outputSize`.
/// Its weights are `max(0, 1 − |i + 0.5 − centre| / support)` with `support = max(scale, 1)`,
/// normalised to sum to 1 over the source pixels that exist:
///
/// - enlarging (`scale ≤ 1`): support 1, which is plain bilinear interpolation between the two
///   nearest centres, clamped to the edge pixel outside the outermost centres;
/// - shrinking (`scale > 1`): the tent is widened by the shrink factor, so every source pixel
///   contributes (an antialiasing prefilter): 300 → 20 averages over ±15 source pixels.
///
/// This is the filter of Pillow's `Image.resize(..., BILINEAR)`.
struct ResamplingKernel {
    /// For each output sample, the first source index it reads.
    let starts: [Int]
    /// For each output sample, how many consecutive source samples it reads.
    let counts: [Int]
    /// The weights, `maxTaps` per output sample (unused slots are 0).
    let weights: [Float]
    /// The stride between the weight rows of consecutive output samples.
    let maxTaps: Int

    init(inputSize: Int, outputSize: Int) {
        let scale = Double(inputSize) / Double(outputSize)
        let support = max(scale, 1)
        let maxTaps = Int((support * 2).rounded(.up)) + 2
        var starts = [Int](repeating: 0, count: outputSize)
        var counts = [Int](repeating: 0, count: outputSize)
        var weights = [Float](repeating: 0, count: outputSize * maxTaps)
        var row = [Double](repeating: 0, count: maxTaps)
        for o in 0..<outputSize {
            let centre = (Double(o) + 0.5) * scale
            // Source pixels whose centre lies strictly within `support` of `centre`.
            let first = max(Int((centre - support - 0.5).rounded(.down)), 0)
            let last = min(Int((centre + support - 0.5).rounded(.up)), inputSize - 1)
            var total = 0.0
            var taken = 0
            var start = -1
            if first <= last {
                for i in first...last {
                    let w = 1 - abs(Double(i) + 0.5 - centre) / support
                    guard w > 0 else { continue }
                    if start < 0 { start = i }
                    // Zero-weight pixels inside the run keep the run contiguous.
                    while start + taken < i { row[taken] = 0; taken += 1 }
                    row[taken] = w
                    taken += 1
                    total += w
                }
            }
            if taken == 0 {
                // Cannot happen for positive sizes, but never divide by zero: nearest pixel.
                start = min(max(Int(centre), 0), inputSize - 1)
                row[0] = 1
                taken = 1
                total = 1
            }
            starts[o] = start
            counts[o] = taken
            for t in 0..<taken { weights[o * maxTaps + t] = Float(row[t] / total) }
        }
        self.starts = starts
        self.counts = counts
        self.weights = weights
        self.maxTaps = maxTaps
    }
}
