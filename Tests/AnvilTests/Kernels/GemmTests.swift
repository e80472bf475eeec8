import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// The OpenBLAS path's two ways of splitting work across threads — bands of rows, and for
/// fewer than `Gemm.columnSplitRows` rows slices of output columns — against the naive
/// reference, through 1×1 convolutions of more than 64 pixels (which take that path).
@Suite("GEMM work splitting")
struct GemmTests {
    @Test("1×1 layers with few rows (column slices) and many rows (row bands), bias and a clamp activation",
          arguments: [(10, 10), (9, 13), (20, 20)])
    func splits(height: Int, width: Int) throws {
        #expect(height * width > 64)
        var random = RefRandom(seed: height * 100 + width)
        let inputs = 70, outputs = 100
        let weights = random.floats(outputs * inputs), bias = random.floats(outputs)
        let x = random.tensor(n: 1, h: height, w: width, c: inputs)
        let actual = try refRun(x, parameters: ["pw_W": weights, "pw_b": bias]) {
            $0 --> PointwiseConvolution(channels: outputs, activation: .relu6, name: "pw")
        }
        let expected = Naive.pointwise(x, weights: weights, bias: bias, outputChannels: outputs, activation: .relu6)
        refExpectClose(actual, expected, "\(height)×\(width)×\(inputs) → \(outputs)")
    }
}
