import Foundation
import Anvil

// A naive, obviously-correct implementation of every Anvil layer, written from the formulas in
// the design notes and not from Anvil's kernels: plain loops, Double accumulation, NHWC arrays.
// Tests run the same network through Anvil and through these functions and compare.
//
// Only Anvil's *option types* (Padding, ActivationFunction, Resize.Coordinates, Flatten.Order)
// are used here, as descriptions; none of Anvil's arithmetic is called.

/// A batch of channels-last values in Double: `n × h × w × c`, row-major.
struct RefTensor: CustomStringConvertible {
    var n: Int, h: Int, w: Int, c: Int
    var v: [Double]
    /// The rank Anvil gives the tensor (4: an image; 2: a vector `1 × 1 × c`; 3: a sequence `1 × w × c`).
    var rank = 4

    init(n: Int, h: Int, w: Int, c: Int, v: [Double]) {
        precondition(v.count == n * h * w * c, "RefTensor: \(v.count) values for \(n)x\(h)x\(w)x\(c)")
        self.n = n; self.h = h; self.w = w; self.c = c
        self.v = v
    }

    init(n: Int, h: Int, w: Int, c: Int, floats: [Float]) {
        self.init(n: n, h: h, w: w, c: c, v: floats.map(Double.init))
    }

    /// A zero tensor.
    init(zerosN n: Int, h: Int, w: Int, c: Int) {
        self.init(n: n, h: h, w: w, c: c, v: [Double](repeating: 0, count: n * h * w * c))
    }

    /// Anvil's tensor as a reference tensor.
    init(_ tensor: Tensor) {
        self.init(n: tensor.batch, h: tensor.shape.height, w: tensor.shape.width, c: tensor.shape.channels,
                  floats: tensor.values)
        rank = tensor.shape.rank
    }

    func index(_ b: Int, _ y: Int, _ x: Int, _ ch: Int) -> Int { ((b * h + y) * w + x) * c + ch }

    subscript(b: Int, y: Int, x: Int, ch: Int) -> Double {
        get { v[index(b, y, x, ch)] }
        set { v[index(b, y, x, ch)] = newValue }
    }

    /// The values rounded to Float (what Anvil would be given).
    var floats: [Float] { v.map(Float.init) }
    /// The shape of one image, as Anvil spells it.
    var shape: Shape {
        switch rank {
        case 2: .vector(c)
        case 3: .sequence(length: w, channels: c)
        default: Shape(height: h, width: w, channels: c)
        }
    }
    /// Anvil's tensor holding these values.
    func tensor() throws -> Tensor { try Tensor(batch: n, shape: shape, values: floats) }

    var description: String { "\(n)x\(h)x\(w)x\(c)" }
}

/// The resolved geometry of a sliding window along one axis.
struct RefAxis: Equatable {
    var output: Int
    var before: Int
    var after: Int
}

/// The resolved geometry of a sliding window over an image.
struct RefWindow {
    var kernel: (h: Int, w: Int)
    var stride: (h: Int, w: Int)
    var dilation: (h: Int, w: Int)
    var rows: RefAxis
    var columns: RefAxis
    var top: Int { rows.before }
    var left: Int { columns.before }
    var bottom: Int { rows.after }
    var right: Int { columns.after }
}

enum Naive {
    // MARK: - Window geometry

    /// Output size and pads along one axis, or `nil` when the window does not fit.
    ///
    /// SAME: `out = ceil(in / s)`, total pad `max((out-1)·s + (k-1)·d + 1 − in, 0)`, the smaller
    /// half before. VALID / explicit: `out = floor((in + pads − eff) / s) + 1`; ceil mode rounds
    /// up instead, then drops the last window if it would start at or beyond `in + padBefore`.
    static func axis(size: Int, kernel: Int, stride: Int, dilation: Int,
                     padBefore: Int?, padAfter: Int?, ceilMode: Bool) -> RefAxis? {
        let effective = (kernel - 1) * dilation + 1
        guard let padBefore, let padAfter else {  // SAME
            let output = Int((Double(size) / Double(stride)).rounded(.up))
            let total = max((output - 1) * stride + effective - size, 0)
            let before = total / 2  // the smaller half
            return RefAxis(output: output, before: before, after: total - before)
        }
        let padded = size + padBefore + padAfter
        guard effective <= padded else { return nil }
        let span = Double(padded - effective) / Double(stride)
        var output = Int(ceilMode ? span.rounded(.up) : span.rounded(.down)) + 1
        if ceilMode && (output - 1) * stride >= size + padBefore { output -= 1 }
        return RefAxis(output: output, before: padBefore, after: padAfter)
    }

