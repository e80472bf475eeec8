import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ReferenceLayerTests``: resize against the naive reference.
extension ReferenceLayerTests {
    struct ResizeCase: Sendable, CustomTestStringConvertible {
        var input: (Int, Int)
        var size: (Int, Int)?
        var scale: (Float, Float)?
        var testDescription: String {
            "\(input.0)x\(input.1) " + (size.map { "to \($0.0)x\($0.1)" } ?? "by \(scale!.0)x\(scale!.1)")
        }
    }

    static let resizeCases: [ResizeCase] = [
        ResizeCase(input: (4, 5), size: (7, 3)), ResizeCase(input: (3, 3), size: (1, 1)),
        ResizeCase(input: (1, 4), size: (3, 8)), ResizeCase(input: (6, 6), size: (6, 6)),
        ResizeCase(input: (5, 7), size: (2, 3)), ResizeCase(input: (2, 2), size: (5, 1)),
        ResizeCase(input: (3, 4), scale: (2, 2)), ResizeCase(input: (4, 6), scale: (0.5, 0.5)),
        ResizeCase(input: (4, 3), scale: (1.5, 2.5)), ResizeCase(input: (5, 3), scale: (0.6, 1.7)),
        ResizeCase(input: (2, 3), scale: (3, 1)), ResizeCase(input: (3, 5), scale: (0.34, 0.8)),
    ]

    @Test("Resize: all four coordinate modes, by size and by scale",
          arguments: Resize.Coordinates.allCases, resizeCases)
    func resize(coordinates: Resize.Coordinates, testCase: ResizeCase) throws {
        var rng = RefRandom(seed: testCase.input.0 * 100 + testCase.input.1)
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: testCase.input.0, w: testCase.input.1, c: rng.int(1 ... 3))
        let expected = Naive.resize(x, size: testCase.size, scale: testCase.scale, coordinates: coordinates)
        let y = try refRun(x) { input in
            if let size = testCase.size {
                return input --> Resize(height: size.0, width: size.1, coordinates: coordinates)
            }
            return input --> Resize(scaleHeight: testCase.scale!.0, scaleWidth: testCase.scale!.1, coordinates: coordinates)
        }
        refExpectClose(y, expected, "resize \(testCase.testDescription) \(coordinates)")
    }
}
