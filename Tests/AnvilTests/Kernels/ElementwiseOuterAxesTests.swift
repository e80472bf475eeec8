import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ElementwiseKernel`` on broadcasts whose axes alternate between broadcast and full more
/// often than `anvil_binary`'s three levels (the outer axes walked in Swift): every operation,
/// float32 and truth values, N-ary folds and ranges split mid-chunk, on every body this CPU runs,
/// against a naive float64 broadcast written here over any rank.
@Suite("Elementwise kernel, outer axes")
struct ElementwiseOuterAxesTests {
    /// Operand shapes (after the batch) broadcast to an output of rank 5 to 7.
    static let patterns: [(String, [[Int]])] = [
        ("4 alternations (ONNX's bcast4v4d)", [[1, 4, 1, 6], [3, 1, 5, 6]]),
        ("5 alternations", [[2, 1, 3, 1, 4], [1, 3, 1, 2, 4]]),
        ("6 alternations, lower rank second", [[2, 1, 3, 1, 4, 1], [3, 1, 2, 1, 5]]),
        ("7 alternations", [[2, 1, 2, 1, 3, 1, 3], [1, 3, 1, 2, 1, 2, 3]]),
    ]

    /// The naive broadcast of `operands` (values per item after the batch, each operand's batch
    /// `batch` or 1) folded with `operation` in float64.
    static func naive(_ operands: [(shape: [Int], batch: Int, values: [Float])], _ operation: ElementwiseOperation,
                      output: [Int], batch: Int) -> [Double] {
        let count = output.reduce(1, *)
        var result: [Double] = []
        for n in 0 ..< batch {
            for flat in 0 ..< count {
                var coordinate = [Int](repeating: 0, count: output.count), rest = flat
                for k in stride(from: output.count - 1, through: 0, by: -1) {
                    coordinate[k] = rest % output[k]
                    rest /= output[k]
                }
                let values = operands.map { operand -> Double in
                    let offset = output.count - operand.shape.count
                    var index = 0
                    for (k, extent) in operand.shape.enumerated() { index = index * extent + (extent == 1 ? 0 : coordinate[offset + k]) }
                    let item = operand.batch == 1 ? 0 : n
                    return Double(operand.values[item * operand.shape.reduce(1, *) + index])
                }
                result.append(Naive.fold(values, operation))
            }
        }
        return result
    }

    /// Runs `layer`'s kernel on `isa` over the operands, in `parts` ranges of the output.
    static func run(_ layer: Elementwise, _ shapes: [Shape], _ inputs: [[Float]], batch: Int, isa: InstructionSet,
                    parts: Int) throws -> [Float] {
        let output = try layer.outputShape(for: shapes)
        var kernel = try #require(try layer.makeKernel(KernelContext(layerName: "e", inputShapes: shapes, outputShape: output,
                                                                      layout: .forge, parameters: [:])) as? ElementwiseKernel)
        kernel.instructionSet = isa
        let pointers = inputs.map { input -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: input.count)
            p.initialize(from: input, count: input.count)
            return p
        }
        defer { pointers.forEach { $0.deallocate() } }
        let total = batch * output.count
        var values = [Float](repeating: .nan, count: total)
        values.withUnsafeMutableBufferPointer { y in
            let io = KernelIO(inputs: pointers.map { UnsafePointer($0) }, output: y.baseAddress!, scratch: y.baseAddress!,
                              batch: batch, inputShapes: shapes, outputShape: output)
            // Ranges that start and end inside chunks of the inner axes, as the worker pool splits them.
            let cuts = [0] + (1 ..< parts).map { total * $0 / parts + 1 } + [total]
            for (begin, end) in zip(cuts, cuts.dropFirst()) where begin < end { kernel.run(begin ..< end, io) }
        }
        return values
    }

    @Test("Every operation and element type on 4 to 7 alternations against float64", arguments: refInstructionSets)
    func alternations(_ isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 45_000)
        for operation in ElementwiseOperation.allCases {
            let truths = [.and, .or, .xor].contains(operation)
            for (name, pattern) in Self.patterns {
                for operandCount in operation.isBinary ? [2] : [2, 3] {
                    let batch = rng.pick([1, 2])
                    let shapes = (0 ..< operandCount).map { pattern[$0 % pattern.count] }
                    let operands = shapes.enumerated().map { index, shape in
                        (shape: shape, batch: batch, values: (0 ..< batch * shape.reduce(1, *)).map { _ -> Float in
                            if truths { return rng.bool() ? 1 : 0 }
                            return rng.float(0.5, 2) * (operation == .power && index == 0 || rng.bool() ? 1 : -1)
                        })
                    }
                    let type: ElementType = truths ? .bool : .float32
                    let anvilShapes = try shapes.map { try Shape(dimensions: $0, elementType: type) }
                    let layer = Elementwise(operation)
                    let output = try layer.outputShape(for: anvilShapes)
                    let expected = Self.naive(operands, operation, output: output.dimensions, batch: batch)
                    for parts in [1, 7] {
                        let actual = try Self.run(layer, anvilShapes, operands.map(\.values), batch: batch, isa: isa, parts: parts)
                        var bad = 0, first = ""
                        for (i, (a, e)) in zip(actual, expected).enumerated() {
                            let ok = e.isNaN ? a.isNaN : abs(Double(a) - e) <= 1e-5 * max(1, abs(e))
                            if !ok {
                                if bad == 0 { first = "value \(i) is \(a), expected \(e)" }
                                bad += 1
                            }
                        }
                        #expect(actual.count == expected.count && bad == 0,
                                "\(operation) \(name), \(operandCount) operands, \(parts) parts on \(isa): \(bad) differ; \(first)")
                    }
                }
            }
        }
    }

    @Test("A gate whose broadcast alternates 4 times is not fused into the step computing it, and multiplies right")
    func gateOfManyAlternations() throws {
        // x [4, 3, 5, 6] times its mean over axes 0 and 2 ([1, 3, 1, 6]): broadcast, full, broadcast, full.
        let dims = [4, 3, 5, 6]
        let x = Input(shape: OpenShape(dimensions: dims), name: "x")
        let gate = x --> Reduce(.mean, axes: [1, 3], name: "gate")
        let model = try Model(input: x, output: [x, gate] --> Elementwise(.multiply, name: "scaled"))
        try model.compile(from: ArrayParameterSource([:]))
        var rng = RefRandom(seed: 45_001)
        let batch = 2, count = dims.reduce(1, *)
        let values = (0 ..< batch * count).map { _ in rng.float(-2, 2) }
        let output = try model.predict(Tensor(batch: batch, shape: try Shape(dimensions: dims), values: values))
        var expected: [Double] = []
        for n in 0 ..< batch {
            func at(_ a: Int, _ b: Int, _ c: Int, _ d: Int) -> Double {
                Double(values[n * count + ((a * 3 + b) * 5 + c) * 6 + d])
            }
            for a in 0 ..< 4 { for b in 0 ..< 3 { for c in 0 ..< 5 { for d in 0 ..< 6 {
                var sum = 0.0
                for i in 0 ..< 4 { for k in 0 ..< 5 { sum += at(i, b, k, d) } }
                expected.append(at(a, b, c, d) * sum / 20)
            } } } }
        }
        let bad = zip(output.values, expected).filter { abs(Double($0) - $1) > 1e-5 * max(1, abs($1)) }.count
        #expect(output.values.count == expected.count && bad == 0, "\(bad) values differ")
    }
}
