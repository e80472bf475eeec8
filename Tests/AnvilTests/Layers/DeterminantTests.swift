import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``Determinant`` against a float64 Laplace (cofactor) expansion written here: single matrices
/// and batches of them, orders 1 to 6, matrices that need row swaps, singular ones, and the
/// errors for inputs that are not square matrices.
@Suite struct DeterminantTests {
    /// The determinant of the `m × m` matrix `a` (row-major) by expansion along the first row.
    static func laplace(_ a: [Double], _ m: Int) -> Double {
        if m == 1 { return a[0] }
        var sum = 0.0
        for column in 0 ..< m {
            var minor: [Double] = []
            for row in 1 ..< m { for k in 0 ..< m where k != column { minor.append(a[row * m + k]) } }
            sum += (column % 2 == 0 ? 1 : -1) * a[column] * laplace(minor, m - 1)
        }
        return sum
    }

    /// Runs `Determinant` on `values` (per item `dims`, `batch` items).
    static func run(_ dims: [Int], batch: Int, _ values: [Float]) throws -> Tensor {
        let x = Input(shape: try Shape(dimensions: dims))
        let model = try Model(input: x, output: x --> Determinant())
        try model.compile(from: ArrayParameterSource([:]))
        return try model.predict(Tensor(batch: batch, shape: try Shape(dimensions: dims), values: values))
    }

    @Test("Determinants match a float64 cofactor expansion", arguments: [[1, 1], [2, 2], [3, 3, 3], [4, 4], [2, 3, 5, 5], [6, 6]])
    func matchesReference(_ dims: [Int]) throws {
        var rng = RefRandom(seed: dims.reduce(11, *))
        let batch = 2, m = dims.last!, count = dims.reduce(1, *)
        var values = (0 ..< batch * count).map { _ in rng.float(-2, 2) }
        if m >= 2 {
            // A zero pivot in the first matrix (row swaps needed) and a singular second one.
            values[0] = 0
            for k in 0 ..< m { values[count + m + k] = values[count + k] }
        }
        let out = try Self.run(dims, batch: batch, values)
        let matrices = batch * count / (m * m)
        #expect(out.shape.dimensions == Array(dims.dropLast(2)) && out.values.count == matrices)
        for k in 0 ..< matrices {
            let want = Self.laplace(values[k * m * m ..< (k + 1) * m * m].map(Double.init), m)
            let got = Double(out.values[k])
            #expect(abs(got - want) <= 1e-6 * max(1, abs(want)), "matrix \(k) of \(dims): \(got), expected \(want)")
        }
    }

    @Test("A scaled identity and a permutation give exact determinants")
    func exactCases() throws {
        let identity: [Float] = [2, 0, 0, 0, 2, 0, 0, 0, 2], permutation: [Float] = [0, 1, 0, 1, 0, 0, 0, 0, 1]
        let out = try Self.run([3, 3], batch: 2, identity + permutation)
        #expect(out.values == [8, -1])
    }

    @Test("Inputs that are not square matrices are refused, naming the shape")
    func refusesNonSquare() throws {
        for dims in [[3], [2, 3], [4, 2, 3]] {
            let x = Input(shape: try Shape(dimensions: dims))
            #expect(throws: AnvilError.self, "\(dims)") { try Model(input: x, output: x --> Determinant()) }
        }
    }
}