    /// Pads `(top, left, bottom, right)` of an explicit padding, `nil` for SAME, zeros for VALID.
    static func pads(_ padding: Padding) -> (Int, Int, Int, Int)? {
        switch padding {
        case .same: return nil
        case .valid: return (0, 0, 0, 0)
        case .explicit(let t, let l, let b, let r): return (t, l, b, r)
        }
    }

    /// The window over an `h × w` image, or `nil` when it does not fit.
    static func window(h: Int, w: Int, kernel: (Int, Int), stride: (Int, Int), dilation: (Int, Int),
                       padding: Padding, ceilMode: Bool = false) -> RefWindow? {
        let p = pads(padding)
        guard let rows = axis(size: h, kernel: kernel.0, stride: stride.0, dilation: dilation.0,
                              padBefore: p?.0, padAfter: p?.2, ceilMode: ceilMode),
              let columns = axis(size: w, kernel: kernel.1, stride: stride.1, dilation: dilation.1,
                                 padBefore: p?.1, padAfter: p?.3, ceilMode: ceilMode)
        else { return nil }
        return RefWindow(kernel: kernel, stride: stride, dilation: dilation, rows: rows, columns: columns)
    }

    // MARK: - Activations

    static let seluAlpha = 1.6732632423543772848170429916717
    static let seluLambda = 1.0507009873554804934193349852946

    /// One activation of one value, straight from each function's definition.
    static func activate(_ f: ActivationFunction, _ x: Double) -> Double {
        switch f {
        case .none: return x
        case .relu: return x > 0 ? x : 0
        case .relu6: return x < 0 ? 0 : (x > 6 ? 6 : x)
        case .clip(let lo, let hi): return Swift.min(Swift.max(x, Double(lo)), Double(hi))  // ONNX: lo > hi gives hi
        case .leakyRelu(let alpha): return x >= 0 ? x : Double(alpha) * x
        case .sigmoid: return 1 / (1 + exp(-x))
        case .tanh: return Foundation.tanh(x)
        case .elu(let alpha): return x > 0 ? x : Double(alpha) * (exp(x) - 1)
        case .selu: return seluLambda * (x > 0 ? x : seluAlpha * (exp(x) - 1))
        case .hardSigmoid(let alpha, let beta):
            let y = Double(alpha) * x + Double(beta)
            return y < 0 ? 0 : (y > 1 ? 1 : y)
        case .hardSwish:
            let r = x + 3
            return x * (r < 0 ? 0 : (r > 6 ? 6 : r)) / 6
        case .linear(let a, let b): return Double(a) * x + Double(b)
        case .silu: return x / (1 + exp(-x))
        case .gelu: return 0.5 * x * (1 + Foundation.erf(x / 2.0.squareRoot()))
        case .geluTanh: return 0.5 * x * (1 + Foundation.tanh((2 / Double.pi).squareRoot() * (x + 0.044715 * x * x * x)))
        case .mish: return x * Foundation.tanh(softplus(x))
        case .softplus: return softplus(x)
        case .softsign: return x / (1 + abs(x))
        case .celu(let alpha):
            let a = Double(alpha)
            return Swift.max(0, x) + Swift.min(0, a * (exp(x / a) - 1))
        case .thresholdedRelu(let alpha): return x > Double(alpha) ? x : 0
        case .negative: return -x
        case .absolute: return abs(x)
        case .squareRoot: return x.squareRoot()
        case .exponential: return exp(x)
        case .logarithm: return Foundation.log(x)
        case .reciprocal: return 1 / x
        case .erf: return Foundation.erf(x)
        case .sin: return Foundation.sin(x)
        case .cos: return Foundation.cos(x)
        case .tan: return Foundation.tan(x)
        case .asin: return Foundation.asin(x)
        case .acos: return Foundation.acos(x)
        case .atan: return Foundation.atan(x)
        case .sinh: return Foundation.sinh(x)
        case .cosh: return Foundation.cosh(x)
        case .asinh: return Foundation.asinh(x)
        case .acosh: return Foundation.acosh(x)
        case .atanh: return Foundation.atanh(x)
        case .floor: return Foundation.floor(x)
        case .ceil: return Foundation.ceil(x)
        case .round: return x.rounded(.toNearestOrEven)
        case .sign: return x > 0 ? 1 : x < 0 ? -1 : x
        }
    }

    /// `log(1 + e^x)`, without overflow for large x.
    static func softplus(_ x: Double) -> Double { x > 30 ? x + log1p(exp(-x)) : log1p(exp(x)) }

    static func activation(_ x: RefTensor, _ f: ActivationFunction) -> RefTensor {
        var y = x
        y.v = x.v.map { activate(f, $0) }
        return y
    }

