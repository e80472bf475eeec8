import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// `anvil_binary` through ``ElementwiseKernel``: every operation, every broadcast pattern,
/// N-ary folds and constant operands, on every body this CPU runs, against the naive float64
/// reference.
@Suite("Elementwise kernel")
struct ElementwiseKernelTests {
    /// Broadcast patterns as (operand, operand) axis masks: true keeps the output's size, false is 1.
    static let patterns: [(String, [(Bool, Bool, Bool)])] = [
        ("same shape", [(true, true, true), (true, true, true)]),
        ("per-channel", [(true, true, true), (false, false, true)]),
        ("per-channel first", [(false, false, true), (true, true, true)]),
        ("per-pixel", [(true, true, true), (true, true, false)]),
        ("per-pixel first", [(true, true, false), (true, true, true)]),
        ("scalar", [(true, true, true), (false, false, false)]),
        ("scalar first", [(false, false, false), (true, true, true)]),
        ("per-row", [(true, true, true), (true, false, true)]),
        ("column times row", [(true, false, true), (false, true, true)]),
        ("height vector times map", [(true, false, false), (false, true, true)]),
        ("gate times pixel map", [(false, false, true), (true, true, false)]),
    ]

    /// Random operand values: magnitudes in [0.5, 2] (divisions stay finite), positive for a power's base.
    static func operand(_ rng: inout RefRandom, n: Int, h: Int, w: Int, c: Int, positive: Bool) -> RefTensor {
        RefTensor(n: n, h: h, w: w, c: c, floats: (0 ..< n * h * w * c).map { _ in
            rng.float(0.5, 2) * (positive || rng.bool() ? 1 : -1)
        })
    }

    /// Runs `layer`'s kernel on `isa` over `inputs` (and its constant) and returns the output tensor.
    static func run(_ layer: Elementwise, _ inputs: [RefTensor], constant: [Float]?, isa: InstructionSet) throws -> Tensor {
        let shapes = inputs.map(\.shape)
        let output = try layer.outputShape(for: shapes)
        var parameters: [ParameterKind: ParameterData] = [:]
        if let constant { parameters[.constant] = ParameterData(constant) }
        var kernel = try #require(try layer.makeKernel(KernelContext(layerName: "e", inputShapes: shapes, outputShape: output,
                                                                      layout: .forge, parameters: parameters)) as? ElementwiseKernel)
        kernel.instructionSet = isa
        let batch = inputs[0].n
        let pointers = inputs.map { input -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: input.v.count)
            p.initialize(from: input.floats, count: input.v.count)
            return p
        }
        defer { pointers.forEach { $0.deallocate() } }
        var values = [Float](repeating: .nan, count: batch * output.count)
        values.withUnsafeMutableBufferPointer { y in
            kernel.run(KernelIO(inputs: pointers.map { UnsafePointer($0) }, output: y.baseAddress!, scratch: y.baseAddress!,
                                batch: batch, inputShapes: shapes, outputShape: output))
        }
        // Comparisons and mask logic give truth values; the reference holds them as float32 0 and 1.
        #expect(output.elementType == (layer.operation.givesTruthValues ? .bool : .float32), "\(layer.operation)")
        return try Tensor(batch: batch, shape: output.with(elementType: .float32), values: values)
    }

    @Test("Every binary operation and broadcast pattern against float64", arguments: refInstructionSets)
    func binary(_ isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 41_000)
        for operation in ElementwiseOperation.allCases {
            for (name, masks) in Self.patterns {
                let batch = rng.pick([1, 3]), h = rng.int(1 ... 5), w = rng.int(2 ... 5), c = rng.pick([1, 3, 8, 37])
                let operands = masks.enumerated().map { index, mask in
                    Self.operand(&rng, n: batch, h: mask.0 ? h : 1, w: mask.1 ? w : 1, c: mask.2 ? c : 1,
                                 positive: operation == .power && index == 0)
                }
                let f = rng.pick([ActivationFunction.none, .relu, .tanh])
                let actual = try Self.run(Elementwise(operation, activation: f), operands, constant: nil, isa: isa)
                refExpectClose(actual, Naive.elementwise(operands, operation, activation: f), "\(operation) \(name) \(f) on \(isa)")
            }
        }
    }

    @Test("N-ary folds of 3 and 4 operands, mixed broadcasting", arguments: refInstructionSets)
    func nary(_ isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 42_000)
        for operation in ElementwiseOperation.allCases where !operation.isBinary {
            for count in [3, 4] {
                let batch = rng.pick([1, 2]), h = rng.int(2 ... 4), w = rng.int(2 ... 4), c = rng.pick([5, 16, 33])
                let operands = (0 ..< count).map { _ in
                    Self.operand(&rng, n: batch, h: rng.bool() ? h : 1, w: rng.bool() ? w : 1, c: rng.bool() ? c : 1, positive: false)
                } + [Self.operand(&rng, n: batch, h: h, w: w, c: c, positive: false)]
                let actual = try Self.run(Elementwise(operation), operands, constant: nil, isa: isa)
                refExpectClose(actual, Naive.elementwise(operands, operation), "\(operation) of \(count + 1) on \(isa)")
            }
        }
    }

    @Test("A constant operand, last or first, shared by every image of the batch", arguments: refInstructionSets)
    func constantOperand(_ isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 43_000)
        for operation in ElementwiseOperation.allCases {
            for constantFirst in [false, true] {
                for mask in [(false, false, true), (false, false, false), (true, true, true), (true, false, false)] {
                    let batch = 3, h = rng.int(1 ... 4), w = rng.int(1 ... 4), c = rng.pick([2, 9, 40])
                    let shape = Shape(height: mask.0 ? h : 1, width: mask.1 ? w : 1, channels: mask.2 ? c : 1)
                    let constant = Self.operand(&rng, n: 1, h: shape.height, w: shape.width, c: shape.channels,
                                                positive: operation == .power && constantFirst)
                    var inputs = [Self.operand(&rng, n: batch, h: h, w: w, c: c, positive: operation == .power && !constantFirst)]
                    if !operation.isBinary { inputs.append(Self.operand(&rng, n: batch, h: h, w: 1, c: c, positive: false)) }
                    let layer = Elementwise(operation, constant: shape, constantFirst: constantFirst)
                    let actual = try Self.run(layer, inputs, constant: constant.floats, isa: isa)
                    let expected = Naive.elementwise(constantFirst ? [constant] + inputs : inputs + [constant], operation)
                    refExpectClose(actual, expected, "\(operation) constant \(shape) first \(constantFirst) on \(isa)")
                }
            }
        }
    }

    @Test("A large same-shape and per-channel multiply, split over the worker pool", arguments: refInstructionSets)
    func large(_ isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 44_000)
        let x = Self.operand(&rng, n: 2, h: 24, w: 20, c: 67, positive: false)
        let same = Self.operand(&rng, n: 2, h: 24, w: 20, c: 67, positive: false)
        let gate = Self.operand(&rng, n: 2, h: 1, w: 1, c: 67, positive: false)
        refExpectClose(try Self.run(Elementwise(.multiply), [x, same], constant: nil, isa: isa),
                       Naive.elementwise([x, same], .multiply), "large same-shape on \(isa)")
        refExpectClose(try Self.run(Elementwise(.multiply, activation: .sigmoid), [x, gate], constant: nil, isa: isa),
                       Naive.elementwise([x, gate], .multiply, activation: .sigmoid), "large gate on \(isa)")
    }
}
