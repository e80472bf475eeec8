import CAnvilKernels
import CAnvilKernelsEmulated
import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// A small reproducible generator (xorshift64*), so every case can be rebuilt from its seed.
private struct DepthwiseRandom {
    private var state: UInt64

    init(seed: UInt64) { state = (seed &+ 1) &* 0x2545_F491_4F6C_DD1D }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }

    mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
    mutating func pick<T>(_ values: [T]) -> T { values[int(0 ... values.count - 1)] }
    mutating func float() -> Float { Float(next() >> 40) / Float(1 << 24) * 2 - 1 }
    mutating func floats(_ count: Int) -> [Float] { (0 ..< count).map { _ in float() } }
}

/// One depthwise convolution to check.
private struct DepthwiseCase: CustomStringConvertible {
    var batch = 1, height = 5, width = 5, channels = 8, multiplier = 1
    var kernel = (3, 3), stride = (1, 1), dilation = (1, 1)
    var padding = Padding.same
    var bias = true
    var activation = ActivationFunction.none

    var outputs: Int { channels * multiplier }

    var description: String {
        "\(batch)×\(height)×\(width)×\(channels) m\(multiplier) kernel \(kernel) stride \(stride) dilation \(dilation) "
            + "padding \(padding) bias \(bias) \(activation)"
    }

    /// The resolved geometry, or nil when the window does not fit (no output).
    var geometry: WindowGeometry? {
        try? WindowGeometry(input: Shape(height: height, width: width, channels: channels), kernel: kernel,
                            stride: stride, dilation: dilation, padding: padding)
    }
}

/// Inputs, weights `[kh][kw][c·m]` and bias of a case.
private struct DepthwiseData {
    var input: [Float]
    var weights: [Float]
    var bias: [Float]?

    init(_ c: DepthwiseCase, seed: UInt64) {
        var random = DepthwiseRandom(seed: seed)
        input = random.floats(c.batch * c.height * c.width * c.channels)
        weights = random.floats(c.kernel.0 * c.kernel.1 * c.outputs)
        bias = c.bias ? random.floats(c.outputs) : nil
    }
}

/// The textbook definition, in double precision: every output `(n, y, x, c·m + j)` sums
/// `input[n][y·s − pad + ky·d][x·s − pad + kx·d][c] · w[ky][kx][c·m + j]` over the taps that
/// land inside the image. Returns the values (activation applied) and, per output, `Σ|x·w| + |b|`,
/// the scale its float rounding error is measured against.
private func naiveDepthwise(_ c: DepthwiseCase, _ g: WindowGeometry, _ data: DepthwiseData) -> (values: [Double], scales: [Double]) {
    var values: [Double] = []
    var scales: [Double] = []
    for n in 0 ..< c.batch {
        for oy in 0 ..< g.outputHeight {
            for ox in 0 ..< g.outputWidth {
                for o in 0 ..< c.outputs {
                    let channel = o / c.multiplier
                    var sum = Double(data.bias?[o] ?? 0)
                    var scale = abs(sum)
                    for ky in 0 ..< c.kernel.0 {
                        let iy = oy * c.stride.0 - g.padTop + ky * c.dilation.0
                        if iy < 0 || iy >= c.height { continue }
                        for kx in 0 ..< c.kernel.1 {
                            let ix = ox * c.stride.1 - g.padLeft + kx * c.dilation.1
                            if ix < 0 || ix >= c.width { continue }
                            let x = Double(data.input[((n * c.height + iy) * c.width + ix) * c.channels + channel])
                            let w = Double(data.weights[(ky * c.kernel.1 + kx) * c.outputs + o])
                            sum += x * w
                            scale += abs(x * w)
                        }
                    }
                    values.append(Naive.activate(c.activation, sum))
                    scales.append(scale)
                }
            }
        }
    }
    return (values, scales)
}

