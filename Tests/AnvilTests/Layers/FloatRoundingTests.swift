import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``FloatFormat/rounding(_:)`` and the ``FloatRounding`` layer against conversion vectors that
/// NumPy (float16) and PyTorch (bfloat16) computed (`Fixtures/float-rounding/vectors.tsv`,
/// written by `Scripts/fixtures/float_rounding_vectors.py`): ties to even in every binade,
/// overflow to infinity, subnormals, signed zeros, NaN and random bit patterns, bit for bit.
@Suite struct FloatRoundingTests {
    /// (input, float16 result, bfloat16 result) as float32 bit patterns.
    static func vectors() throws -> [(UInt32, UInt32, UInt32)] {
        let url = Fixtures.root.appendingPathComponent("float-rounding/vectors.tsv")
        return try String(contentsOf: url, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line in
            let fields = line.split(separator: "\t").map { UInt32($0, radix: 16)! }
            return (fields[0], fields[1], fields[2])
        }
    }

    /// Whether `got` is `want` bit for bit, or both are NaN.
    static func same(_ got: Float, _ want: UInt32) -> Bool {
        let expected = Float(bitPattern: want)
        return expected.isNaN ? got.isNaN : got.bitPattern == want
    }

    @Test("Rounding to float16 and bfloat16 matches NumPy's and PyTorch's conversions bit for bit")
    func matchesVectors() throws {
        let vectors = try Self.vectors()
        #expect(vectors.count > 2000)
        for (input, half, brain) in vectors {
            let x = Float(bitPattern: input)
            #expect(Self.same(FloatFormat.float16.rounding(x), half), "float16 of \(x) (\(String(input, radix: 16)))")
            #expect(Self.same(FloatFormat.roundingToFloat16Bits(x), half), "float16 by bits of \(x) (\(String(input, radix: 16)))")
            #expect(Self.same(FloatFormat.bfloat16.rounding(x), brain), "bfloat16 of \(x) (\(String(input, radix: 16)))")
        }
    }

    @Test("The layer rounds every element of a batch, split over blocks", arguments: FloatFormat.allCases)
    func layerRounds(_ format: FloatFormat) throws {
        let vectors = try Self.vectors()
        let count = 20_000
        let values = (0 ..< 2 * count).map { Float(bitPattern: vectors[$0 % vectors.count].0) }
        let x = Input(shape: .vector(count))
        let model = try Model(input: x, output: x --> FloatRounding(to: format))
        try model.compile(from: ArrayParameterSource([:]))
        let out = try model.predict(Tensor(batch: 2, shape: .vector(count), values: values))
        #expect(out.shape.elementType == .float32)
        let bad = (0 ..< values.count).filter { i in
            let v = vectors[i % vectors.count]
            return !Self.same(out.values[i], format == .float16 ? v.1 : v.2)
        }
        #expect(bad.isEmpty, "\(bad.count) of \(values.count) differ, first at \(bad.first ?? -1)")
    }
}
