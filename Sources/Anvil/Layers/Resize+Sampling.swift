import Foundation

// Where each output row and column of a Resize samples the input: ONNX's coordinate mappings,
// then the taps (source index and weight) of the nearest, linear or cubic filter, widened by
// 1 / scale when antialiasing a downsampling. Built once per shape; the C kernel only reads them.
extension Resize {
    /// The unclamped source coordinate of output coordinate `x`; `start` and `end` bound the
    /// region along this axis (``Coordinates/tfCropAndResize`` only).
    func source(_ x: Int, input: Int, output: Int, scale: Double, start: Float, end: Float) -> Double {
        let x = Double(x)
        // ONNX uses the unrounded resized length (input × scale) in align_corners,
        // half_pixel_symmetric and tf_crop_and_resize.
        let length = Double(input) * scale
        switch coordinates {
        case .halfPixel: return (x + 0.5) / scale - 0.5
        case .pytorchHalfPixel: return output > 1 ? (x + 0.5) / scale - 0.5 : 0
        case .alignCorners: return length > 1 ? x * Double(input - 1) / (length - 1) : 0
        case .asymmetric: return x / scale
        case .halfPixelSymmetric:
            let offset = Double(input) / 2 * (1 - Double(output) / length)
            return offset + (x + 0.5) / scale - 0.5
        case .tfCropAndResize:
            let (start, end) = (Double(start), Double(end)), span = Double(input - 1)
            let offset = length == 1 ? (end - start) * span / 2 : x * (end - start) * span / (length - 1)
            return offset + start * span
        }
    }

    /// Taps per output coordinate at `scale`: 1 (nearest), 2 (linear), 4 (cubic), or, when
    /// antialiasing a downsampling, every input within the filter's support stretched by 1 / scale.
    func tapCount(scale: Double) -> Int {
        switch mode {
        case .nearest: return 1
        case .linear, .cubic:
            let radius = mode == .linear ? 1.0 : 2.0
            guard antialias, scale < 1 else { return Int(2 * radius) }
            // ONNX: start = floor(−radius / scale) + 1 taps left of the sample, 2 − 2·start in all.
            return Int(min(-2 * (-radius / scale).rounded(.down), 1e6))
        }
    }

    /// The taps of every output coordinate along one axis, and which outputs lie outside the
    /// input (``Coordinates/tfCropAndResize``; empty otherwise).
    func taps(input: Int, output: Int, scale: Double, start: Float, end: Float) -> ResizeKernel.Taps {
        let count = tapCount(scale: scale)
        var result = ResizeKernel.Taps(count: count, index: [], weight: [], outside: [])
        result.index.reserveCapacity(output * count)
        result.weight.reserveCapacity(output * count)
        func clamp(_ i: Int) -> Int32 { Int32(min(max(i, 0), input - 1)) }
        for x in 0 ..< output {
            let exact = source(x, input: input, output: output, scale: scale, start: start, end: end)
            if coordinates == .tfCropAndResize {
                result.outside.append(exact < 0 || exact > Double(input - 1) ? 1 : 0)
            }
            // Far outside the input every tap lands on (or beyond) the edge: clamping the
            // coordinate there changes no weight that matters and keeps indices in range.
            let margin = Double(count + 2)
            let s = min(max(exact, -margin), Double(input) + margin)
            switch mode {
            case .nearest:
                let i: Double
                switch nearestRounding {
                case .roundPreferFloor: i = s.rounded(.down) + 0.5 == s ? s.rounded(.down) : s.rounded()
                case .roundPreferCeil: i = s.rounded(.down) + 0.5 == s ? s.rounded(.up) : s.rounded()
                case .floor: i = s.rounded(.down)
                case .ceil: i = s.rounded(.up)
                }
                result.index.append(clamp(Int(i)))
                result.weight.append(1)
            case .linear where !antialias:
                let clamped = min(max(s, 0), Double(input - 1))
                let low = Int(clamped.rounded(.down))
                result.index += [clamp(low), clamp(low + 1)]
                let fraction = Float(clamped - Double(low))
                result.weight += [1 - fraction, fraction]
            case .cubic where !antialias:
                let base = Int(s.rounded(.down))
                var weights: [Double] = []
                for k in -1 ... 2 {
                    let i = base + k
                    let outside = i < 0 || i >= input
                    weights.append(excludeOutside && outside ? 0 : Self.cubicWeight(s - Double(i), a: Double(cubicCoefficient)))
                    result.index.append(clamp(i))
                }
                let total = excludeOutside ? weights.reduce(0, +) : 1
                result.weight += weights.map { Float(total != 0 ? $0 / total : 0) }
            case .linear, .cubic:
                let (indices, weights) = antialiasedTaps(s, count: count, input: input, scale: scale)
                result.index += indices.map(clamp)
                result.weight += weights.map(Float.init)
            }
        }
        return result
    }

    /// ONNX's antialiased filter at source coordinate `s`: the `count` inputs nearest `s`
    /// (preferring the left one when `s` is an integer), each weighing the filter at
    /// `(i − s) · min(scale, 1)`, normalised to sum 1; with ``excludeOutside``, inputs outside
    /// the image weigh 0 and the rest are renormalised (else they repeat the edge pixel).
    private func antialiasedTaps(_ s: Double, count: Int, input: Int, scale: Double) -> ([Int], [Double]) {
        let stretch = min(scale, 1), a = Double(cubicCoefficient)
        let floor = s.rounded(.down)
        let base = Int(floor == s ? floor - 1 : floor) + 1 - count / 2
        let indices = (0 ..< count).map { base + $0 }
        var weights = indices.map { i -> Double in
            let t = (Double(i) - s) * stretch
            return mode == .linear ? max(0, 1 - abs(t)) : Self.cubicWeight(t, a: a)
        }
        func normalise() {
            let total = weights.reduce(0, +)
            if total != 0 { weights = weights.map { $0 / total } }
        }
        normalise()
        if excludeOutside {
            for (k, i) in indices.enumerated() where i < 0 || i >= input { weights[k] = 0 }
            normalise()
        }
        return (indices, weights)
    }

    /// Keys' cubic convolution weight at distance `t` with coefficient `a`.
    static func cubicWeight(_ t: Double, a: Double) -> Double {
        let t = abs(t)
        if t <= 1 { return ((a + 2) * t - (a + 3)) * t * t + 1 }
        if t < 2 { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a }
        return 0
    }
}