/// The float `shift` (0-7) floats past the first 32-byte boundary in `buffer` (which must have
/// 8 spare floats at its start).
private func placed(_ buffer: UnsafeMutableBufferPointer<Float>, shift: Int) -> UnsafeMutablePointer<Float> {
    let base = buffer.baseAddress!
    let past = Int(bitPattern: base) % 32 / MemoryLayout<Float>.stride
    return base + ((8 - past) % 8 + shift) % 8
}

/// The C body a check runs: the one the dispatch table holds for an instruction set (through
/// `DepthwiseConvolutionKernel`), or `x86_avx512/depthwise_convolution.c` built on emulated
/// intrinsics (Tests/CAnvilKernelsEmulated), which runs on any x86-64 CPU.
private enum DepthwiseBody: CustomStringConvertible {
    case dispatched(InstructionSet)
    case emulatedAVX512

    var description: String {
        switch self {
        case .dispatched(let isa): return "\(isa)"
        case .emulatedAVX512: return "emulated avx512"
        }
    }
}

/// Output lines `lines` of a case through the emulated AVX-512 body, one call per image, as
/// `DepthwiseConvolutionKernel` calls `anvil_depthwise_rows`; clamp-type activations only (the
/// body's fused clamp).
private func runEmulated(_ c: DepthwiseCase, _ g: WindowGeometry, weights: KernelWeights, io: KernelIO, lines: Range<Int>) {
    let clamp = ActivationClamp(c.activation)
    precondition(clamp.rest == .none, "the emulated body is checked on clamp-type activations")
    var shape = anvil_depthwise_shape(
        input_height: Int32(c.height), input_width: Int32(c.width), channels: Int32(c.channels),
        multiplier: Int32(c.multiplier), kernel_height: Int32(c.kernel.0), kernel_width: Int32(c.kernel.1),
        stride_height: Int32(c.stride.0), stride_width: Int32(c.stride.1), dilation_height: Int32(c.dilation.0),
        dilation_width: Int32(c.dilation.1), pad_top: Int32(g.padTop), pad_left: Int32(g.padLeft),
        output_height: Int32(g.outputHeight), output_width: Int32(g.outputWidth),
        clamp_min: clamp.min, clamp_max: clamp.max)
    let inputImage = c.height * c.width * c.channels, outputImage = g.outputHeight * g.outputWidth * c.outputs
    for image in 0 ..< c.batch {
        let first = max(lines.lowerBound - image * g.outputHeight, 0)
        let last = min(lines.upperBound - image * g.outputHeight, g.outputHeight)
        guard first < last else { continue }
        anvil_depthwise_rows_avx512_emulated(&shape, io.inputs[0] + image * inputImage, weights.weightPointer,
                                                    weights.biasPointer, io.output + image * outputImage,
                                                    Int32(first), Int32(last))
    }
}

