import Foundation
import Anvil

// Naive float64 references for TransposedConvolution, Pad, the normalisations, LRN, Lp pooling
// and Resize's nearest and cubic modes, written from the ONNX / PyTorch definitions (scatter
// form for the transposed convolution, where Anvil's kernel gathers).

extension Naive {
    // MARK: - Transposed convolution

    /// The output size of a transposed convolution along one axis with explicit pads.
    static func transposedLength(_ size: Int, kernel: Int, stride: Int, dilation: Int, before: Int, after: Int,
                                 outputPadding: Int) -> Int {
        (size - 1) * stride - before - after + (kernel - 1) * dilation + 1 + outputPadding
    }

    /// ConvTranspose: input pixel (iy, ix) adds `x · w[o][ky][kx][i]` at output
    /// `(iy·s − top + ky·d, ix·s − left + kx·d)`. `weights` in Forge layout `[out][kh][kw][in/groups]`.
    /// `pads` are `(top, left, bottom, right)`.
    static func transposedConvolution(_ x: RefTensor, weights: [Float], bias: [Float]?, outputChannels: Int,
                                      kernel: (Int, Int), stride: (Int, Int), pads: (Int, Int, Int, Int),
                                      outputPadding: (Int, Int), dilation: (Int, Int), groups: Int,
                                      activation f: ActivationFunction = .none) -> RefTensor {
        let inPerGroup = x.c / groups, outPerGroup = outputChannels / groups
        let oh = transposedLength(x.h, kernel: kernel.0, stride: stride.0, dilation: dilation.0, before: pads.0,
                                  after: pads.2, outputPadding: outputPadding.0)
        let ow = transposedLength(x.w, kernel: kernel.1, stride: stride.1, dilation: dilation.1, before: pads.1,
                                  after: pads.3, outputPadding: outputPadding.1)
        var y = RefTensor(zerosN: x.n, h: oh, w: ow, c: outputChannels)
        for b in 0 ..< x.n { for iy in 0 ..< x.h { for ix in 0 ..< x.w {
            for ky in 0 ..< kernel.0 { for kx in 0 ..< kernel.1 {
                let oy = iy * stride.0 - pads.0 + ky * dilation.0, ox = ix * stride.1 - pads.1 + kx * dilation.1
                if oy < 0 || oy >= oh || ox < 0 || ox >= ow { continue }
                for o in 0 ..< outputChannels {
                    let g = o / outPerGroup
                    var sum = 0.0
                    for i in 0 ..< inPerGroup {
                        sum += Double(weights[((o * kernel.0 + ky) * kernel.1 + kx) * inPerGroup + i]) * x[b, iy, ix, g * inPerGroup + i]
                    }
                    y[b, oy, ox, o] += sum
                }
            } }
        } } }
        for b in 0 ..< x.n { for oy in 0 ..< oh { for ox in 0 ..< ow { for o in 0 ..< outputChannels {
            y[b, oy, ox, o] = activate(f, y[b, oy, ox, o] + Double(bias?[o] ?? 0))
        } } } }
        return y
    }

    /// Transposed-convolution weights Forge `[out][kh][kw][in/g]` → PyTorch `[in][out/g][kh][kw]`.
    static func transposedToPyTorch(_ w: [Float], outputs: Int, kernel: (Int, Int), inputs: Int, groups: Int) -> [Float] {
        let og = outputs / groups, ig = inputs / groups
        var result = [Float](repeating: .nan, count: w.count)
        for o in 0 ..< outputs { for y in 0 ..< kernel.0 { for x in 0 ..< kernel.1 { for i in 0 ..< ig {
            let g = o / og
            result[(((g * ig + i) * og + o % og) * kernel.0 + y) * kernel.1 + x] = w[((o * kernel.0 + y) * kernel.1 + x) * ig + i]
        } } } }
        return result
    }

