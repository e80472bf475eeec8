import CAnvilKernels
import CAnvilKernelsEmulated
import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Dense layers through each of their three paths — the small-batch C kernel (a lone image,
/// and batches under 16 of layers with 4 M weights or more), the packed direct-convolution
/// kernel (batches of 2 or more of smaller layers) and `sgemm` (larger batches of the large
/// layers) — against the naive reference, with every C body the CPU runs (scalar, AVX2,
/// AVX-512); the small-batch kernel's bodies also directly at every batch it serves.
@Suite("Dense kernel paths")
struct DenseKernelTests {
    /// Runs a `DenseKernel` built directly (so a test can choose the C body) on `x`.
    static func runDense(_ x: RefTensor, weights: [Float], bias: [Float], outputs: Int, activation: ActivationFunction,
                         isa: InstructionSet) -> [Float] {
        let inputs = x.h * x.w * x.c
        let kernelWeights = KernelWeights(source: ParameterData(weights), reordered: nil, bias: ParameterData(bias),
                                          outputs: outputs, weightsPerOutput: inputs, affine: nil)
        var kernel = DenseKernel(inputs: inputs, outputs: outputs, weights: kernelWeights, activation: activation,
                                 channelsFirstInput: nil)
        kernel.instructionSet = isa
        return refRunKernel(kernel, input: x.floats, batch: x.n, inputShape: x.shape,
                            outputShape: Shape(height: 1, width: 1, channels: outputs))
    }

    @Test("Every batch size from 1 to 20, and 37, on a small layer (small-batch path at 1, packed from 2)",
          arguments: refInstructionSets)
    func smallLayer(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var random = RefRandom(seed: 4_242)
        // 3 × 3 × 11 = 99 inputs (not a multiple of 8), 37 outputs (not a multiple of 16).
        let weights = random.floats(37 * 99), bias = random.floats(37)
        for (index, batch) in (Array(1 ... 20) + [37]).enumerated() {
            let activation = refAllActivations[index % refAllActivations.count]
            let x = random.tensor(n: batch, h: 3, w: 3, c: 11)
            let actual = Self.runDense(x, weights: weights, bias: bias, outputs: 37, activation: activation, isa: isa)
            let expected = Naive.dense(x, weights: weights, bias: bias, neurons: 37, activation: activation)
            var worst = 0.0
            for (a, e) in zip(actual, expected.v) { worst = refWorst(worst, abs(Double(a) - e) / max(1, abs(e))) }
            #expect(worst <= 1e-5, "\(isa) batch \(batch), \(activation): worst error \(worst)")
        }
    }

    @Test("Through a compiled model, batches 1–20 match the reference")
    func throughModel() throws {
        var random = RefRandom(seed: 4_343)
        let weights = random.floats(21 * 50), bias = random.floats(21)
        for batch in 1 ... 20 {
            let x = random.tensor(n: batch, h: 1, w: 5, c: 10)
            let actual = try refRun(x, parameters: ["fc_W": weights, "fc_b": bias]) {
                $0 --> Dense(neurons: 21, activation: .relu, name: "fc")
            }
            refExpectClose(actual, Naive.dense(x, weights: weights, bias: bias, neurons: 21, activation: .relu), "batch \(batch)")
        }
    }

    @Test("A 1×1 convolution of a 1×1 input (a classifier head) runs as a Dense kernel and matches the naive convolution")
    func singlePixelConvolution() throws {
        var random = RefRandom(seed: 4_444)
        let weights = random.floats(37 * 99), bias = random.floats(37)
        let g = try WindowGeometry(input: Shape(height: 1, width: 1, channels: 99), kernel: (1, 1), stride: (1, 1),
                                   dilation: (1, 1), padding: .valid)
        #expect(g.isSinglePixel)
        for batch in [1, 5, 16, 40] {
            let x = random.tensor(n: batch, h: 1, w: 1, c: 99)
            let actual = try refRun(x, parameters: ["head_W": weights, "head_b": bias]) {
                $0 --> Convolution(kernel: (1, 1), channels: 37, padding: .valid, activation: .relu6, name: "head")
            }
            let expected = Naive.convolution(x, weights: weights, bias: bias, outputChannels: 37, kernel: (1, 1),
                                             padding: .valid, activation: .relu6)
            refExpectClose(actual, expected, "batch \(batch)")
        }
    }

    @Test("A layer too large to keep a packed copy runs sgemm at batch 16 and the small-batch kernel at 3")
    func largeLayer() throws {
        let inputs = 2_001, outputs = 2_000
        #expect(inputs * outputs >= DenseKernel.packedWeightLimit)
        var random = RefRandom(seed: 77)
        let weights = random.floats(outputs * inputs, -0.05, 0.05), bias = random.floats(outputs)
        for batch in [16, 3] {
            let x = random.tensor(n: batch, h: 1, w: 1, c: inputs)
            let actual = try refRun(x, parameters: ["big_W": weights, "big_b": bias]) {
                $0 --> Dense(neurons: outputs, activation: .relu, name: "big")
            }
            refExpectClose(actual, Naive.dense(x, weights: weights, bias: bias, neurons: outputs, activation: .relu),
                           "batch \(batch)")
        }
    }

    /// `anvil_dense_rows`'s arguments for `batch` images of `inputs` through `outputs` rows, with
    /// ReLU6's clamp, rows split in two calls at `cut` as two threads would.
    static func runBody(_ body: (UnsafePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>, UnsafeMutablePointer<Float>,
                                 Int32, Int32, Int32, Int32, Int32, Float, Float) -> Void,
                        weights: [Float], x: [Float], bias: [Float], inputs: Int, outputs: Int, batch: Int) -> [Float] {
        var y = [Float](repeating: .nan, count: batch * outputs)
        let cut = Int32(outputs / 3)
        weights.withUnsafeBufferPointer { w in
            x.withUnsafeBufferPointer { xp in
                bias.withUnsafeBufferPointer { b in
                    y.withUnsafeMutableBufferPointer { yp in
                        body(w.baseAddress!, xp.baseAddress!, b.baseAddress!, yp.baseAddress!, Int32(inputs), Int32(outputs),
                             Int32(batch), 0, cut, 0, 6)
                        body(w.baseAddress!, xp.baseAddress!, b.baseAddress!, yp.baseAddress!, Int32(inputs), Int32(outputs),
                             Int32(batch), cut, Int32(outputs), 0, 6)
                    }
                }
            }
        }
        return y
    }

    /// Input counts on and off the 16-lane steps (the masked tail: 1-15 left, none, fewer than
    /// one step), every batch 1-15 (each block shape and leftover), row counts off every block.
    static let avx512Cases: [(inputs: Int, outputs: Int)] = [(99, 37), (64, 53), (7, 29), (3136, 30), (250, 61)]

    @Test("Each small-batch body matches the float64 reference at every batch 1-15", arguments: refInstructionSets)
    func smallBatchBody(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var random = RefRandom(seed: 4_747)
        for (inputs, outputs) in Self.avx512Cases {
            let weights = random.floats(outputs * inputs), bias = random.floats(outputs)
            for batch in 1 ..< DenseKernel.smallBatch {
                let x = random.tensor(n: batch, h: 1, w: 1, c: inputs)
                let actual = Self.runBody({ anvil_dense_rows(isa.cValue, $0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10) },
                                          weights: weights, x: x.floats, bias: bias, inputs: inputs, outputs: outputs, batch: batch)
                let worst = Self.worstScaledError(actual, x: x, weights: weights, bias: bias, inputs: inputs, outputs: outputs)
                #expect(worst <= 1e-6, "\(isa) \(inputs) → \(outputs), batch \(batch): worst error \(worst)")
            }
        }
    }

    /// The largest error of `actual` against the float64 reference with ReLU6, each measured
    /// against its sum's scale (``Naive/denseScales(_:weights:bias:neurons:)``).
    static func worstScaledError(_ actual: [Float], x: RefTensor, weights: [Float], bias: [Float], inputs: Int,
                                 outputs: Int) -> Double {
        let expected = Naive.dense(x, weights: weights, bias: bias, neurons: outputs, activation: .relu6)
        let scales = Naive.denseScales(x, weights: weights, bias: bias, neurons: outputs)
        var worst = 0.0
        for (index, scale) in scales.enumerated() {
            worst = refWorst(worst, abs(Double(actual[index]) - expected.v[index]) / scale)
        }
        return worst
    }

    @Test("The AVX-512 small-batch body's own source on emulated intrinsics matches the float64 reference, batches 1-15")
    func emulatedAVX512() throws {
        try #require(anvil_emulated_bodies_available() == 1, "the emulated bodies are built on x86-64 only")
        var random = RefRandom(seed: 4_545)
        for (inputs, outputs) in Self.avx512Cases {
            let weights = random.floats(outputs * inputs), bias = random.floats(outputs)
            for batch in 1 ..< DenseKernel.smallBatch {
                let x = random.tensor(n: batch, h: 1, w: 1, c: inputs)
                let actual = Self.runBody({ anvil_dense_rows_avx512_emulated($0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10) },
                                          weights: weights, x: x.floats, bias: bias, inputs: inputs, outputs: outputs, batch: batch)
                let worst = Self.worstScaledError(actual, x: x, weights: weights, bias: bias, inputs: inputs, outputs: outputs)
                #expect(worst <= 1e-6, "\(inputs) → \(outputs), batch \(batch): worst error \(worst)")
            }
        }
    }

    @Test("The real AVX-512 small-batch body equals the emulated one bit for bit")
    func realAVX512() throws {
        try refRequireSupported(.avx512)
        var random = RefRandom(seed: 4_646)
        for (inputs, outputs) in Self.avx512Cases {
            let weights = random.floats(outputs * inputs), bias = random.floats(outputs)
            for batch in 1 ..< DenseKernel.smallBatch {
                let x = random.floats(batch * inputs)
                let real = Self.runBody({ anvil_dense_rows(ANVIL_ISA_AVX512, $0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10) },
                                        weights: weights, x: x, bias: bias, inputs: inputs, outputs: outputs, batch: batch)
                let emulated = Self.runBody({ anvil_dense_rows_avx512_emulated($0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10) },
                                            weights: weights, x: x, bias: bias, inputs: inputs, outputs: outputs, batch: batch)
                #expect(refBitDifferences(real, emulated) == 0, "\(inputs) → \(outputs), batch \(batch)")
            }
        }
    }
}
