import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``Reduce`` through its kernel: every operation over random subsets of the axes of tensors of
/// ranks 1 to 6 (after the batch axis), kept or dropped, against a naive float64 reduction.
@Suite("Reduce kernel")
struct ReduceKernelTests {
    /// The float64 reduction of `values` (one item of `dims`) over `reduced` (0-based item axes).
    static func naive(_ values: [Float], dims: [Int], reduced: Set<Int>, _ operation: ReduceOperation) -> [Double] {
        let strides = (0 ..< dims.count).map { k in dims[(k + 1)...].reduce(1, *) }
        let keptAxes = dims.indices.filter { !reduced.contains($0) }
        let keptCount = keptAxes.reduce(1) { $0 * dims[$1] }
        var groups = [[Double]](repeating: [], count: keptCount)
        for flat in 0 ..< values.count {
            var group = 0
            for axis in keptAxes { group = group * dims[axis] + (flat / strides[axis]) % dims[axis] }
            groups[group].append(Double(values[flat]))
        }
        return groups.map { xs in
            switch operation {
            case .sum: return xs.reduce(0, +)
            case .mean: return xs.reduce(0, +) / Double(xs.count)
            case .maximum: return xs.max()!
            case .minimum: return xs.min()!
            case .product: return xs.reduce(1, *)
            case .l1: return xs.reduce(0) { $0 + abs($1) }
            case .l2: return xs.reduce(0) { $0 + $1 * $1 }.squareRoot()
            case .logSumExp: return Foundation.log(xs.reduce(0) { $0 + Foundation.exp($1) })
            case .sumSquare: return xs.reduce(0) { $0 + $1 * $1 }
            }
        }
    }

    /// Runs `layer` on `batch` items of `values` and returns the output tensor.
    static func run(_ layer: Reduce, _ values: [Float], batch: Int, shape: Shape) throws -> Tensor {
        try runLayerKernel(layer, [values], batch: batch, shapes: [shape])
    }

    @Test("Every operation over random axes of ranks 1 to 6, kept or dropped, against float64")
    func randomAxes() throws {
        var rng = RefRandom(seed: 61_000)
        for operation in ReduceOperation.allCases {
            for _ in 0 ..< 12 {
                let rank = rng.int(1 ... 6)
                let dims = (0 ..< rank).map { _ in rng.pick([1, 2, 3, 5, 8, 17]) }
                var reduced = Set((0 ..< rank).filter { _ in rng.bool() })
                if reduced.isEmpty { reduced.insert(rng.int(0 ... rank - 1)) }
                let keep = rng.bool()
                let batch = rng.pick([1, 3])
                let count = dims.reduce(1, *)
                // Products stay in range with magnitudes near 1.
                let values = (0 ..< batch * count).map { _ in
                    operation == .product ? rng.float(0.8, 1.25) * (rng.bool() ? 1 : -1) : rng.float(-2, 2)
                }
                let axes = reduced.sorted().map { rng.bool() ? $0 + 1 : $0 - rank }
                let layer = Reduce(operation, axes: axes, keepDimensions: keep)
                let actual = try Self.run(layer, values, batch: batch, shape: Shape(unchecked: dims))
                let expectedDims = dims.indices.compactMap { reduced.contains($0) ? (keep ? 1 : nil) : dims[$0] }
                #expect(actual.shape.dimensions == expectedDims, "\(operation) \(dims) over \(reduced)")
                var expected: [Double] = []
                for item in 0 ..< batch {
                    expected += Self.naive(Array(values[item * count ..< (item + 1) * count]), dims: dims, reduced: reduced, operation)
                }
                let worst = zip(actual.values, expected).map { abs(Double($0) - $1) / max(1, abs($1)) }.max() ?? 0
                #expect(worst < 2e-5, "\(operation) \(dims) over \(reduced) keep \(keep): relative error \(worst)")
            }
        }
    }

    @Test("The maximum and minimum of values with a NaN are NaN")
    func nanPropagates() throws {
        let values: [Float] = [1, .nan, 3, 4, 5, 6]
        for operation in [ReduceOperation.maximum, .minimum] {
            let out = try Self.run(Reduce(operation, axes: [-1]), values, batch: 1, shape: Shape(unchecked: [2, 3]))
            #expect(out.values[0].isNaN && out.values[1] == (operation == .maximum ? 6 : 4))
        }
    }

    @Test("No axes, an axis twice, the batch axis or one out of range is an error naming it")
    func refusals() {
        let shape = Shape(unchecked: [2, 3])
        for (axes, fragment) in [([Int](), "at least one"), ([1, -2], "twice"), ([0], "out of range"), ([3], "out of range")] {
            #expect {
                _ = try Reduce(.sum, axes: axes).outputShape(for: [shape])
            } throws: { error in
                (error as? AnvilError)?.code == .invalidOption && (error as? AnvilError)?.message.contains(fragment) == true
            }
        }
    }
}
