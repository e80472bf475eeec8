import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ArgReduce``, ``Cumulative``, ``TopK`` and ``Take`` through their kernels on random tensors of
/// ranks 1 to 5 (after the batch axis), along every axis, against naive float64 references that
/// walk each item by multi-index.
@Suite("Axis and indexing kernels")
struct AxisKernelTests {
    /// Runs `layer` on `batch` items of `values` (each of `shape`) with `parameters` and returns the output.
    static func run(_ layer: any Layer, _ values: [Float], batch: Int, shape: Shape,
                    parameters: [ParameterKind: ParameterData] = [:]) throws -> Tensor {
        try runLayerKernel(layer, [values], batch: batch, shapes: [shape], parameters: parameters)
    }

    /// The values of one item along `axis` (0-based over the item's axes) through the position `at`.
    static func line(_ values: ArraySlice<Float>, dims: [Int], axis: Int, at index: [Int]) -> [Double] {
        (0 ..< dims[axis]).map { k in
            var i = index
            i[axis] = k
            return Double(values[values.startIndex + zip(i, dims).reduce(0) { $0 * $1.1 + $1.0 }])
        }
    }

    /// Every multi-index of `dims`, row-major.
    static func indices(_ dims: [Int]) -> [[Int]] {
        var result: [[Int]] = [[]]
        for extent in dims { result = result.flatMap { prefix in (0 ..< extent).map { prefix + [$0] } } }
        return result
    }

    /// A random shape of rank 1 to 5, values with ties (steps of 0.5), and an axis.
    static func randomCase(_ rng: inout RefRandom) -> (dims: [Int], batch: Int, values: [Float], axis: Int) {
        let dims = (0 ..< rng.int(1 ... 5)).map { _ in rng.pick([1, 2, 3, 4, 7]) }
        let batch = rng.pick([1, 2])
        let values = (0 ..< batch * dims.reduce(1, *)).map { _ in Float(rng.int(-6 ... 6)) * 0.5 }
        return (dims, batch, values, rng.int(0 ... dims.count - 1))
    }

    @Test("ArgReduce: the first (or last) best position along every axis, kept or dropped")
    func argReduce() throws {
        var rng = RefRandom(seed: 62_000)
        for _ in 0 ..< 60 {
            let (dims, batch, values, axis) = Self.randomCase(&rng)
            let (largest, last, keep) = (rng.bool(), rng.bool(), rng.bool())
            let layer = ArgReduce(largest ? .argMax : .argMin, axis: rng.bool() ? axis + 1 : axis - dims.count,
                                  keepDimensions: keep, selectLastIndex: last)
            let out = try Self.run(layer, values, batch: batch, shape: Shape(unchecked: dims))
            var reducedDims = dims
            reducedDims[axis] = 1
            var expected: [Float] = []
            let count = dims.reduce(1, *)
            for item in 0 ..< batch {
                for index in Self.indices(reducedDims) {
                    let xs = Self.line(values[item * count ..< (item + 1) * count], dims: dims, axis: axis, at: index)
                    let best = largest ? xs.max()! : xs.min()!
                    expected.append(Float(last ? xs.lastIndex(of: best)! : xs.firstIndex(of: best)!))
                }
            }
            #expect(out.values == expected, "\(layer.operation) \(dims) axis \(axis) last \(last)")
            #expect(out.shape.dimensions == (keep ? reducedDims : dims.enumerated().filter { $0.offset != axis }.map(\.element)))
        }
    }

    @Test("Cumulative: running sums and products, exclusive or not, forward or reversed")
    func cumulative() throws {
        var rng = RefRandom(seed: 62_001)
        for _ in 0 ..< 60 {
            let (dims, batch, values, axis) = Self.randomCase(&rng)
            let (product, exclusive, reverse) = (rng.bool(), rng.bool(), rng.bool())
            let layer = Cumulative(product ? .product : .sum, axis: axis + 1, exclusive: exclusive, reverse: reverse)
            let out = try Self.run(layer, values, batch: batch, shape: Shape(unchecked: dims))
            let count = dims.reduce(1, *)
            var worst = 0.0
            for item in 0 ..< batch {
                for index in Self.indices(dims) {
                    let xs = Self.line(values[item * count ..< (item + 1) * count], dims: dims, axis: axis, at: index)
                    let k = index[axis]
                    let taken = reverse ? Array(xs[(exclusive ? k + 1 : k)...]) : Array(xs[..<(exclusive ? k : k + 1)])
                    let want = product ? taken.reduce(1, *) : taken.reduce(0, +)
                    let got = Double(out.values[item * count + zip(index, dims).reduce(0) { $0 * $1.1 + $1.0 }])
                    worst = max(worst, abs(got - want) / max(1, abs(want)))
                }
            }
            #expect(worst < 1e-5, "\(layer.operation) \(dims) axis \(axis) exclusive \(exclusive) reverse \(reverse): \(worst)")
        }
    }