/// Runs the kernel on a case. The input starts `shift` floats past a 32-byte boundary, and the
/// output too, plus one when `shift` is 0 (the kernel peels 4 channels to align its loads when
/// the input is 4 floats past). The output is NaN-filled (an unwritten value shows up) and
/// followed by guard values (an overrun shows up). `split` runs the output lines as two
/// ranges cut there, the way two threads would, instead of one call. `body` picks the C body.
private func runKernel(_ c: DepthwiseCase, _ g: WindowGeometry, _ data: DepthwiseData, body: DepthwiseBody, shift: Int = 0,
                       split: Int? = nil) -> (output: [Float], guardIntact: Bool) {
    let isa: InstructionSet
    switch body {
    case .dispatched(let set): isa = set
    case .emulatedAVX512: isa = .scalar  // only the clamp's remainder (none for the cases run) uses it
    }
    let weights = KernelWeights(source: ParameterData(data.weights), reordered: nil, bias: data.bias.map { ParameterData($0) },
                                outputs: c.outputs, weightsPerOutput: c.kernel.0 * c.kernel.1, rowStride: c.outputs, affine: nil)
    let kernel = DepthwiseConvolutionKernel(geometry: g, inputChannels: c.channels, multiplier: c.multiplier,
                                            weights: weights, activation: c.activation, instructionSet: isa)
    let outputShape = Shape(height: g.outputHeight, width: g.outputWidth, channels: c.outputs)
    let count = c.batch * outputShape.count
    let guardCount = 40
    var inputBuffer = [Float](repeating: 0, count: 8 + data.input.count)
    var outputBuffer = [Float](repeating: .nan, count: 8 + count + guardCount)
    var result: [Float] = []
    var guardIntact = false
    inputBuffer.withUnsafeMutableBufferPointer { inputFloats in
        outputBuffer.withUnsafeMutableBufferPointer { outputFloats in
            let input = placed(inputFloats, shift: shift)
            input.update(from: data.input, count: data.input.count)
            let output = placed(outputFloats, shift: shift == 0 ? 1 : shift)
            for i in 0 ..< guardCount { output[count + i] = 4321 }
            let io = KernelIO(inputs: [UnsafePointer(input)], output: output, scratch: output, batch: c.batch,
                              inputShapes: [Shape(height: c.height, width: c.width, channels: c.channels)],
                              outputShape: outputShape)
            let lines = c.batch * g.outputHeight
            let ranges = split.map { [0 ..< min($0, lines), min($0, lines) ..< lines] } ?? [0 ..< lines]
            switch body {
            case .dispatched:
                if split == nil { kernel.run(io) } else { ranges.forEach { kernel.run($0, io) } }
            case .emulatedAVX512:
                ranges.forEach { runEmulated(c, g, weights: weights, io: io, lines: $0) }
            }
            result = Array(UnsafeBufferPointer(start: output, count: count))
            guardIntact = (0 ..< guardCount).allSatisfy { output[count + $0] == 4321 }
        }
    }
    return (result, guardIntact)
}

/// The largest `|actual − expected| / max(scale, 1)`; NaN or infinity counts as infinitely wrong.
private func worstError(_ actual: [Float], _ expected: (values: [Double], scales: [Double])) -> Double {
    var worst = 0.0
    for i in 0 ..< expected.values.count {
        let error = abs(Double(actual[i]) - expected.values[i])
        if !error.isFinite { return .infinity }
        worst = refWorst(worst, error / max(expected.scales[i], 1))
    }
    return worst
}

/// The case built from `seed`: kernel 1-5, stride 1-3, dilation 1-2, same / valid / explicit
/// (often asymmetric) padding, channel counts on and off the 8- and 16-lane blocks,
/// multiplier 1-3, batch 1-3, bias or not, clamp-type and other activations.
private func randomCase(seed: UInt64) -> DepthwiseCase {
    var random = DepthwiseRandom(seed: seed)
    var c = DepthwiseCase()
    c.batch = random.int(1 ... 3)
    c.height = random.int(1 ... 13)
    c.width = random.int(1 ... 21)
    c.channels = random.pick([1, 2, 3, 5, 7, 8, 9, 12, 15, 16, 17, 23, 24, 31, 32, 33, 40, 48])
    c.multiplier = random.pick([1, 1, 1, 2, 3])
    c.kernel = (random.int(1 ... 5), random.int(1 ... 5))
    c.stride = (random.int(1 ... 3), random.int(1 ... 3))
    c.dilation = (random.int(1 ... 2), random.int(1 ... 2))
    switch random.int(0 ... 3) {
    case 0: c.padding = .same
    case 1: c.padding = .valid
    default:
        c.padding = .explicit(top: random.int(0 ... 3), left: random.int(0 ... 3), bottom: random.int(0 ... 3),
                              right: random.int(0 ... 3))
    }
    c.bias = random.int(0 ... 3) != 0
    c.activation = random.pick([.none, .relu, .relu6, .clip(min: -0.25, max: 0.4), .leakyRelu(alpha: 0.1), .sigmoid, .hardSwish])
    return c
}