    // MARK: - Convolutions

    /// A grouped, strided, dilated, padded convolution. `weights` in Forge layout
    /// `[out][kh][kw][in/groups]`; output channel `o` belongs to group `o / (out/groups)` and
    /// reads input channels `g·(in/groups) ..< (g+1)·(in/groups)`.
    static func convolution(_ x: RefTensor, weights: [Float], bias: [Float]?, outputChannels: Int,
                            kernel: (Int, Int), stride: (Int, Int) = (1, 1), padding: Padding = .same,
                            dilation: (Int, Int) = (1, 1), groups: Int = 1,
                            activation f: ActivationFunction = .none) -> RefTensor {
        let win = window(h: x.h, w: x.w, kernel: kernel, stride: stride, dilation: dilation, padding: padding)!
        let inPerGroup = x.c / groups, outPerGroup = outputChannels / groups
        precondition(weights.count == outputChannels * kernel.0 * kernel.1 * inPerGroup)
        var y = RefTensor(zerosN: x.n, h: win.rows.output, w: win.columns.output, c: outputChannels)
        for b in 0 ..< x.n {
            for oy in 0 ..< y.h {
                for ox in 0 ..< y.w {
                    for o in 0 ..< outputChannels {
                        let group = o / outPerGroup
                        var sum = bias.map { Double($0[o]) } ?? 0
                        for ky in 0 ..< kernel.0 {
                            let iy = oy * stride.0 - win.top + ky * dilation.0
                            if iy < 0 || iy >= x.h { continue }
                            for kx in 0 ..< kernel.1 {
                                let ix = ox * stride.1 - win.left + kx * dilation.1
                                if ix < 0 || ix >= x.w { continue }
                                for i in 0 ..< inPerGroup {
                                    let wi = ((o * kernel.0 + ky) * kernel.1 + kx) * inPerGroup + i
                                    sum += Double(weights[wi]) * x[b, iy, ix, group * inPerGroup + i]
                                }
                            }
                        }
                        y[b, oy, ox, o] = activate(f, sum)
                    }
                }
            }
        }
        return y
    }

    /// A depthwise convolution with `multiplier` kernels per input channel. `weights` in Forge
    /// layout `[c·m][kh][kw]`; output channel `c·m + j` reads input channel `c`.
    static func depthwise(_ x: RefTensor, weights: [Float], bias: [Float]?, multiplier m: Int,
                          kernel: (Int, Int), stride: (Int, Int) = (1, 1), padding: Padding = .same,
                          dilation: (Int, Int) = (1, 1), activation f: ActivationFunction = .none) -> RefTensor {
        let win = window(h: x.h, w: x.w, kernel: kernel, stride: stride, dilation: dilation, padding: padding)!
        let outputChannels = x.c * m
        precondition(weights.count == outputChannels * kernel.0 * kernel.1)
        var y = RefTensor(zerosN: x.n, h: win.rows.output, w: win.columns.output, c: outputChannels)
        for b in 0 ..< x.n {
            for oy in 0 ..< y.h {
                for ox in 0 ..< y.w {
                    for c in 0 ..< x.c {
                        for j in 0 ..< m {
                            let o = c * m + j
                            var sum = bias.map { Double($0[o]) } ?? 0
                            for ky in 0 ..< kernel.0 {
                                let iy = oy * stride.0 - win.top + ky * dilation.0
                                if iy < 0 || iy >= x.h { continue }
                                for kx in 0 ..< kernel.1 {
                                    let ix = ox * stride.1 - win.left + kx * dilation.1
                                    if ix < 0 || ix >= x.w { continue }
                                    sum += Double(weights[(o * kernel.0 + ky) * kernel.1 + kx]) * x[b, iy, ix, c]
                                }
                            }
                            y[b, oy, ox, o] = activate(f, sum)
                        }
                    }
                }
            }
        }
        return y
    }

    /// A 1×1 convolution: `weights` `[out][in]`.
    static func pointwise(_ x: RefTensor, weights: [Float], bias: [Float]?, outputChannels: Int,
                          activation f: ActivationFunction = .none) -> RefTensor {
        precondition(weights.count == outputChannels * x.c)
        var y = RefTensor(zerosN: x.n, h: x.h, w: x.w, c: outputChannels)
        for b in 0 ..< x.n { for py in 0 ..< x.h { for px in 0 ..< x.w { for o in 0 ..< outputChannels {
            var sum = bias.map { Double($0[o]) } ?? 0
            for i in 0 ..< x.c { sum += Double(weights[o * x.c + i]) * x[b, py, px, i] }
            y[b, py, px, o] = activate(f, sum)
        } } } }
        return y
    }

    // MARK: - Pooling

