import Foundation
import Testing
@testable import AnvilONNX
@testable import AnvilTestSupport

/// The paths that move large weights without extra copies: the strided transpose (flatten
/// reorders, Gemm's transB = 0, MatMul), and the blob `write(to:)` streams a megabyte at a time.
@Suite struct ONNXLargeTensorTests {
    /// NumPy's transpose by index arithmetic, one multi-index at a time: the reference.
    static func naiveTranspose(_ values: [Float], shape: [Int], permutation: [Int]) -> [Float] {
        let newShape = permutation.map { shape[$0] }
        let count = newShape.reduce(1, *)
        var strides = [Int](repeating: 1, count: shape.count)
        for axis in stride(from: shape.count - 2, through: 0, by: -1) { strides[axis] = strides[axis + 1] * shape[axis + 1] }
        return (0 ..< count).map { flat in
            var rest = flat, offset = 0
            for axis in stride(from: newShape.count - 1, through: 0, by: -1) {
                offset += (rest % newShape[axis]) * strides[permutation[axis]]
                rest /= newShape[axis]
            }
            return values[offset]
        }
    }

    /// Every permutation of ranks 1–4 (and a rank-5 one, a 1-wide axis, an empty axis) matches.
    @Test(arguments: [[7], [3, 5], [2, 3, 4], [2, 3, 4, 5], [4, 1, 3, 2], [2, 0, 3]])
    func transposeMatchesIndexArithmetic(_ shape: [Int]) throws {
        let count = shape.reduce(1, *)
        let values = (0 ..< count).map { Float($0) * 0.5 - 3 }
        func permutations(_ items: [Int]) -> [[Int]] {
            items.count <= 1 ? [items] : items.flatMap { first in permutations(items.filter { $0 != first }).map { [first] + $0 } }
        }
        for permutation in permutations(Array(0 ..< shape.count)) {
            let result = try ConstantTensor(shape: shape, floats: values).transposed(permutation)
            #expect(result.shape == permutation.map { shape[$0] })
            #expect(result.floats == Self.naiveTranspose(values, shape: shape, permutation: permutation), "\(shape) by \(permutation)")
            let integers = try ConstantTensor(shape: shape, integers: values.map { Int64($0 * 2) }).transposed(permutation)
            #expect(integers.floats == Self.naiveTranspose(values, shape: shape, permutation: permutation).map { $0 * 2 })
        }
        let five = [2, 3, 1, 2, 3], fiveValues = (0 ..< 36).map(Float.init), order = [4, 0, 3, 1, 2]
        #expect(try ConstantTensor(shape: five, floats: fiveValues).transposed(order).floats
                == Self.naiveTranspose(fiveValues, shape: five, permutation: order))
    }

    /// A weight of 600,000 values (more than two of `write(to:)`'s chunks) lands in weights.bin
    /// as little-endian float32, exactly the values the file holds.
    @Test func aLargeTensorIsWrittenWhole() throws {
        let weights = (0 ..< 600_000).map { Float(($0 * 7919) % 10_007) / 1000 - 5 }
        let model = ONNXHostileFileTests.model(weightDims: [300_000, 2, 1, 1], weights: weights)
        let conversion = try ONNXConversion(serialized: try model.serializedData())
        let directory = try Fixtures.temporaryDirectory(prefix: "onnx-large-tensor")
        defer { try? FileManager.default.removeItem(at: directory) }
        try conversion.write(to: directory)
        let blob = try Data(contentsOf: directory.appendingPathComponent("weights.bin"))
        #expect(blob.count == weights.count * 4)
        let written = blob.withUnsafeBytes { bytes in
            (0 ..< weights.count).map { Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
        }
        #expect(written == weights)
    }

    /// Raw bytes decoded a stretch at a time: the stretches handed back tile the bytes in
    /// order (so every page can be released once its values are read), and every
    /// value across the stretches' edges is the one its bytes hold, for each element size.
    @Test(arguments: [(Int32(1), 4), (Int32(10), 2), (Int32(16), 2), (Int32(7), 8), (Int32(3), 1)])
    func rawBytesDecodeInStretches(_ type: Int32, _ size: Int) throws {
        let count = (2 << 20) / size + 12_345  // over two stretches of a megabyte
        let bytes = (0 ..< count * size).map { UInt8(truncatingIfNeeded: ($0 * 131 + $0 / 7) & 0x7F) }
        var stretches: [Range<Int>] = []
        let constant = try bytes.withUnsafeBytes { raw in
            try TensorDecoding.fromRaw(raw, type: type, shape: [count]) { stretch in
                let start = stretch.baseAddress! - raw.baseAddress!
                stretches.append(start ..< start + stretch.count)
            }
        }
        #expect(stretches.count > 1)
        #expect(stretches.first?.lowerBound == 0 && stretches.last?.upperBound == bytes.count)
        #expect(zip(stretches, stretches.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
        // Each value from its own bytes, assembled little-endian here (half floats through the
        // converter's own halfToFloat, tested apart: the stretches are what is tested here).
        func word(_ i: Int) -> UInt64 {
            (0 ..< size).reduce(UInt64(0)) { $0 | UInt64(bytes[i * size + $1]) << (8 * UInt64($1)) }
        }
        switch type {
        case 1: #expect(constant.floats.enumerated().allSatisfy { $1.bitPattern == UInt32(word($0)) })
        case 10, 16:
            #expect(constant.floats.enumerated().allSatisfy {
                $1.bitPattern == TensorDecoding.halfToFloat(UInt16(word($0)), brain: type == 16).bitPattern
            })
        case 7: #expect(try constant.integers().enumerated().allSatisfy { $1 == Int(Int64(bitPattern: word($0))) })
        default: #expect(try constant.integers().enumerated().allSatisfy { $1 == Int(Int8(bitPattern: UInt8(word($0)))) })
        }
    }
}