/// Hand-picked cases: MobileNet's 3×3 stride 1 and 2 layers at small sizes (the unrolled
/// bodies), widths just around the 4- and 8-pixel blocks, windows wholly inside the padding, 1×1
/// and 5×5 kernels, asymmetric padding and every activation family.
private let fixedCases: [DepthwiseCase] = [
    DepthwiseCase(batch: 1, height: 14, width: 14, channels: 32, activation: .relu6),
    DepthwiseCase(batch: 2, height: 15, width: 15, channels: 64, stride: (2, 2), activation: .relu),
    DepthwiseCase(batch: 1, height: 7, width: 7, channels: 1024, activation: .relu6),
    DepthwiseCase(batch: 2, height: 6, width: 5, channels: 264, padding: .explicit(top: 1, left: 0, bottom: 2, right: 1)),
    DepthwiseCase(batch: 1, height: 9, width: 9, channels: 256, stride: (2, 2), activation: .relu),
    DepthwiseCase(batch: 1, height: 5, width: 8, channels: 300, kernel: (2, 4), activation: .relu),
    // Wide rows: several pixel blocks per row, strides 1-3, dilation along x.
    DepthwiseCase(batch: 1, height: 5, width: 21, channels: 24, stride: (2, 2), activation: .relu6),
    DepthwiseCase(batch: 2, height: 6, width: 23, channels: 20, padding: .valid, activation: .relu),
    DepthwiseCase(batch: 1, height: 4, width: 30, channels: 16, dilation: (1, 2), activation: .relu6),
    DepthwiseCase(batch: 1, height: 5, width: 40, channels: 12, stride: (1, 3)),
    DepthwiseCase(batch: 1, height: 4, width: 40, channels: 72, stride: (1, 2)),
    DepthwiseCase(batch: 1, height: 9, width: 13, channels: 24, stride: (2, 2), padding: .valid, activation: .relu6),
    DepthwiseCase(batch: 3, height: 6, width: 10, channels: 20, padding: .explicit(top: 0, left: 1, bottom: 2, right: 0)),
    DepthwiseCase(batch: 1, height: 4, width: 4, channels: 7, kernel: (2, 2), padding: .explicit(top: 4, left: 5, bottom: 3, right: 6),
                  activation: .clip(min: -0.1, max: 0.2)),
    DepthwiseCase(batch: 2, height: 8, width: 11, channels: 17, kernel: (1, 1), activation: .sigmoid),
    DepthwiseCase(batch: 1, height: 12, width: 12, channels: 33, kernel: (5, 5), stride: (1, 2), dilation: (2, 1),
                  activation: .leakyRelu(alpha: 0.2)),
    DepthwiseCase(batch: 2, height: 5, width: 9, channels: 3, multiplier: 3, kernel: (3, 3), stride: (2, 1), bias: false,
                  activation: .relu6),
    DepthwiseCase(batch: 1, height: 1, width: 1, channels: 16, kernel: (3, 3), padding: .same, activation: .none),
    DepthwiseCase(batch: 1, height: 3, width: 30, channels: 8, kernel: (3, 1), dilation: (1, 2), padding: .valid),
    DepthwiseCase(batch: 1, height: 6, width: 6, channels: 16, multiplier: 2, kernel: (4, 4), stride: (3, 3),
                  padding: .explicit(top: 2, left: 0, bottom: 0, right: 3), activation: .hardSwish),
    // 5×5 at stride 1, whole windows unrolled (EfficientNet, MobileNet v3): blocks of 4 and
    // their remainders, 16-channel strips with an 8-channel tail, the peeled head of wide
    // layers, dilation along y, stride 2 along y only.
    DepthwiseCase(batch: 2, height: 11, width: 14, channels: 40, kernel: (5, 5), activation: .relu6),
    DepthwiseCase(batch: 1, height: 9, width: 13, channels: 264, kernel: (5, 5), dilation: (2, 1), activation: .hardSwish),
    DepthwiseCase(batch: 1, height: 10, width: 19, channels: 20, kernel: (5, 5), stride: (2, 1), padding: .valid),
    // 5×5 at stride 2, whole windows unrolled in the AVX-512 body: rows of two 8-pixel blocks and
    // a rest, 72 channels as two strips of 32 and a masked one of 8.
    DepthwiseCase(batch: 1, height: 13, width: 37, channels: 72, kernel: (5, 5), stride: (2, 2), activation: .relu6),
    // Rows too wide for L1 whole (a pass per group of channels, each body by its rule: AVX2 by a
    // block's window, 256 channels at a time; AVX-512 by the window rows, multiples of 32):
    // MobileNet v2's 56-pixel rows of 144 channels; 120 channels with a rest of 24 in one masked
    // strip; below, a last group of 88 or 24, of 8 (and peeled again at each group's start),
    // stride 2, borders on every side; the 7 × 7 × 1024 and 264-channel 5 × 5 cases above too.
    DepthwiseCase(batch: 1, height: 4, width: 56, channels: 144, activation: .relu6),
    DepthwiseCase(batch: 1, height: 6, width: 50, channels: 120, kernel: (3, 3), stride: (2, 2), activation: .hardSwish),
    DepthwiseCase(batch: 1, height: 9, width: 10, channels: 600, stride: (2, 2), activation: .relu6),
    DepthwiseCase(batch: 2, height: 7, width: 9, channels: 520, padding: .explicit(top: 0, left: 2, bottom: 1, right: 0),
                  activation: .hardSwish),
    // Groups walked over bands of rows whose input fits 256 KB: MobileNet v2's 112-pixel rows of 96
    // channels at stride 2 in bands of 2 output rows (3 bands and a short one per image); rows of
    // 320 channels (AVX2 groups too) in bands of one row.
    DepthwiseCase(batch: 2, height: 13, width: 112, channels: 96, stride: (2, 2), activation: .relu6),
    DepthwiseCase(batch: 1, height: 6, width: 60, channels: 320, activation: .relu),
]

