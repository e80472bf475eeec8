import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``Select`` through its kernel: masks, x and y of broadcasting shapes (one of them possibly
/// the constant), batches of 1 and 3, against a reference that walks the output by multi-index.
@Suite("Select kernel")
struct SelectKernelTests {
    /// The value of an operand of `dims` (right-aligned, extent 1 repeated) at output multi-index `index`.
    static func at(_ values: ArraySlice<Float>, _ dims: [Int], _ index: [Int]) -> Float {
        let aligned = Array(index.suffix(dims.count))
        let flat = zip(aligned, dims).reduce(0) { $0 * $1.1 + ($1.1 == 1 ? 0 : $1.0) }
        return values[values.startIndex + flat]
    }

    @Test("Every operand broadcast, the constant in each position, against a multi-index walk")
    func randomShapes() throws {
        var rng = RefRandom(seed: 63_000)
        for trial in 0 ..< 40 {
            let outDims = (0 ..< rng.int(1 ... 4)).map { _ in rng.pick([1, 2, 3, 5]) }
            // Each operand: a suffix of the output's axes, some of them 1.
            let dims: [[Int]] = (0 ..< 3).map { _ in
                let suffix = Array(outDims.suffix(rng.int(1 ... outDims.count)))
                return suffix.map { rng.bool() ? $0 : 1 }
            }
            let constantPosition: Int? = trial % 4 == 3 ? nil : trial % 4
            let batch = rng.pick([1, 3])
            let operandValues: [[Float]] = (0 ..< 3).map { k in
                let n = dims[k].reduce(1, *) * (k == constantPosition ? 1 : batch)
                return (0 ..< n).map { _ in k == 0 ? Float(rng.int(0 ... 1)) : rng.float(-2, 2) }
            }
            let layer = Select(constant: constantPosition.map { Shape(unchecked: dims[$0]) }, constantPosition: constantPosition ?? 2)
            let inputIndices = (0 ..< 3).filter { $0 != constantPosition }
            let inputShapes = inputIndices.map { Shape(unchecked: dims[$0]) }
            let output = try layer.outputShape(for: inputShapes)
            let parameters: [ParameterKind: ParameterData] = constantPosition.map { [.constant: ParameterData(operandValues[$0])] } ?? [:]
            let result = try runLayerKernel(layer, inputIndices.map { operandValues[$0] }, batch: batch, shapes: inputShapes,
                                            parameters: parameters).values
            var expected: [Float] = []
            let full = output.dimensions
            var indices: [[Int]] = [[]]
            for extent in full { indices = indices.flatMap { prefix in (0 ..< extent).map { prefix + [$0] } } }
            for item in 0 ..< batch {
                for index in indices {
                    let pick: (Int) -> Float = { k in
                        let count = dims[k].reduce(1, *)
                        let start = k == constantPosition ? 0 : item * count
                        return Self.at(operandValues[k][start ..< start + count], dims[k], index)
                    }
                    expected.append(pick(0) != 0 ? pick(1) : pick(2))
                }
            }
            #expect(result == expected, "operands \(dims), constant at \(constantPosition.map(String.init) ?? "none"), batch \(batch)")
        }
    }
}
