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
}