private let randomCount = 400
/// The most scaled error allowed: float sums of at most 25 terms in a different order.
private let tolerance = 1e-5

/// The fixed and random cases; for the emulated body (which is called without the kernel's
/// activation pass) an activation other than a clamp becomes one.
private func allCases(for body: DepthwiseBody) -> [DepthwiseCase] {
    let cases = fixedCases + (0 ..< UInt64(randomCount)).map { randomCase(seed: $0) }
    guard case .emulatedAVX512 = body else { return cases }
    return cases.map { c in
        var c = c
        if ActivationClamp(c.activation).rest != .none { c.activation = .clip(min: -0.25, max: 0.4) }
        return c
    }
}

/// Checks every case against the naive reference with `body`; returns the descriptions of the
/// failures.
private func failures(body: DepthwiseBody, seedOffset: UInt64) -> [String] {
    var failed: [String] = []
    var checked = 0
    let cases = allCases(for: body)
    for (index, c) in cases.enumerated() {
        guard let g = c.geometry else { continue }
        let data = DepthwiseData(c, seed: UInt64(index) &+ seedOffset)
        let expected = naiveDepthwise(c, g, data)
        // Inputs 32-byte aligned, 16 bytes past (the peeled path) and 4 bytes past: every one
        // for the fixed cases, in turn for the random ones.
        let shifts = index < fixedCases.count ? [0, 4, 1] : [[0, 4, 1][index % 3]]
        for shift in shifts {
            let whole = runKernel(c, g, data, body: body, shift: shift)
            let error = worstError(whole.output, expected)
            if error > tolerance || !whole.guardIntact {
                failed.append("\(c), shift \(shift): error \(error), guard intact \(whole.guardIntact)")
                continue
            }
            // The same lines split between two calls must give identical bits.
            let split = runKernel(c, g, data, body: body, shift: shift, split: (index % 5) + 1)
            if split.output.map(\.bitPattern) != whole.output.map(\.bitPattern) || !split.guardIntact {
                failed.append("\(c), shift \(shift): split run differs from the single run")
            }
        }
        checked += 1
    }
    if checked < cases.count / 2 { failed.append("only \(checked) of \(cases.count) cases had an output") }
    return failed
}