    /// The input cells `(y, x)` of one pooling window, and how many window cells lie inside the
    /// padded input (`-top ..< h+bottom` × `-left ..< w+right`).
    static func poolCells(_ x: RefTensor, _ win: RefWindow, oy: Int, ox: Int) -> (inside: [(Int, Int)], inPadded: Int) {
        var inside: [(Int, Int)] = []
        var inPadded = 0
        for ky in 0 ..< win.kernel.h {
            for kx in 0 ..< win.kernel.w {
                let iy = oy * win.stride.h - win.top + ky * win.dilation.h
                let ix = ox * win.stride.w - win.left + kx * win.dilation.w
                if iy >= 0 && iy < x.h && ix >= 0 && ix < x.w { inside.append((iy, ix)) }
                if iy >= -win.top && iy < x.h + win.bottom && ix >= -win.left && ix < x.w + win.right { inPadded += 1 }
            }
        }
        return (inside, inPadded)
    }

    /// Max pooling; padded cells never win. `nil` when the window does not fit or some window
    /// covers no input cell (a case with no sensible answer).
    static func maxPool(_ x: RefTensor, kernel: (Int, Int), stride: (Int, Int), padding: Padding = .valid,
                        dilation: (Int, Int) = (1, 1), ceilMode: Bool = false) -> RefTensor? {
        guard let win = window(h: x.h, w: x.w, kernel: kernel, stride: stride, dilation: dilation,
                               padding: padding, ceilMode: ceilMode) else { return nil }
        var y = RefTensor(zerosN: x.n, h: win.rows.output, w: win.columns.output, c: x.c)
        for oy in 0 ..< y.h {
            for ox in 0 ..< y.w {
                let cells = poolCells(x, win, oy: oy, ox: ox).inside
                if cells.isEmpty { return nil }
                for b in 0 ..< x.n { for ch in 0 ..< x.c {
                    y[b, oy, ox, ch] = cells.map { x[b, $0.0, $0.1, ch] }.max()!
                } }
            }
        }
        return y
    }

    /// Average pooling: the mean of the window's input cells, or with `countIncludesPadding`
    /// their sum divided by the window cells inside the padded input.
    static func averagePool(_ x: RefTensor, kernel: (Int, Int), stride: (Int, Int), padding: Padding = .valid,
                            dilation: (Int, Int) = (1, 1), ceilMode: Bool = false,
                            countIncludesPadding: Bool = false) -> RefTensor? {
        guard let win = window(h: x.h, w: x.w, kernel: kernel, stride: stride, dilation: dilation,
                               padding: padding, ceilMode: ceilMode) else { return nil }
        var y = RefTensor(zerosN: x.n, h: win.rows.output, w: win.columns.output, c: x.c)
        for oy in 0 ..< y.h {
            for ox in 0 ..< y.w {
                let (cells, inPadded) = poolCells(x, win, oy: oy, ox: ox)
                if cells.isEmpty { return nil }
                let divisor = Double(countIncludesPadding ? inPadded : cells.count)
                for b in 0 ..< x.n { for ch in 0 ..< x.c {
                    y[b, oy, ox, ch] = cells.reduce(0.0) { $0 + x[b, $1.0, $1.1, ch] } / divisor
                } }
            }
        }
        return y
    }

    static func globalAveragePool(_ x: RefTensor) -> RefTensor {
        var y = RefTensor(zerosN: x.n, h: 1, w: 1, c: x.c)
        y.rank = 2
        for b in 0 ..< x.n { for ch in 0 ..< x.c {
            var sum = 0.0
            for py in 0 ..< x.h { for px in 0 ..< x.w { sum += x[b, py, px, ch] } }
            y[b, 0, 0, ch] = sum / Double(x.h * x.w)
        } }
        return y
    }

    static func globalMaxPool(_ x: RefTensor) -> RefTensor {
        var y = RefTensor(zerosN: x.n, h: 1, w: 1, c: x.c)
        y.rank = 2
        for b in 0 ..< x.n { for ch in 0 ..< x.c {
            var best = -Double.infinity
            for py in 0 ..< x.h { for px in 0 ..< x.w { best = max(best, x[b, py, px, ch]) } }
            y[b, 0, 0, ch] = best
        } }
        return y
    }

    // MARK: - Dense, flatten

    /// Flattens each image to `1 × 1 × (h·w·c)` in `H, W, C` or `C, H, W` order.
    static func flatten(_ x: RefTensor, order: Flatten.Order = .channelsLast) -> RefTensor {
        let count = x.h * x.w * x.c
        var y = RefTensor(zerosN: x.n, h: 1, w: 1, c: count)
        y.rank = 2
        for b in 0 ..< x.n { for py in 0 ..< x.h { for px in 0 ..< x.w { for ch in 0 ..< x.c {
            let position = order == .channelsLast ? (py * x.w + px) * x.c + ch : (ch * x.h + py) * x.w + px
            y.v[b * count + position] = x[b, py, px, ch]
        } } } }
        return y
    }

