import Foundation

/// A ``GridSample`` layer's kernel: for each output pixel, its grid point mapped to image
/// coordinates, bounded by the padding mode, and the image read there (1, 2 × 2 or 4 × 4 taps,
/// each tap's row and column bounded alike), computed in double precision; split over the
/// worker pool by output rows.
struct GridSampleKernel: RangeKernel {
    let mode: GridSampleMode
    let padding: GridSamplePadding
    let alignCorners: Bool
    let height: Int
    let width: Int
    let channels: Int
    let outputHeight: Int
    let outputWidth: Int

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch * outputHeight, costPerItem: outputWidth * channels * 16, KernelRange(kernel: self, io: io))
    }

    /// Computes the output rows in `range` (item-major).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let image = io.inputs[0], grid = io.inputs[1]
        // One pixel's sums, on the stack: nothing is allocated per pixel at predict.
        withUnsafeTemporaryAllocation(of: Double.self, capacity: channels) { taps in
            for row in range {
                let item = row / outputHeight
                let source = image + item * height * width * channels
                for column in 0 ..< outputWidth {
                    let point = grid + (row * outputWidth + column) * 2
                    let output = io.output + (row * outputWidth + column) * channels
                    sample(source, x: Double(point[0]), y: Double(point[1]), into: taps)
                    for c in 0 ..< channels { output[c] = Float(taps[c]) }
                }
            }
        }
    }

    /// The image `source` at normalised point (x, y), one value per channel.
    func sample(_ source: UnsafePointer<Float>, x gx: Double, y gy: Double, into values: UnsafeMutableBufferPointer<Double>) {
        values.update(repeating: 0)
        guard gx.isFinite, gy.isFinite else { return }
        var x = denormalize(gx, width), y = denormalize(gy, height)
        if mode == .nearest { x = x.rounded(.toNearestOrEven); y = y.rounded(.toNearestOrEven) }
        x = bounded(x, width)
        y = bounded(y, height)
        switch mode {
        case .nearest:
            add(source, row: Int(y), column: Int(x), weight: 1, into: values)
        case .linear:
            let x0 = x.rounded(.down), y0 = y.rounded(.down)
            let wx = SIMD2(1 - (x - x0), x - x0), wy = SIMD2(1 - (y - y0), y - y0)
            for i in 0 ..< 2 { for j in 0 ..< 2 {
                add(source, row: Int(y0) + i, column: Int(x0) + j, weight: wy[i] * wx[j], into: values)
            } }
        case .cubic:
            let x0 = x.rounded(.down), y0 = y.rounded(.down)
            let wx = Self.cubicWeights(x - x0), wy = Self.cubicWeights(y - y0)
            for i in 0 ..< 4 { for j in 0 ..< 4 {
                add(source, row: Int(y0) - 1 + i, column: Int(x0) - 1 + j, weight: wy[i] * wx[j], into: values)
            } }
        }
    }

    /// Normalised coordinate `n` on an axis of `extent` pixels, in pixels.
    func denormalize(_ n: Double, _ extent: Int) -> Double {
        alignCorners ? (n + 1) / 2 * Double(extent - 1) : ((n + 1) * Double(extent) - 1) / 2
    }

    /// The lowest and highest coordinate inside an axis of `extent` pixels.
    func limits(_ extent: Int) -> (Double, Double) {
        alignCorners ? (0, Double(extent - 1)) : (-0.5, Double(extent) - 0.5)
    }

    /// A point's coordinate outside the axis moved in (border: to the nearest pixel; reflection:
    /// mirrored); kept within a few pixels of the axis, where every tap is outside anyway, so
    /// that it converts to an integer.
    func bounded(_ v: Double, _ extent: Int) -> Double {
        let (low, high) = limits(extent)
        if v < low || v > high {
            switch padding {
            case .border: return min(max(v, 0), Double(extent - 1))
            case .reflection: return Self.reflect(v, low, high)
            case .zeros: return min(max(v, -4), Double(extent) + 3)
            }
        }
        return v
    }

    /// `v` mirrored at `low` and `high` until it lies between them.
    static func reflect(_ v: Double, _ low: Double, _ high: Double) -> Double {
        let span = high - low
        guard span > 0 else { return low }
        if v < low {
            let d = low - v, turns = (d / span).rounded(.towardZero), r = d - turns * span
            return turns.truncatingRemainder(dividingBy: 2) == 0 ? low + r : high - r
        }
        if v > high {
            let d = v - high, turns = (d / span).rounded(.towardZero), r = d - turns * span
            return turns.truncatingRemainder(dividingBy: 2) == 0 ? high - r : low + r
        }
        return v
    }

    /// Tap index `i` on an axis of `extent` as the padding reads it, or nil for a zero.
    func tap(_ i: Int, _ extent: Int) -> Int? {
        if i >= 0 && i < extent { return i }
        switch padding {
        case .zeros: return nil
        case .border: return min(max(i, 0), extent - 1)
        case .reflection:
            let (low, high) = limits(extent)
            return min(max(Int(Self.reflect(Double(i), low, high)), 0), extent - 1)
        }
    }

    /// Adds `weight` × the pixel at (row, column), as the padding reads it, to `values`.
    func add(_ source: UnsafePointer<Float>, row: Int, column: Int, weight: Double, into values: UnsafeMutableBufferPointer<Double>) {
        guard weight != 0, let r = tap(row, height), let c = tap(column, width) else { return }
        let pixel = source + (r * width + c) * channels
        for k in 0 ..< channels { values[k] += weight * Double(pixel[k]) }
    }

    /// Keys' cubic convolution weights (a = −0.75) of the 4 taps around a point `t` past the second.
    static func cubicWeights(_ t: Double) -> SIMD4<Double> {
        let a = -0.75
        func near(_ d: Double) -> Double { ((a + 2) * d - (a + 3)) * d * d + 1 }
        func far(_ d: Double) -> Double { ((a * d - 5 * a) * d + 8 * a) * d - 4 * a }
        return SIMD4(far(t + 1), near(t), near(1 - t), far(2 - t))
    }
}
