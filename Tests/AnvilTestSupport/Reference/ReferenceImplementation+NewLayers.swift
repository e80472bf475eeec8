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

    /// The unclamped source coordinate of output coordinate `o` for ONNX's coordinate modes
    /// (`halfPixelSymmetric` included); `length` is in × scale, `scale` the factor used.
    static func onnxSourceCoordinate(_ o: Int, input: Int, output: Int, length: Double, scale: Double,
                                     coordinates: Resize.Coordinates) -> Double {
        let x = Double(o)
        switch coordinates {
        case .halfPixel: return (x + 0.5) / scale - 0.5
        case .pytorchHalfPixel: return output > 1 ? (x + 0.5) / scale - 0.5 : 0
        case .alignCorners: return length > 1 ? x * Double(input - 1) / (length - 1) : 0
        case .asymmetric: return x / scale
        case .halfPixelSymmetric:
            let adjustment = Double(output) / length
            let center = Double(input) / 2
            let offset = center * (1 - adjustment)
            return offset + (x + 0.5) / scale - 0.5
        }
    }

    /// ONNX nearest resize (rounding mode by name).
    static func resizeNearest(_ x: RefTensor, outH: Int, outW: Int, scale: (Double, Double), length: (Double, Double),
                              coordinates: Resize.Coordinates, rounding: Resize.NearestRounding) -> RefTensor {
        func pick(_ o: Int, input: Int, output: Int, length: Double, scale: Double) -> Int {
            let s = onnxSourceCoordinate(o, input: input, output: output, length: length, scale: scale, coordinates: coordinates)
            var i: Double
            switch rounding {
            case .roundPreferFloor: i = s.rounded(.down) + 0.5 == s ? s.rounded(.down) : s.rounded()
            case .roundPreferCeil: i = s.rounded(.down) + 0.5 == s ? s.rounded(.up) : s.rounded()
            case .floor: i = s.rounded(.down)
            case .ceil: i = s.rounded(.up)
            }
            return min(max(Int(i), 0), input - 1)
        }
        var y = RefTensor(zerosN: x.n, h: outH, w: outW, c: x.c)
        for oy in 0 ..< outH {
            let sy = pick(oy, input: x.h, output: outH, length: length.0, scale: scale.0)
            for ox in 0 ..< outW {
                let sx = pick(ox, input: x.w, output: outW, length: length.1, scale: scale.1)
                for b in 0 ..< x.n { for c in 0 ..< x.c { y[b, oy, ox, c] = x[b, sy, sx, c] } }
            }
        }
        return y
    }

    /// The cubic convolution weight of distance `t` (Keys, coefficient `a`).
    static func cubicWeight(_ t: Double, a: Double) -> Double {
        let t = abs(t)
        if t <= 1 { return ((a + 2) * t - (a + 3)) * t * t + 1 }
        if t < 2 { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a }
        return 0
    }

    /// ONNX cubic resize: four taps per axis at floor(s) − 1 … floor(s) + 2, indices clamped to the
    /// edge, or (excludeOutside) outside taps dropped and the weights renormalised.
    static func resizeCubic(_ x: RefTensor, outH: Int, outW: Int, scale: (Double, Double), length: (Double, Double),
                            coordinates: Resize.Coordinates, a: Double, excludeOutside: Bool) -> RefTensor {
        func taps(_ o: Int, input: Int, output: Int, length: Double, scale: Double) -> [(Int, Double)] {
            let s = onnxSourceCoordinate(o, input: input, output: output, length: length, scale: scale, coordinates: coordinates)
            let base = Int(s.rounded(.down))
            var result: [(Int, Double)] = []
            for k in -1 ... 2 {
                let i = base + k
                let w = cubicWeight(s - Double(i), a: a)
                if excludeOutside && (i < 0 || i >= input) { continue }
                result.append((min(max(i, 0), input - 1), w))
            }
            if excludeOutside {
                let total = result.map(\.1).reduce(0, +)
                result = result.map { ($0.0, total != 0 ? $0.1 / total : 0) }
            }
            return result
        }
        var y = RefTensor(zerosN: x.n, h: outH, w: outW, c: x.c)
        for oy in 0 ..< outH {
            let ty = taps(oy, input: x.h, output: outH, length: length.0, scale: scale.0)
            for ox in 0 ..< outW {
                let tx = taps(ox, input: x.w, output: outW, length: length.1, scale: scale.1)
                for b in 0 ..< x.n { for c in 0 ..< x.c {
                    var sum = 0.0
                    for (iy, wy) in ty { for (ix, wx) in tx { sum += wy * wx * x[b, iy, ix, c] } }
                    y[b, oy, ox, c] = sum
                } }
            }
        }
        return y
    }
}