    /// A fully connected layer over an `h × w × c` input; `weights` `[out][h][w][c]`.
    static func dense(_ x: RefTensor, weights: [Float], bias: [Float]?, neurons: Int,
                      activation f: ActivationFunction = .none) -> RefTensor {
        let count = x.h * x.w * x.c
        precondition(weights.count == neurons * count)
        var y = RefTensor(zerosN: x.n, h: 1, w: 1, c: neurons)
        y.rank = 2
        for b in 0 ..< x.n {
            for o in 0 ..< neurons {
                var sum = bias.map { Double($0[o]) } ?? 0
                for py in 0 ..< x.h { for px in 0 ..< x.w { for ch in 0 ..< x.c {
                    sum += Double(weights[o * count + (py * x.w + px) * x.c + ch]) * x[b, py, px, ch]
                } } }
                y[b, 0, 0, o] = activate(f, sum)
            }
        }
        return y
    }

    /// The scale each output of ``dense(_:weights:bias:neurons:activation:)`` is rounded on in
    /// float: Σ|w·x| + |b| per image and neuron (at least 1), `[image * neurons + o]`. A float sum
    /// of many terms rounds on the scale of its terms, not of the result they cancel to, so
    /// errors of sums made in different orders are measured against this.
    static func denseScales(_ x: RefTensor, weights: [Float], bias: [Float]?, neurons: Int) -> [Double] {
        let count = x.h * x.w * x.c
        precondition(weights.count == neurons * count)
        var scales = [Double](repeating: 0, count: x.n * neurons)
        for b in 0 ..< x.n {
            for o in 0 ..< neurons {
                var scale = bias.map { abs(Double($0[o])) } ?? 0
                for k in 0 ..< count { scale += abs(Double(weights[o * count + k]) * x.v[b * count + k]) }
                scales[b * neurons + o] = max(1, scale)
            }
        }
        return scales
    }

    // MARK: - Per-channel layers

    static func prelu(_ x: RefTensor, slopes: [Float]) -> RefTensor {
        var y = x
        for b in 0 ..< x.n { for py in 0 ..< x.h { for px in 0 ..< x.w { for ch in 0 ..< x.c {
            let value = x[b, py, px, ch]
            y[b, py, px, ch] = value > 0 ? value : Double(slopes[ch]) * value
        } } } }
        return y
    }

    /// `γ (x − mean) / √(variance + ε) + β` per channel.
    static func batchNormalization(_ x: RefTensor, gamma: [Float], beta: [Float], mean: [Float],
                                   variance: [Float], epsilon: Float) -> RefTensor {
        var y = x
        for b in 0 ..< x.n { for py in 0 ..< x.h { for px in 0 ..< x.w { for ch in 0 ..< x.c {
            let normalized = (x[b, py, px, ch] - Double(mean[ch])) / (Double(variance[ch]) + Double(epsilon)).squareRoot()
            y[b, py, px, ch] = Double(gamma[ch]) * normalized + Double(beta[ch])
        } } } }
        return y
    }

    /// Softmax (or log-softmax) over the channels of each pixel.
    static func softmax(_ x: RefTensor, logarithm: Bool = false) -> RefTensor {
        var y = x
        for b in 0 ..< x.n { for py in 0 ..< x.h { for px in 0 ..< x.w {
            let values = (0 ..< x.c).map { x[b, py, px, $0] }
            let largest = values.max()!
            let sum = values.reduce(0.0) { $0 + exp($1 - largest) }
            for ch in 0 ..< x.c {
                y[b, py, px, ch] = logarithm ? values[ch] - largest - log(sum) : exp(values[ch] - largest) / sum
            }
        } } }
        return y
    }

    // MARK: - Merging

    static func add(_ xs: [RefTensor], activation f: ActivationFunction = .none) -> RefTensor {
        var y = xs[0]
        for i in 0 ..< y.v.count { y.v[i] = activate(f, xs.reduce(0.0) { $0 + $1.v[i] }) }
        return y
    }