    @Test("TopK: the k best values and their positions, ties to the lower position")
    func topK() throws {
        var rng = RefRandom(seed: 62_002)
        for _ in 0 ..< 60 {
            let (dims, batch, values, axis) = Self.randomCase(&rng)
            let k = rng.int(1 ... dims[axis]), largest = rng.bool()
            let shape = Shape(unchecked: dims)
            let gotValues = try Self.run(TopK(k: k, axis: axis + 1, largest: largest, result: .values), values, batch: batch, shape: shape)
            let gotIndices = try Self.run(TopK(k: k, axis: axis + 1, largest: largest, result: .indices), values, batch: batch, shape: shape)
            var outDims = dims
            outDims[axis] = k
            let count = dims.reduce(1, *), outCount = outDims.reduce(1, *)
            var wantValues = [Float](repeating: 0, count: batch * outCount), wantIndices = wantValues
            for item in 0 ..< batch {
                var across = dims
                across[axis] = 1
                for index in Self.indices(across) {
                    let xs = Self.line(values[item * count ..< (item + 1) * count], dims: dims, axis: axis, at: index)
                    let order = xs.indices.sorted { xs[$0] != xs[$1] ? (largest ? xs[$0] > xs[$1] : xs[$0] < xs[$1]) : $0 < $1 }
                    for slot in 0 ..< k {
                        var at = index
                        at[axis] = slot
                        let flat = item * outCount + zip(at, outDims).reduce(0) { $0 * $1.1 + $1.0 }
                        wantValues[flat] = Float(xs[order[slot]])
                        wantIndices[flat] = Float(order[slot])
                    }
                }
            }
            #expect(gotValues.values == wantValues, "values \(dims) axis \(axis) k \(k) largest \(largest)")
            #expect(gotIndices.values == wantIndices, "indices \(dims) axis \(axis) k \(k) largest \(largest)")
        }
    }

    @Test("Take copies each item's values by position, zero for -1, and refuses a position outside the input")
    func take() throws {
        var rng = RefRandom(seed: 62_003)
        for _ in 0 ..< 20 {
            let (dims, batch, values, _) = Self.randomCase(&rng)
            let count = dims.reduce(1, *)
            let outDims = (0 ..< rng.int(1 ... 4)).map { _ in rng.pick([1, 2, 3, 5]) }
            let positions = (0 ..< outDims.reduce(1, *)).map { _ in rng.int(-1 ... count - 1) }
            let out = try Self.run(Take(shape: outDims), values, batch: batch, shape: Shape(unchecked: dims),
                                   parameters: [.indices: ParameterData(positions.map(Float.init))])
            let expected = (0 ..< batch).flatMap { item in positions.map { $0 < 0 ? Float(0) : values[item * count + $0] } }
            #expect(out.values == expected && out.shape.dimensions == outDims)
        }
        #expect {
            _ = try Self.run(Take(shape: [2]), [1, 2, 3], batch: 1, shape: Shape(unchecked: [3]), parameters: [.indices: ParameterData([0, 3])])
        } throws: { error in
            (error as? AnvilError)?.code == .invalidParameter && (error as? AnvilError)?.message.contains("indices[1] is 3.0") == true
        }
    }

    @Test("TopK with k beyond the axis and an axis on the batch are errors naming them")
    func refusals() {
        #expect { _ = try TopK(k: 4, axis: -1).outputShape(for: [Shape(unchecked: [2, 3])]) } throws: { error in
            (error as? AnvilError)?.message.contains("k 4 must be in 1...3") == true
        }
        #expect { _ = try ArgReduce(.argMax, axis: 0).outputShape(for: [Shape(unchecked: [2, 3])]) } throws: { error in
            (error as? AnvilError)?.code == .invalidOption
        }
    }
}