    /// Transposed-convolution weights Forge `[out][kh][kw][in/g]` → TensorFlow `[kh][kw][out/g][in]`.
    static func transposedToTensorFlow(_ w: [Float], outputs: Int, kernel: (Int, Int), inputs: Int, groups: Int) -> [Float] {
        let og = outputs / groups, ig = inputs / groups
        var result = [Float](repeating: .nan, count: w.count)
        for o in 0 ..< outputs { for y in 0 ..< kernel.0 { for x in 0 ..< kernel.1 { for i in 0 ..< ig {
            let g = o / og
            result[((y * kernel.1 + x) * og + o % og) * inputs + g * ig + i] = w[((o * kernel.0 + y) * kernel.1 + x) * ig + i]
        } } } }
        return result
    }

    // MARK: - Pad

    /// The source index of padded index `i` (shifted by the pad before) in an axis of `size`,
    /// `nil` for the constant; modes "constant", "reflect", "edge".
    static func padSource(_ i: Int, size: Int, mode: String) -> Int? {
        if i >= 0 && i < size { return i }
        switch mode {
        case "reflect": return i < 0 ? -i : 2 * (size - 1) - i
        case "edge": return i < 0 ? 0 : size - 1
        default: return nil
        }
    }

    /// Pads `(top, left, front, bottom, right, back)` on height, width and channels.
    static func pad(_ x: RefTensor, pads: (Int, Int, Int, Int, Int, Int), mode: String, value: Double) -> RefTensor {
        var y = RefTensor(zerosN: x.n, h: x.h + pads.0 + pads.3, w: x.w + pads.1 + pads.4, c: x.c + pads.2 + pads.5)
        for b in 0 ..< x.n { for oy in 0 ..< y.h { for ox in 0 ..< y.w { for oc in 0 ..< y.c {
            if let sy = padSource(oy - pads.0, size: x.h, mode: mode), let sx = padSource(ox - pads.1, size: x.w, mode: mode),
               let sc = padSource(oc - pads.2, size: x.c, mode: mode) {
                y[b, oy, ox, oc] = x[b, sy, sx, sc]
            } else {
                y[b, oy, ox, oc] = value
            }
        } } } }
        return y
    }

    // MARK: - Normalisations

