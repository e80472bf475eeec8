import CAnvilKernels
import CAnvilKernelsEmulated
import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// `anvil_activation`: every function on every body this CPU runs, over a wide range of inputs,
/// against the float64 definition rounded to float32.
@Suite("Activation kernel")
struct ActivationKernelTests {
    /// Inputs from −100 to 100, densely over [−6, 6], tiny values, the range ends of exp,
    /// denormals, signed zeros and the piecewise functions' breakpoints.
    static let inputs: [Float] = {
        var values: [Float] = (0 ... 1600).map { -100 + Float($0) * 0.125 }
        values += (0 ... 2400).map { -6 + Float($0) * 0.005 }
        values += [1e-3, -1e-3, 1e-7, -1e-7, 1e-20, -1e-20, 1e-30, -1e-30, 2e-38, -2e-38, 1e-40, -1e-40, 0, -0.0]
        values += [86.5, -86.5, 86.7, -86.7, 87.4, -87.4, 88.3, -88.3, 88.7, -88.7, 88.8, -88.8, 89, -89, 150, -150]
        values += [0.625, -0.625, 0.6249, 0.6251, 0.999, 1.001, 3.99, 4.01, 0.7071, 1.4142, 19.9, 20.1, 44, 45, 60]
        values += [.infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude]
        return values + [0.3, 3]  // an odd count: the vector body's tail is covered
    }()

    @Test("Every activation over [−100, 100], tiny, huge and special inputs, within 1e-5 of float64",
          arguments: refInstructionSets)
    func everyFunction(_ isa: InstructionSet) throws {
        try refRequireSupported(isa)
        // A clip whose min exceeds its max (ONNX: every value is max) fixes the order of min and max.
        for f in refAllActivations + refIllConditionedActivations + refExactInputActivations + [.clip(min: 0.5, max: -0.3)] {
            var values = Self.inputs
            values.withUnsafeMutableBufferPointer { f.apply($0.baseAddress!, count: $0.count, instructionSet: isa) }
            let expected = Self.inputs.map { Double(Float(Naive.activate(f, Double($0)))) }
            let actual = try Tensor(batch: 1, shape: Shape(height: 1, width: 1, channels: values.count), values: values)
            refExpectClose(actual, RefTensor(n: 1, h: 1, w: 1, c: expected.count, v: expected), tolerance: 1e-5, "\(f) on \(isa)")
        }
    }

    @Test("Short arrays (1 to 17 values) and offsets: every length of the vector tail", arguments: refInstructionSets)
    func shortArrays(_ isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 45_000)
        for f: ActivationFunction in [.gelu, .silu, .tanh, .mish, .logarithm, .erf] {
            for count in 1 ... 17 {
                let x = (0 ..< count + 2).map { _ in rng.float(0.1, 4) }
                var values = x
                values.withUnsafeMutableBufferPointer { f.apply($0.baseAddress! + 1, count: count, instructionSet: isa) }
                #expect(values[0] == x[0] && values[count + 1] == x[count + 1], "\(f) wrote outside \(count) values on \(isa)")
                for i in 1 ... count {
                    let e = Naive.activate(f, Double(x[i]))
                    #expect(abs(Double(values[i]) - e) <= 1e-5 * max(1, abs(e)), "\(f)(\(x[i])) = \(values[i]), expected \(e) on \(isa)")
                }
            }
        }
    }

    /// The functions `x86_avx512/activation.c` computes itself (the others run the AVX2 body).
    static let avx512Functions: [ActivationFunction] = [.silu, .sigmoid, .hardSwish]

    /// `values` through the emulated AVX-512 body, from `offset`, `count` of them.
    static func emulated(_ f: ActivationFunction, _ values: [Float], offset: Int = 0, count: Int? = nil) -> [Float] {
        var values = values
        var function = f.cFunction
        values.withUnsafeMutableBufferPointer {
            anvil_activation_avx512_emulated(&function, $0.baseAddress! + offset, count ?? $0.count - offset)
        }
        return values
    }

    @Test("The AVX-512 body's own source on emulated intrinsics: within 1e-5 of float64, the AVX2 body's bits, every tail length")
    func emulatedAVX512() throws {
        try #require(anvil_emulated_bodies_available() == 1, "the emulated bodies are built on x86-64 only")
        for f in Self.avx512Functions {
            let actual = Self.emulated(f, Self.inputs)
            let expected = Self.inputs.map { Double(Float(Naive.activate(f, Double($0)))) }
            let tensor = try Tensor(batch: 1, shape: Shape(height: 1, width: 1, channels: actual.count), values: actual)
            refExpectClose(tensor, RefTensor(n: 1, h: 1, w: 1, c: expected.count, v: expected), tolerance: 1e-5, "\(f) emulated")
            // The same operations in the same order as the AVX2 body: the same bits.
            if InstructionSet.avx2.isSupported {
                var avx2 = Self.inputs
                avx2.withUnsafeMutableBufferPointer { f.apply($0.baseAddress!, count: $0.count, instructionSet: .avx2) }
                #expect(refBitDifferences(actual, avx2) == 0, "\(f): emulated AVX-512 and AVX2 differ")
            }
            // Every length of the masked tail, between guard values it must not touch.
            var rng = RefRandom(seed: 46_000)
            for count in 1 ... 33 {
                let x = (0 ..< count + 2).map { _ in rng.float(-8, 8) }
                let y = Self.emulated(f, x, offset: 1, count: count)
                #expect(y[0] == x[0] && y[count + 1] == x[count + 1], "\(f) wrote outside \(count) values")
                for i in 1 ... count {
                    let e = Naive.activate(f, Double(x[i]))
                    #expect(abs(Double(y[i]) - e) <= 1e-5 * max(1, abs(e)), "\(f)(\(x[i])) = \(y[i]), expected \(e)")
                }
            }
        }
    }

    @Test("The real AVX-512 body equals the emulated one bit for bit")
    func realAVX512() throws {
        try refRequireSupported(.avx512)
        for f in Self.avx512Functions {
            for count in [Self.inputs.count, 15, 16, 17] {
                var real = Self.inputs
                real.withUnsafeMutableBufferPointer { f.apply($0.baseAddress!, count: count, instructionSet: .avx512) }
                #expect(refBitDifferences(real, Self.emulated(f, Self.inputs, count: count)) == 0, "\(f), \(count) values")
            }
        }
    }
}
