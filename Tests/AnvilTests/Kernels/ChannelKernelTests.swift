import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// The per-channel affine map (an unfolded BatchNormalization, with its fused activation) and the
/// channel concatenation: every body the CPU runs against a float64 reference, over channel counts
/// around the vector widths and ranges that cross the kernels' chunks of pixels.
@Suite("Channel affine and concatenation kernels per instruction set")
struct ChannelKernelTests {
    /// Runs `kernel` on `inputs` (each `batch × pixels × channels[i]`) over pixel ranges split at
    /// `splits` (as threads would split them), into a NaN-filled output.
    static func run(_ kernel: some RangeKernel, inputs: [[Float]], outputCount: Int, batch: Int, ranges: [Range<Int>]) -> [Float] {
        var output = [Float](repeating: .nan, count: outputCount)
        let pointers = inputs.map { values -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: max(1, values.count))
            p.initialize(from: values, count: values.count)
            return p
        }
        defer { pointers.forEach { $0.deallocate() } }
        output.withUnsafeMutableBufferPointer { y in
            let io = KernelIO(inputs: pointers.map { UnsafePointer($0) }, output: y.baseAddress!, scratch: y.baseAddress!,
                              batch: batch, inputShapes: [], outputShape: Shape(height: 1, width: 1, channels: 1))
            for range in ranges { kernel.run(range, io) }
        }
        return output
    }

    /// `0..<rows` cut at two random points (one of the pieces may be empty).
    static func ranges(_ rows: Int, _ rng: inout RefRandom) -> [Range<Int>] {
        let a = rng.int(0 ... rows), b = rng.int(0 ... rows)
        return [0 ..< min(a, b), min(a, b) ..< max(a, b), max(a, b) ..< rows]
    }

    @Test("scale · x + shift per channel, then ReLU, ReLU6 or nothing; and PReLU", arguments: refInstructionSets)
    func channelAffine(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 5151)
        for channels in [1, 3, 7, 8, 9, 16, 33, 64, 200, 1_100] {
            for activation in [ActivationFunction.none, .relu, .relu6] {
                let prelu = activation == .none && channels % 2 == 1
                let batch = rng.int(1 ... 3), pixels = rng.int(1 ... 40)
                let x = rng.floats(batch * pixels * channels, -8, 8)
                let scale = rng.floats(channels, -2, 2), shift = rng.floats(channels, -1, 1)
                var kernel = ChannelAffineKernel(channels: channels, pixelsPerImage: pixels, scale: scale, shift: shift,
                                                 prelu: prelu, activation: activation)
                kernel.instructionSet = isa
                let actual = Self.run(kernel, inputs: [x], outputCount: x.count, batch: batch,
                                      ranges: Self.ranges(batch * pixels, &rng))
                var worst = 0.0
                for (i, value) in x.enumerated() {
                    let c = i % channels, v = Double(value)
                    var expected = prelu ? (v > 0 ? v : Double(scale[c]) * v) : Double(scale[c]) * v + Double(shift[c])
                    if activation == .relu { expected = max(0, expected) }
                    if activation == .relu6 { expected = min(6, max(0, expected)) }
                    worst = max(worst, abs(Double(actual[i]) - expected) / max(1, abs(expected)))
                }
                // Rounding of scale · x (|scale · x| < 16: an ulp of 2e-6 at most) and of the sum, with
                // or without a fused multiply-add.
                #expect(worst <= 2e-6, "\(isa) \(channels) channels \(activation) prelu \(prelu): error \(worst)")
            }
        }
    }

    @Test("Concatenation along channels of 1 to 9 inputs of any widths, alone or with a fused affine map and ReLU",
          arguments: refInstructionSets)
    func concatenate(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 5252)
        for round in 0 ..< 40 {
            let counts = (0 ..< rng.int(1 ... 9)).map { _ in rng.pick([1, 2, 3, 7, 8, 13, 32, 40, 129]) }
            let total = counts.reduce(0, +), batch = rng.int(1 ... 3), pixels = rng.int(1 ... (round < 20 ? 12 : 300))
            let inputs = counts.map { rng.floats(batch * pixels * $0, -8, 8) }
            let fused = round % 2 == 1
            let scale = rng.floats(total, -2, 2), shift = rng.floats(total)
            var kernel = ConcatenateKernel(channels: counts, pixelsPerImage: pixels)
            if fused {
                kernel.affine = (ParameterData(scale), ParameterData(shift))
                kernel.activation = .relu
            }
            kernel.instructionSet = isa
            let actual = Self.run(kernel, inputs: inputs, outputCount: batch * pixels * total, batch: batch,
                                  ranges: Self.ranges(batch * pixels, &rng))
            var joined: [Float] = []
            for row in 0 ..< batch * pixels {
                for (index, count) in counts.enumerated() { joined += inputs[index][row * count ..< (row + 1) * count] }
            }
            if !fused {
                #expect(refBitDifferences(actual, joined) == 0, "\(isa) round \(round): \(counts) × \(batch * pixels) rows")
                continue
            }
            var worst = 0.0
            for (i, value) in joined.enumerated() {
                let expected = max(0, Double(scale[i % total]) * Double(value) + Double(shift[i % total]))
                worst = max(worst, abs(Double(actual[i]) - expected) / max(1, expected))
            }
            // As in `channelAffine`: |scale · x| < 16.
            #expect(worst <= 2e-6, "\(isa) round \(round): \(counts) × \(batch * pixels) rows, fused: error \(worst)")
        }
    }
}