    /// NumPy broadcasting of `xs` (each `n × h × w × c`; an operand with `n` 1 is shared by every
    /// image of the batch, as a constant is) folded left to right with `op`; `mean` divides the
    /// sum by the operand count. Every axis is equal or 1 (the caller checks).
    static func elementwise(_ xs: [RefTensor], _ op: ElementwiseOperation, activation f: ActivationFunction = .none) -> RefTensor {
        let n = xs.map(\.n).max()!, h = xs.map(\.h).max()!, w = xs.map(\.w).max()!, c = xs.map(\.c).max()!
        var y = RefTensor(zerosN: n, h: h, w: w, c: c)
        func at(_ x: RefTensor, _ b: Int, _ py: Int, _ px: Int, _ ch: Int) -> Double {
            x[x.n == 1 ? 0 : b, x.h == 1 ? 0 : py, x.w == 1 ? 0 : px, x.c == 1 ? 0 : ch]
        }
        for b in 0 ..< n { for py in 0 ..< h { for px in 0 ..< w { for ch in 0 ..< c {
            y[b, py, px, ch] = activate(f, fold(xs.map { at($0, b, py, px, ch) }, op))
        } } } }
        return y
    }

    /// `values` folded left to right with `op` in float64 (`mean` divides the sum by their count;
    /// comparisons and logic give 1 or 0).
    static func fold(_ values: [Double], _ op: ElementwiseOperation) -> Double {
        var r = values[0]
        for v in values.dropFirst() {
            switch op {
            case .add, .mean: r += v
            case .subtract: r -= v
            case .multiply: r *= v
            case .divide: r /= v
            case .maximum: r = Swift.max(r, v)
            case .minimum: r = Swift.min(r, v)
            case .power: r = Foundation.pow(r, v)
            case .remainder: r -= v * (r / v).rounded(.down)
            case .fmod: r -= v * (r / v).rounded(.towardZero)
            case .less: r = r < v ? 1 : 0
            case .lessOrEqual: r = r <= v ? 1 : 0
            case .greater: r = r > v ? 1 : 0
            case .greaterOrEqual: r = r >= v ? 1 : 0
            case .equal: r = r == v ? 1 : 0
            case .and: r = r != 0 && v != 0 ? 1 : 0
            case .or: r = r != 0 || v != 0 ? 1 : 0
            case .xor: r = (r != 0) != (v != 0) ? 1 : 0
            }
        }
        return op == .mean ? r / Double(values.count) : r
    }

    /// Joins along channels, pixel by pixel.
    static func concatenate(_ xs: [RefTensor]) -> RefTensor {
        let channels = xs.reduce(0) { $0 + $1.c }
        var y = RefTensor(zerosN: xs[0].n, h: xs[0].h, w: xs[0].w, c: channels)
        for b in 0 ..< y.n { for py in 0 ..< y.h { for px in 0 ..< y.w {
            var offset = 0
            for x in xs {
                for ch in 0 ..< x.c { y[b, py, px, offset + ch] = x[b, py, px, ch] }
                offset += x.c
            }
        } } }
        return y
    }

    // MARK: - Resize

    /// The source coordinate of output coordinate `x` along one axis, clamped to `[0, in − 1]`.
    /// `length` is the resized length the coordinate mapping uses: the output size when resizing to
    /// a size, `in × scale` when resizing by scale (ONNX's definition; equal for integral products).
    static func sourceCoordinate(_ x: Int, input: Int, output: Int, length: Double, scale: Double,
                                 coordinates: Resize.Coordinates) -> Double {
        let source = onnxSourceCoordinate(x, input: input, output: output, length: length, scale: scale,
                                          coordinates: coordinates)
        return min(max(source, 0), Double(input - 1))
    }

    /// Bilinear resize to `size`, or by `scale` (output `floor(in × scale)`).
    static func resize(_ x: RefTensor, size: (Int, Int)? = nil, scale: (Float, Float)? = nil,
                       coordinates: Resize.Coordinates) -> RefTensor {
        let outH: Int, outW: Int, scaleH: Double, scaleW: Double, lengthH: Double, lengthW: Double
        if let size {
            (outH, outW) = size
            scaleH = Double(outH) / Double(x.h); scaleW = Double(outW) / Double(x.w)
            lengthH = Double(outH); lengthW = Double(outW)
        } else {
            scaleH = Double(scale!.0); scaleW = Double(scale!.1)
            outH = Int((Double(x.h) * scaleH).rounded(.down)); outW = Int((Double(x.w) * scaleW).rounded(.down))
            lengthH = Double(x.h) * scaleH; lengthW = Double(x.w) * scaleW
        }
        var y = RefTensor(zerosN: x.n, h: outH, w: outW, c: x.c)
        for oy in 0 ..< outH {
            let sy = sourceCoordinate(oy, input: x.h, output: outH, length: lengthH, scale: scaleH, coordinates: coordinates)
            let y0 = Int(sy.rounded(.down)), y1 = min(y0 + 1, x.h - 1), fy = sy - Double(y0)
            for ox in 0 ..< outW {
                let sx = sourceCoordinate(ox, input: x.w, output: outW, length: lengthW, scale: scaleW, coordinates: coordinates)
                let x0 = Int(sx.rounded(.down)), x1 = min(x0 + 1, x.w - 1), fx = sx - Double(x0)
                for b in 0 ..< x.n { for ch in 0 ..< x.c {
                    let top = (1 - fx) * x[b, y0, x0, ch] + fx * x[b, y0, x1, ch]
                    let bottom = (1 - fx) * x[b, y1, x0, ch] + fx * x[b, y1, x1, ch]
                    y[b, oy, ox, ch] = (1 - fy) * top + fy * bottom
                } }
            }
        }
        return y
    }