@Suite("Depthwise convolution kernel")
struct DepthwiseKernelTests {
    @Test("Every body matches a naive reference over random geometries", arguments: refInstructionSets)
    func matchesReference(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        // Chosen per kernel (`instructionSet`), not process-wide: that would race with the
        // kernels of suites running in parallel. The scalar body gets its own data.
        let failed = failures(body: .dispatched(isa), seedOffset: isa == .scalar ? 1000 : 0)
        let passed = failed.isEmpty
        #expect(passed, "\(isa): \(failed.count) failures, first: \(failed.prefix(5).joined(separator: "\n"))")
    }

    @Test("The AVX-512 body's own source on emulated intrinsics matches the naive reference, on any x86-64 CPU")
    func emulatedAVX512() throws {
        try #require(anvil_emulated_bodies_available() == 1, "the emulated bodies are built on x86-64 only")
        let failed = failures(body: .emulatedAVX512, seedOffset: 2000)
        #expect(failed.isEmpty, "\(failed.count) failures, first: \(failed.prefix(5).joined(separator: "\n"))")
    }

    @Test("The real AVX-512 body equals the emulated one bit for bit")
    func realAVX512() throws {
        try refRequireSupported(.avx512)
        for (index, c) in allCases(for: .emulatedAVX512).enumerated() {
            guard let g = c.geometry else { continue }
            let data = DepthwiseData(c, seed: UInt64(index) &+ 3000)
            let shift = [0, 4, 1][index % 3]
            let real = runKernel(c, g, data, body: .dispatched(.avx512), shift: shift).output
            let emulated = runKernel(c, g, data, body: .emulatedAVX512, shift: shift).output
            #expect(refBitDifferences(real, emulated) == 0, "\(c), shift \(shift)")
        }
    }

    @Test("NaN and infinity propagate through the fused clamp, and padding never multiplies them",
          arguments: refInstructionSets)
    func specialValues(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        for activation in [ActivationFunction.none, .relu, .relu6] {
            let c = DepthwiseCase(batch: 1, height: 6, width: 9, channels: 16, activation: activation)
            let g = try #require(c.geometry)
            var data = DepthwiseData(c, seed: 7)
            // A NaN at pixel (2, 4) channel 3 reaches outputs (1...3, 3...5) of channel 3 only.
            data.input[(2 * 9 + 4) * 16 + 3] = .nan
            // An infinity in a corner: outputs next to it are infinite, not NaN from 0·∞.
            data.input[0 * 16 + 5] = .infinity
            data.weights = data.weights.map { abs($0) }
            let output = runKernel(c, g, data, body: .dispatched(isa)).output
            for oy in 0 ..< 6 {
                for ox in 0 ..< 9 {
                    let nanExpected = (1 ... 3).contains(oy) && (3 ... 5).contains(ox)
                    #expect(output[(oy * 9 + ox) * 16 + 3].isNaN == nanExpected, "\(isa) \(activation) (\(oy), \(ox))")
                    let infinite = output[(oy * 9 + ox) * 16 + 5]
                    #expect(!infinite.isNaN, "\(isa) \(activation)")
                    if oy <= 1 && ox <= 1 {
                        #expect(infinite == (activation == .relu6 ? 6 : .infinity), "\(isa) \(activation)")
                    }
                }
            }
        }
    }
}
