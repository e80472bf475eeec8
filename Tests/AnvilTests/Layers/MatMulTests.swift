import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// MatMul of two computed tensors against a float64 product written here: every batch item,
/// NumPy broadcasting of the leading axes, either input read transposed, matrices large enough
/// to be split in bands across threads.
@Suite struct MatMulTests {
    struct Case: CustomStringConvertible, Sendable {
        let a: [Int], b: [Int], transposeA: Bool, transposeB: Bool
        var description: String { "\(a)\(transposeA ? "ᵀ" : "") · \(b)\(transposeB ? "ᵀ" : "")" }
    }

    static let cases: [Case] = [
        Case(a: [3, 4], b: [4, 5], transposeA: false, transposeB: false),
        Case(a: [2, 3, 4], b: [2, 4, 5], transposeA: false, transposeB: false),
        Case(a: [2, 1, 3, 4], b: [3, 5, 4], transposeA: false, transposeB: true),
        Case(a: [4, 4, 3], b: [1, 4, 5], transposeA: true, transposeB: false),
        Case(a: [2, 7, 6], b: [2, 9, 7], transposeA: true, transposeB: true),
        Case(a: [1, 200, 32], b: [1, 32, 150], transposeA: false, transposeB: false),
        Case(a: [2, 16, 130], b: [2, 130, 16], transposeA: true, transposeB: true),
    ]

    /// Row-major strides of `dims`.
    static func strides(_ dims: [Int]) -> [Int] {
        var s = [Int](repeating: 1, count: dims.count)
        for k in stride(from: dims.count - 2, through: 0, by: -1) { s[k] = s[k + 1] * dims[k + 1] }
        return s
    }

    /// The float64 product of one batch item, broadcasting the leading axes.
    static func reference(_ x: [Float], _ y: [Float], _ c: Case) -> [Double] {
        let (m, k) = c.transposeA ? (c.a[c.a.count - 1], c.a[c.a.count - 2]) : (c.a[c.a.count - 2], c.a[c.a.count - 1])
        let n = c.transposeB ? c.b[c.b.count - 2] : c.b[c.b.count - 1]
        let la = Array(c.a.dropLast(2)), lb = Array(c.b.dropLast(2))
        let rank = max(la.count, lb.count)
        let pa = [Int](repeating: 1, count: rank - la.count) + la, pb = [Int](repeating: 1, count: rank - lb.count) + lb
        let leading = zip(pa, pb).map { max($0, $1) }
        let sa = strides(pa), sb = strides(pb), sl = strides(leading)
        let total = leading.reduce(1, *)
        var out: [Double] = []
        for l in 0 ..< total {
            let index = sl.map { (l / $0) }.enumerated().map { $0.element % leading[$0.offset] }
            let oa = zip(index, zip(pa, sa)).reduce(0) { $0 + ($1.1.0 == 1 ? 0 : $1.0 * $1.1.1) } * m * k
            let ob = zip(index, zip(pb, sb)).reduce(0) { $0 + ($1.1.0 == 1 ? 0 : $1.0 * $1.1.1) } * k * n
            for i in 0 ..< m {
                for j in 0 ..< n {
                    var sum = 0.0
                    for t in 0 ..< k {
                        let av = x[oa + (c.transposeA ? t * m + i : i * k + t)]
                        let bv = y[ob + (c.transposeB ? j * k + t : t * n + j)]
                        sum += Double(av) * Double(bv)
                    }
                    out.append(sum)
                }
            }
        }
        return out
    }

    @Test("MatMul of two computed tensors matches a float64 product", arguments: cases)
    func matchesReference(_ c: Case) throws {
        var rng = RefRandom(seed: c.a.reduce(7, *) + c.b.reduce(3, +))
        let left = Input(shape: try Shape(dimensions: c.a)), right = Input(shape: try Shape(dimensions: c.b))
        let model = try Model(inputs: [left, right], outputs: [[left, right] --> MatMul(transposeA: c.transposeA, transposeB: c.transposeB)])
        try model.compile(from: ArrayParameterSource([:]))
        let batch = 2
        let countA = c.a.reduce(1, *), countB = c.b.reduce(1, *)
        let x = (0 ..< batch * countA).map { _ in rng.float() }, y = (0 ..< batch * countB).map { _ in rng.float() }
        let out = try model.predict([Tensor(batch: batch, shape: try Shape(dimensions: c.a), values: x),
                                     Tensor(batch: batch, shape: try Shape(dimensions: c.b), values: y)])[0]
        var expected: [Double] = []
        for item in 0 ..< batch {
            expected += Self.reference(Array(x[item * countA ..< (item + 1) * countA]), Array(y[item * countB ..< (item + 1) * countB]), c)
        }
        #expect(out.values.count == expected.count)
        let depth = Double(c.transposeA ? c.a[c.a.count - 2] : c.a[c.a.count - 1])
        let worst = zip(out.values, expected).map { abs(Double($0) - $1) }.max() ?? 0
        #expect(worst <= 1e-6 * depth * 4, "largest error \(worst)")
    }

    @Test("MatMul refuses factors whose inner axes or leading axes do not fit, naming the shapes")
    func refusesMismatches() throws {
        let left = Input(shape: try Shape(dimensions: [3, 4])), right = Input(shape: try Shape(dimensions: [5, 6]))
        #expect(throws: AnvilError.self) { try Model(inputs: [left, right], outputs: [[left, right] --> MatMul()]) }
        let a = Input(shape: try Shape(dimensions: [2, 3, 4])), b = Input(shape: try Shape(dimensions: [3, 4, 5]))
        #expect(throws: AnvilError.self) { try Model(inputs: [a, b], outputs: [[a, b] --> MatMul()]) }
        let vector = Input(shape: .vector(4))
        #expect(throws: AnvilError.self) { try Model(inputs: [vector, b], outputs: [[vector, b] --> MatMul()]) }
    }
}