    // MARK: - Weight layouts (from Forge layout)

    /// Convolution `[out][kh][kw][in]` → PyTorch `[out][in][kh][kw]`.
    static func convolutionToPyTorch(_ w: [Float], outputs: Int, kernel: (Int, Int), inputs: Int) -> [Float] {
        var result = [Float](repeating: .nan, count: w.count)
        for o in 0 ..< outputs { for y in 0 ..< kernel.0 { for x in 0 ..< kernel.1 { for i in 0 ..< inputs {
            result[((o * inputs + i) * kernel.0 + y) * kernel.1 + x] = w[((o * kernel.0 + y) * kernel.1 + x) * inputs + i]
        } } } }
        return result
    }

    /// Convolution `[out][kh][kw][in]` → TensorFlow `[kh][kw][in][out]`.
    static func convolutionToTensorFlow(_ w: [Float], outputs: Int, kernel: (Int, Int), inputs: Int) -> [Float] {
        var result = [Float](repeating: .nan, count: w.count)
        for o in 0 ..< outputs { for y in 0 ..< kernel.0 { for x in 0 ..< kernel.1 { for i in 0 ..< inputs {
            result[((y * kernel.1 + x) * inputs + i) * outputs + o] = w[((o * kernel.0 + y) * kernel.1 + x) * inputs + i]
        } } } }
        return result
    }

    /// Depthwise `[c·m][kh][kw]` → PyTorch `[c·m][1][kh][kw]` (the same order).
    static func depthwiseToPyTorch(_ w: [Float]) -> [Float] { w }

    /// Depthwise `[c·m][kh][kw]` → TensorFlow `[kh][kw][c][m]`.
    static func depthwiseToTensorFlow(_ w: [Float], channels: Int, multiplier m: Int, kernel: (Int, Int)) -> [Float] {
        var result = [Float](repeating: .nan, count: w.count)
        for c in 0 ..< channels { for j in 0 ..< m { for y in 0 ..< kernel.0 { for x in 0 ..< kernel.1 {
            result[((y * kernel.1 + x) * channels + c) * m + j] = w[((c * m + j) * kernel.0 + y) * kernel.1 + x]
        } } } }
        return result
    }

    /// Dense `[out][h][w][c]` → PyTorch `[out][c][h][w]`.
    static func denseToPyTorch(_ w: [Float], outputs: Int, input: Shape) -> [Float] {
        let (h, wd, c) = (input.height, input.width, input.channels)
        var result = [Float](repeating: .nan, count: w.count)
        for o in 0 ..< outputs { for y in 0 ..< h { for x in 0 ..< wd { for ch in 0 ..< c {
            result[o * h * wd * c + (ch * h + y) * wd + x] = w[o * h * wd * c + (y * wd + x) * c + ch]
        } } } }
        return result
    }

    /// Dense `[out][in]` → TensorFlow `[in][out]`.
    static func denseToTensorFlow(_ w: [Float], outputs: Int, inputs: Int) -> [Float] {
        var result = [Float](repeating: .nan, count: w.count)
        for o in 0 ..< outputs { for i in 0 ..< inputs { result[i * outputs + o] = w[o * inputs + i] } }
        return result
    }
}

// MARK: - Layout layers (any rank), over plain row-major arrays

/// A batch as a row-major array of any rank: `dims[0]` is the batch.
struct RefArray: CustomStringConvertible {
    var dims: [Int]
    var v: [Double]

