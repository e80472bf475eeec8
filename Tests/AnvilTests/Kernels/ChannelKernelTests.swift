import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// The per-channel affine map (an unfolded BatchNormalization, with its fused activation) and the
/// channel concatenation (with a fused shuffle too): every body the CPU runs against a float64 reference, over channel counts
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

    /// Inputs of `counts` channels over `rows` pixels; when `windowed`, each lies inside a wider
    /// buffer (as a folded channel slice reads the sliced tensor): the buffers the kernel reads,
    /// its windows, and each input's own values.
    static func inputs(_ counts: [Int], rows: Int, windowed: Bool, _ rng: inout RefRandom)
        -> (buffers: [[Float]], windows: [(first: Int, stride: Int)], values: [[Float]]) {
        var buffers: [[Float]] = [], windows: [(first: Int, stride: Int)] = [], values: [[Float]] = []
        for count in counts {
            let extra = windowed ? rng.int(0 ... 9) : 0, first = rng.int(0 ... extra), stride = count + extra
            let buffer = rng.floats(rows * stride, -8, 8)
            var own: [Float] = []
            for row in 0 ..< rows {
                let start: Int = row * stride + first
                own += buffer[start ..< start + count]
            }
            buffers.append(buffer)
            windows.append((first, stride))
            values.append(own)
        }
        return (buffers, windows, values)
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
                    worst = refWorst(worst, abs(Double(actual[i]) - expected) / max(1, abs(expected)))
                }
                // Rounding of scale · x (|scale · x| < 16: an ulp of 2e-6 at most) and of the sum, with
                // or without a fused multiply-add.
                #expect(worst <= 2e-6, "\(isa) \(channels) channels \(activation) prelu \(prelu): error \(worst)")
            }
        }
    }

    /// Runs the concatenation of inputs of `counts` channels (shuffled in `groups` groups if
    /// given; read from wider buffers when `windowed`; with an affine map and ReLU when `fused`)
    /// on `isa` over random rows, and compares it with the join computed here in float64: bit for
    /// bit without the affine map, within its rounding with it.
    static func checkConcatenation(_ counts: [Int], groups: Int?, windowed: Bool, fused: Bool, isa: InstructionSet,
                                   rows: (batch: Int, pixels: Int), _ rng: inout RefRandom, _ label: String) {
        let total = counts.reduce(0, +), g = groups ?? 1, k = total / g, rowCount = rows.batch * rows.pixels
        let (buffers, windows, inputs) = Self.inputs(counts, rows: rowCount, windowed: windowed, &rng)
        let scale = rng.floats(total, -2, 2), shift = rng.floats(total)
        var kernel = ConcatenateKernel(channels: counts, pixelsPerImage: rows.pixels, shuffleGroups: groups)
        if windowed { kernel.windows = windows }
        if fused {
            kernel.affine = (ParameterData(scale), ParameterData(shift))
            kernel.activation = .relu
        }
        kernel.instructionSet = isa
        let actual = Self.run(kernel, inputs: buffers, outputCount: rowCount * total, batch: rows.batch,
                              ranges: Self.ranges(rowCount, &rng))
        // Output channel i·g + j is joined channel j·k + i (i itself without a shuffle); the affine
        // map is given in the output's order.
        var expected = [Double](repeating: 0, count: rowCount * total)
        for row in 0 ..< rowCount {
            var joined: [Float] = []
            for (index, count) in counts.enumerated() { joined += inputs[index][row * count ..< (row + 1) * count] }
            for i in 0 ..< k { for j in 0 ..< g {
                let o = i * g + j, v = Double(joined[j * k + i])
                expected[row * total + o] = fused ? max(0, Double(scale[o]) * v + Double(shift[o])) : v
            } }
        }
        let context = "\(isa) \(label): \(counts) in \(g) groups × \(rowCount) rows, fused \(fused), windowed \(windowed)"
        if !fused {
            #expect(refBitDifferences(actual, expected.map(Float.init)) == 0, "\(context)")
            return
        }
        var worst = 0.0
        for (i, value) in expected.enumerated() { worst = refWorst(worst, abs(Double(actual[i]) - value) / max(1, value)) }
        // As in `channelAffine`: |scale · x| < 16.
        #expect(worst <= 2e-6, "\(context): error \(worst)")
    }

    @Test("Concatenation along channels of 1 to 9 inputs of any widths, read whole or from wider buffers, alone or with a fused affine map and ReLU",
          arguments: refInstructionSets)
    func concatenate(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 5252)
        for round in 0 ..< 40 {
            let counts = (0 ..< rng.int(1 ... 9)).map { _ in rng.pick([1, 2, 3, 7, 8, 13, 32, 40, 129]) }
            let rows = (batch: rng.int(1 ... 3), pixels: rng.int(1 ... (round < 20 ? 12 : 300)))
            Self.checkConcatenation(counts, groups: nil, windowed: round % 3 == 0, fused: round % 2 == 1, isa: isa,
                                    rows: rows, &rng, "round \(round)")
        }
    }

    @Test("Concatenation with a fused channel shuffle: two equal halves in 2 groups, and any inputs in any group count, read whole or from wider buffers, alone or with an affine map and ReLU",
          arguments: refInstructionSets)
    func concatenateShuffled(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 5353)
        for round in 0 ..< 40 {
            // Even rounds: ShuffleNet's halves woven in 2 groups; odd: inputs straddling groups.
            let counts: [Int], groups: Int
            if round % 2 == 0 {
                let half = rng.pick([1, 2, 7, 8, 9, 58, 116])
                counts = [half, half]
                groups = 2
            } else {
                counts = (0 ..< rng.int(2 ... 5)).map { _ in rng.pick([1, 2, 3, 7, 8, 13, 40]) }
                let total = counts.reduce(0, +)
                groups = rng.pick((1 ... total).filter { total % $0 == 0 })
            }
            let rows = (batch: rng.int(1 ... 3), pixels: rng.int(1 ... (round < 20 ? 12 : 300)))
            Self.checkConcatenation(counts, groups: groups, windowed: round % 3 == 0, fused: round % 4 >= 2, isa: isa,
                                    rows: rows, &rng, "round \(round)")
        }
    }
}