    /// Group normalisation: per image and group of `c / groups` channels, `(x − mean) / √(var + ε)`,
    /// then `· gamma[c] + beta[c]` (instance normalisation: groups = channels).
    static func groupNormalization(_ x: RefTensor, groups: Int, epsilon: Double, gamma: [Float]?, beta: [Float]?) -> RefTensor {
        var y = x
        let per = x.c / groups
        for b in 0 ..< x.n { for g in 0 ..< groups {
            var values: [Double] = []
            for yy in 0 ..< x.h { for xx in 0 ..< x.w { for c in g * per ..< (g + 1) * per { values.append(x[b, yy, xx, c]) } } }
            let mean = values.reduce(0, +) / Double(values.count)
            let variance = values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)
            for yy in 0 ..< x.h { for xx in 0 ..< x.w { for c in g * per ..< (g + 1) * per {
                let normalised = (x[b, yy, xx, c] - mean) / (variance + epsilon).squareRoot()
                y[b, yy, xx, c] = normalised * Double(gamma?[c] ?? 1) + Double(beta?[c] ?? 0)
            } } }
        } }
        return y
    }

    /// Layer normalisation over each pixel's channels.
    static func layerNormalization(_ x: RefTensor, epsilon: Double, gamma: [Float]?, beta: [Float]?) -> RefTensor {
        var y = x
        for b in 0 ..< x.n { for yy in 0 ..< x.h { for xx in 0 ..< x.w {
            let values = (0 ..< x.c).map { x[b, yy, xx, $0] }
            let mean = values.reduce(0, +) / Double(x.c)
            let variance = values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(x.c)
            for c in 0 ..< x.c {
                y[b, yy, xx, c] = (values[c] - mean) / (variance + epsilon).squareRoot() * Double(gamma?[c] ?? 1) + Double(beta?[c] ?? 0)
            }
        } } }
        return y
    }

    /// Layer normalisation over the last `axes` of (h, w, c): 1 each pixel's channels, 2 each row
    /// (w × c), 3 each image (h × w × c); `gamma` and `beta` hold one value per position in the
    /// group, in (h, w, c) order.
    static func layerNormalization(_ x: RefTensor, axes: Int, epsilon: Double, gamma: [Float]?, beta: [Float]?) -> RefTensor {
        var y = x
        // The groups: every (b, row, column) with the normalised axes' coordinates set to 0.
        let rows = axes >= 3 ? 1 : x.h, columns = axes >= 2 ? 1 : x.w
        let groupH = axes >= 3 ? x.h : 1, groupW = axes >= 2 ? x.w : 1
        for b in 0 ..< x.n { for gy in 0 ..< rows { for gx in 0 ..< columns {
            var members: [(Int, Int, Int)] = []
            for dy in 0 ..< groupH { for dx in 0 ..< groupW { for c in 0 ..< x.c { members.append((gy + dy, gx + dx, c)) } } }
            let values = members.map { x[b, $0.0, $0.1, $0.2] }
            let mean = values.reduce(0, +) / Double(values.count)
            let variance = values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(values.count)
            for (k, m) in members.enumerated() {
                y[b, m.0, m.1, m.2] = (values[k] - mean) / (variance + epsilon).squareRoot() * Double(gamma?[k] ?? 1)
                    + Double(beta?[k] ?? 0)
            }
        } } }
        return y
    }

    /// ONNX LRN: `x / (bias + alpha/size · Σ x²)^beta` over channels `c − ⌊(size−1)/2⌋ … c + ⌈(size−1)/2⌉`.
    static func localResponseNormalization(_ x: RefTensor, size: Int, alpha: Double, beta: Double, bias: Double) -> RefTensor {
        var y = x
        let before = (size - 1) / 2, after = (size - 1) - before
        for b in 0 ..< x.n { for yy in 0 ..< x.h { for xx in 0 ..< x.w { for c in 0 ..< x.c {
            var sum = 0.0
            for d in max(0, c - before) ... min(x.c - 1, c + after) { sum += x[b, yy, xx, d] * x[b, yy, xx, d] }
            y[b, yy, xx, c] = x[b, yy, xx, c] / pow(bias + alpha / Double(size) * sum, beta)
        } } } }
        return y
    }

    /// Lp pooling `(Σ |x|^p)^(1/p)` over each window's cells inside the input.
    static func lpPool(_ x: RefTensor, p: Double, kernel: (Int, Int), stride: (Int, Int), padding: Padding,
                       dilation: (Int, Int) = (1, 1)) -> RefTensor? {
        guard let win = window(h: x.h, w: x.w, kernel: kernel, stride: stride, dilation: dilation, padding: padding) else { return nil }
        var y = RefTensor(zerosN: x.n, h: win.rows.output, w: win.columns.output, c: x.c)
        for b in 0 ..< x.n { for oy in 0 ..< y.h { for ox in 0 ..< y.w {
            let cells = poolCells(x, win, oy: oy, ox: ox).inside
            for c in 0 ..< x.c {
                let sum = cells.map { pow(abs(x[b, $0.0, $0.1, c]), p) }.reduce(0, +)
                y[b, oy, ox, c] = pow(sum, 1 / p)
            }
        } } }
        return y
    }

    // MARK: - Resize: nearest and cubic

    /// ONNX Resize's `coordinate_transformation_mode`, transcribed from the operator's definition:
    /// `x_original` of output coordinate `x_resized`, unclamped. `length` is `length_resized`
    /// (in × scale, unrounded), `output` is the integral output length.
    static func onnxSourceCoordinate(_ o: Int, input: Int, output: Int, length: Double, scale: Double,
                                     coordinates: Resize.Coordinates, roi: (start: Double, end: Double) = (0, 1)) -> Double {
        let xResized = Double(o), lengthOriginal = Double(input)
        switch coordinates {
        case .tfCropAndResize:
            let lengthResized = length
            if lengthResized == 1 {
                return (roi.end - roi.start) * (lengthOriginal - 1) / 2 + roi.start * (lengthOriginal - 1)
            }
            return xResized * (roi.end - roi.start) * (lengthOriginal - 1) / (lengthResized - 1)
                + roi.start * (lengthOriginal - 1)
        case .halfPixel:
            return (xResized + 0.5) / scale - 0.5
        case .pytorchHalfPixel:
            guard output > 1 else { return 0 }
            return (xResized + 0.5) / scale - 0.5
        case .alignCorners:
            guard length > 1 else { return 0 }
            return xResized * (lengthOriginal - 1) / (length - 1)
        case .asymmetric:
            return xResized / scale
        case .halfPixelSymmetric:
            let adjustment = Double(output) / length
            let center = lengthOriginal / 2
            let offset = center * (1 - adjustment)
            return offset + (xResized + 0.5) / scale - 0.5
        }
    }

    /// A dense `output × input` resampling matrix for one axis: row `o` holds the weight of every
    /// input index in output `o`. Taps outside `[0, input)` take the edge pixel's value (their
    /// weights add onto the edge column), as ONNX's edge-padded neighbourhood does.
    private static func resampling(input: Int, output: Int, length: Double, scale: Double,
                                   coordinates: Resize.Coordinates,
                                   taps: (_ source: Double) -> [(index: Int, weight: Double)]) -> [[Double]] {
        (0 ..< output).map { o in
            var row = [Double](repeating: 0, count: input)
            let source = onnxSourceCoordinate(o, input: input, output: output, length: length, scale: scale,
                                              coordinates: coordinates)
            for tap in taps(source) { row[min(input - 1, max(0, tap.index))] += tap.weight }
            return row
        }
    }

    /// `y[b, oy, ox, c] = Σ rows[oy][iy] · columns[ox][ix] · x[b, iy, ix, c]`, evaluated in two
    /// passes (along the width, then along the height).
    private static func resample(_ x: RefTensor, rows: [[Double]], columns: [[Double]]) -> RefTensor {
        var across = RefTensor(zerosN: x.n, h: x.h, w: columns.count, c: x.c)
        for b in 0 ..< x.n { for iy in 0 ..< x.h { for ox in 0 ..< columns.count { for c in 0 ..< x.c {
            across[b, iy, ox, c] = (0 ..< x.w).reduce(0) { $0 + columns[ox][$1] * x[b, iy, $1, c] }
        } } } }
        var y = RefTensor(zerosN: x.n, h: rows.count, w: columns.count, c: x.c)
        for b in 0 ..< x.n { for oy in 0 ..< rows.count { for ox in 0 ..< columns.count { for c in 0 ..< x.c {
            y[b, oy, ox, c] = (0 ..< x.h).reduce(0) { $0 + rows[oy][$1] * across[b, $1, ox, c] }
        } } } }
        return y
    }

    /// ONNX nearest resize. The source coordinate splits into `floor` and a fraction `r`; the
    /// rounding mode picks `floor` or `floor + 1` from `r` (ONNX's nearest coefficients).
    static func resizeNearest(_ x: RefTensor, outH: Int, outW: Int, scale: (Double, Double), length: (Double, Double),
                              coordinates: Resize.Coordinates, rounding: Resize.NearestRounding) -> RefTensor {
        func pick(_ source: Double) -> [(index: Int, weight: Double)] {
            let lower = floor(source), r = source - lower
            let up: Bool
            switch rounding {
            case .roundPreferFloor: up = r > 0.5
            case .roundPreferCeil: up = r >= 0.5
            case .floor: up = false
            case .ceil: up = r > 0
            }
            return [(Int(lower) + (up ? 1 : 0), 1)]
        }
        let rows = resampling(input: x.h, output: outH, length: length.0, scale: scale.0, coordinates: coordinates, taps: pick)
        let columns = resampling(input: x.w, output: outW, length: length.1, scale: scale.1, coordinates: coordinates, taps: pick)
        return resample(x, rows: rows, columns: columns)
    }

    /// ONNX cubic resize: with `r` the fraction of the source coordinate, the taps at
    /// floor − 1, floor, floor + 1, floor + 2 lie at distances 1 + r, r, 1 − r, 2 − r and weigh
    /// Keys' kernel `(a+2)d³ − (a+3)d² + 1` (d ≤ 1) or `a·d³ − 5a·d² + 8a·d − 4a` (1 < d < 2).
    /// Outside taps take the edge pixel, or (excludeOutside) weigh 0 with the rest renormalised.
    static func resizeCubic(_ x: RefTensor, outH: Int, outW: Int, scale: (Double, Double), length: (Double, Double),
                            coordinates: Resize.Coordinates, a: Double, excludeOutside: Bool) -> RefTensor {
        func near(_ d: Double) -> Double { (a + 2) * pow(d, 3) - (a + 3) * pow(d, 2) + 1 }
        func far(_ d: Double) -> Double { a * pow(d, 3) - 5 * a * pow(d, 2) + 8 * a * d - 4 * a }
        func taps(input: Int) -> (Double) -> [(index: Int, weight: Double)] {
            { source in
                let lower = floor(source), r = source - lower, base = Int(lower)
                var result = [(base - 1, far(1 + r)), (base, near(r)), (base + 1, near(1 - r)), (base + 2, far(2 - r))]
                    .map { (index: $0.0, weight: $0.1) }
                if excludeOutside {
                    result = result.filter { $0.index >= 0 && $0.index < input }
                    let total = result.reduce(0) { $0 + $1.weight }
                    result = result.map { (index: $0.index, weight: total == 0 ? 0 : $0.weight / total) }
                }
                return result
            }
        }
        let rows = resampling(input: x.h, output: outH, length: length.0, scale: scale.0, coordinates: coordinates,
                              taps: taps(input: x.h))
        let columns = resampling(input: x.w, output: outW, length: length.1, scale: scale.1, coordinates: coordinates,
                                 taps: taps(input: x.w))
        return resample(x, rows: rows, columns: columns)
    }

    // MARK: - Resize: ONNX's general definition (antialias, tf_crop_and_resize)

    /// One axis of ONNX Resize for any mode, as the operator's specification states it:
    /// the source coordinate `x_original`; its fraction `ratio` in (0, 1] (1 at an integer: the
    /// left pixel is preferred); the filter's coefficients at that ratio (nearest, linear, cubic,
    /// or their antialiased forms, stretched by 1 / scale and normalised when scale < 1); the same
    /// number of input indices nearest `x_original` (ties to the smaller index) in the
    /// edge-padded input; with `excludeOutside`, indices outside the input weigh 0 and the rest
    /// renormalise. Returns the dense `output × input` matrix and which outputs are extrapolated
    /// (tf_crop_and_resize: `x_original` outside `[0, input − 1]`).
    static func onnxResizeAxis(input: Int, output: Int, scale: Double, length: Double, coordinates: Resize.Coordinates,
                               roi: (start: Double, end: Double), mode: Resize.Mode, rounding: Resize.NearestRounding,
                               a: Double, excludeOutside: Bool, antialias: Bool) -> (matrix: [[Double]], outside: [Bool]) {
        func keys(_ x: Double) -> Double {
            let x = abs(x)
            if x <= 1 { return (a + 2) * pow(x, 3) - (a + 3) * pow(x, 2) + 1 }
            if x < 2 { return a * pow(x, 3) - 5 * a * pow(x, 2) + 8 * a * x - 4 * a }
            return 0
        }
        func coefficients(_ ratio: Double) -> [Double] {
            let s = min(scale, 1)
            switch mode {
            case .nearest:
                if ratio == 1 { return [0, 1] }
                switch rounding {
                case .roundPreferFloor: return ratio <= 0.5 ? [1, 0] : [0, 1]
                case .roundPreferCeil: return ratio < 0.5 ? [1, 0] : [0, 1]
                case .floor: return [1, 0]
                case .ceil: return [0, 1]
                }
            case .linear where !antialias:
                return [1 - ratio, ratio]
            case .linear:
                let start = Int(floor(-1 / s)) + 1, footprint = 2 - 2 * start
                let raw = (start ..< start + footprint).map { max(0, min(1, 1 - abs((Double($0) - ratio) * s))) }
                let total = raw.reduce(0, +)
                return raw.map { $0 / total }
            case .cubic where !antialias:
                return [keys(ratio + 1), keys(ratio), keys(1 - ratio), keys(2 - ratio)]
            case .cubic:
                let start = Int(floor(-2 / s)) + 1, end = 2 - start
                let raw = (start ..< end).map { keys(s * (Double($0) - ratio)) }
                let total = raw.reduce(0, +)
                return raw.map { $0 / total }
            }
        }
        var matrix: [[Double]] = [], outside: [Bool] = []
        for o in 0 ..< output {
            var row = [Double](repeating: 0, count: input)
            let x = onnxSourceCoordinate(o, input: input, output: output, length: length, scale: scale,
                                         coordinates: coordinates, roi: roi)
            outside.append(coordinates == .tfCropAndResize && (x < 0 || x > Double(input - 1)))
            guard !outside[o] else { matrix.append(row); continue }
            let ratio = x == floor(x) ? 1 : x - floor(x)
            var weights = coefficients(ratio)
            // The n indices of the (unboundedly) edge-padded input nearest x, in ascending order.
            let n = weights.count, around = Int(floor(x))
            let nearest = Array((around - n ... around + n).sorted { (abs(x - Double($0)), $0) < (abs(x - Double($1)), $1) }
                .prefix(n)).sorted()
            if excludeOutside {
                for (k, i) in nearest.enumerated() where i < 0 || i >= input { weights[k] = 0 }
                let total = weights.reduce(0, +)
                weights = weights.map { total == 0 ? 0 : $0 / total }
            }
            for (k, i) in nearest.enumerated() { row[min(max(i, 0), input - 1)] += weights[k] }
            matrix.append(row)
        }
        return (matrix, outside)
    }

    /// ONNX Resize over height and width (every mode, coordinate mapping, antialias,
    /// tf_crop_and_resize with `roi` = (top, left, bottom, right) and `extrapolation`): the two
    /// axes of ``onnxResizeAxis`` applied in turn; outputs on an extrapolated row or column are
    /// `extrapolation`. `scale` and `length` (in × scale, unrounded) are per axis.
    static func resizeONNX(_ x: RefTensor, outH: Int, outW: Int, scale: (Double, Double), length: (Double, Double),
                           coordinates: Resize.Coordinates, mode: Resize.Mode,
                           rounding: Resize.NearestRounding = .roundPreferFloor, a: Double = -0.75,
                           excludeOutside: Bool = false, antialias: Bool = false,
                           roi: (Double, Double, Double, Double) = (0, 0, 1, 1), extrapolation: Double = 0) -> RefTensor {
        let rows = onnxResizeAxis(input: x.h, output: outH, scale: scale.0, length: length.0, coordinates: coordinates,
                                  roi: (roi.0, roi.2), mode: mode, rounding: rounding, a: a,
                                  excludeOutside: excludeOutside, antialias: antialias)
        let columns = onnxResizeAxis(input: x.w, output: outW, scale: scale.1, length: length.1, coordinates: coordinates,
                                     roi: (roi.1, roi.3), mode: mode, rounding: rounding, a: a,
                                     excludeOutside: excludeOutside, antialias: antialias)
        var y = resample(x, rows: rows.matrix, columns: columns.matrix)
        for b in 0 ..< y.n { for oy in 0 ..< outH { for ox in 0 ..< outW where rows.outside[oy] || columns.outside[ox] {
            for c in 0 ..< y.c { y[b, oy, ox, c] = extrapolation }
        } } }
        return y
    }
}