    /// The flat index of `index` (one entry per axis).
    func offset(_ index: [Int]) -> Int { zip(index, dims).reduce(0) { $0 * $1.1 + $1.0 } }
    /// The multi-index of flat `offset`.
    func index(_ offset: Int) -> [Int] {
        var rest = offset
        var index = [Int](repeating: 0, count: dims.count)
        for k in stride(from: dims.count - 1, through: 0, by: -1) { index[k] = rest % dims[k]; rest /= dims[k] }
        return index
    }
    var count: Int { dims.reduce(1, *) }
    /// Anvil's tensor of these values; `dims` after the batch are the shape's dimensions.
    func tensor() throws -> Tensor {
        try Tensor(batch: dims[0], shape: try Shape(dimensions: Array(dims.dropFirst())), values: v.map(Float.init))
    }
    /// As a RefTensor (for `refExpectClose`), with the rank of `dims`.
    var refTensor: RefTensor {
        let shape = try! Shape(dimensions: Array(dims.dropFirst()))
        var t = RefTensor(n: dims[0], h: shape.height, w: shape.width, c: shape.channels, v: v)
        t.rank = shape.rank
        return t
    }
    var description: String { "\(dims)" }
}

extension Naive {
    /// `y[i] = x[i permuted]`: output axis k is input axis `perm[k]`.
    static func transpose(_ x: RefArray, _ perm: [Int]) -> RefArray {
        var y = RefArray(dims: perm.map { x.dims[$0] }, v: [Double](repeating: 0, count: x.count))
        for o in 0 ..< y.count {
            let out = y.index(o)
            var source = [Int](repeating: 0, count: perm.count)
            for k in perm.indices { source[perm[k]] = out[k] }
            y.v[o] = x.v[x.offset(source)]
        }
        return y
    }

    /// Indices `start, start+step, ...` of `axis` (already resolved and clamped: `count` of them).
    static func slice(_ x: RefArray, axis: Int, first: Int, count: Int, step: Int) -> RefArray {
        var dims = x.dims
        dims[axis] = count
        var y = RefArray(dims: dims, v: [Double](repeating: 0, count: dims.reduce(1, *)))
        for o in 0 ..< y.count {
            var i = y.index(o)
            i[axis] = first + i[axis] * step
            y.v[o] = x.v[x.offset(i)]
        }
        return y
    }

    /// Joins arrays of one rank along `axis`.
    static func concatenate(_ xs: [RefArray], axis: Int) -> RefArray {
        var dims = xs[0].dims
        dims[axis] = xs.reduce(0) { $0 + $1.dims[axis] }
        var y = RefArray(dims: dims, v: [Double](repeating: 0, count: dims.reduce(1, *)))
        var start = 0
        for x in xs {
            for o in 0 ..< x.count {
                var i = x.index(o)
                i[axis] += start
                y.v[y.offset(i)] = x.v[o]
            }
            start += x.dims[axis]
        }
        return y
    }

    /// ShuffleNet's channel shuffle on the last axis: output channel `i·g + j` is input `j·k + i`.
    static func channelShuffle(_ x: RefArray, groups g: Int) -> RefArray {
        let c = x.dims.last!, k = c / g
        var y = x
        for p in 0 ..< x.count / c { for i in 0 ..< k { for j in 0 ..< g { y.v[p * c + i * g + j] = x.v[p * c + j * k + i] } } }
        return y
    }

    /// ONNX DepthToSpace on `[n, h, w, c]` channels-last, `crd` for column-row-depth.
    static func depthToSpace(_ x: RefArray, block b: Int, crd: Bool) -> RefArray {
        let (n, h, w, c) = (x.dims[0], x.dims[1], x.dims[2], x.dims[3]), oc = c / (b * b)
        var y = RefArray(dims: [n, h * b, w * b, oc], v: [Double](repeating: 0, count: x.count))
        for bi in 0 ..< n { for oy in 0 ..< h * b { for ox in 0 ..< w * b { for ch in 0 ..< oc {
            let (i, j) = (oy % b, ox % b)
            let source = crd ? ch * b * b + i * b + j : (i * b + j) * oc + ch
            y.v[y.offset([bi, oy, ox, ch])] = x.v[x.offset([bi, oy / b, ox / b, source])]
        } } } }
        return y
    }

    /// ONNX SpaceToDepth (the inverse of `depthToSpace` in the same mode).
    static func spaceToDepth(_ x: RefArray, block b: Int, crd: Bool) -> RefArray {
        let (n, h, w, c) = (x.dims[0], x.dims[1], x.dims[2], x.dims[3])
        var y = RefArray(dims: [n, h / b, w / b, c * b * b], v: [Double](repeating: 0, count: x.count))
        for bi in 0 ..< n { for oy in 0 ..< h / b { for ox in 0 ..< w / b { for i in 0 ..< b { for j in 0 ..< b {
            for ch in 0 ..< c {
                let target = crd ? ch * b * b + i * b + j : (i * b + j) * c + ch
                y.v[y.offset([bi, oy, ox, target])] = x.v[x.offset([bi, oy * b + i, ox * b + j, ch])]
            }
        } } } } }
        return y
    }
}
