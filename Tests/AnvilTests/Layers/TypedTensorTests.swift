import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Integer and truth tensors computed at `predict`: typed graph inputs, integer arithmetic with
/// the wrapping of fixed-width integers, comparisons giving `bool`, `Cast`, and `Embedding`
/// lookups by computed indices — each checked against Swift's own fixed-width integers (`&+`,
/// `&*`, truncating `/`) or a naive loop written here.
@Suite struct TypedTensorTests {
    /// A model of two inputs of `type` and `shape` joined by `operation`.
    static func binaryModel(_ operation: ElementwiseOperation, _ type: ElementType, _ dims: [Int]) throws -> Model {
        let shape = OpenShape(dimensions: dims, elementType: type)
        let a = Input(shape: shape, name: "a"), b = Input(shape: shape, name: "b")
        let model = try Model(inputs: [a, b], outputs: [[a, b] --> Elementwise(operation)])
        try model.compile(from: ArrayParameterSource([:]))
        return model
    }

    /// Runs `operation` on `x` and `y` (each `batch` items of `dims`) as tensors of `type`.
    static func run(_ operation: ElementwiseOperation, _ type: ElementType, _ dims: [Int], batch: Int,
                    _ x: [Int64], _ y: [Int64]) throws -> Tensor {
        let model = try binaryModel(operation, type, dims)
        let shape = try Shape(dimensions: dims, elementType: type)
        return try model.predict([Tensor(batch: batch, shape: shape, integers: x), Tensor(batch: batch, shape: shape, integers: y)])[0]
    }

    /// Random integers of `type`'s range (at most ±200, so that products exceed 8 bits).
    static func integers(_ count: Int, _ type: ElementType, _ rng: inout RefRandom, nonZero: Bool = false) -> [Int64] {
        let range = type.integerRange!
        let low = max(range.lowerBound, -200), high = min(range.upperBound, 200)
        return (0 ..< count).map { _ in
            while true {
                let v = Int64(rng.int(Int(low) ... Int(high)))
                if !nonZero || v != 0 { return v }
            }
        }
    }

    /// `operation` on `x` and `y` through the layer's kernel with `isa`'s Elementwise body.
    static func runKernel(_ operation: ElementwiseOperation, _ type: ElementType, _ dims: [Int], batch: Int,
                          _ x: [Int64], _ y: [Int64], isa: InstructionSet) throws -> Tensor {
        let shape = try Shape(dimensions: dims, elementType: type)
        let layer = Elementwise(operation)
        let output = try layer.outputShape(for: [shape, shape])
        let made = try layer.makeKernel(KernelContext(layerName: "e", inputShapes: [shape, shape], outputShape: output, layout: .forge, parameters: [:]))
        let wrapped = try #require(made as? IntegerResultKernel)
        var inner = try #require(wrapped.inner as? ElementwiseKernel)
        inner.instructionSet = isa
        let kernel = IntegerResultKernel(inner: inner, type: wrapped.type)
        let a = x.map(Float.init), b = y.map(Float.init)
        var values = [Float](repeating: .nan, count: batch * output.count)
        a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in values.withUnsafeMutableBufferPointer { out in
            kernel.run(KernelIO(inputs: [a.baseAddress!, b.baseAddress!], output: out.baseAddress!, scratch: out.baseAddress!,
                                batch: batch, inputShapes: [shape, shape], outputShape: output))
        } } }
        return try Tensor(batch: batch, shape: output, values: values)
    }

    @Test("Integer arithmetic wraps to the type's width as Swift's fixed-width integers do, on every body", arguments: [
        ElementType.uint8, .int8, .int16, .uint16, .int32, .int64,
    ], refInstructionSets)
    func integerArithmetic(type: ElementType, isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 43)
        let dims = [3, 5], batch = 2, count = batch * 15
        let x = Self.integers(count, type, &rng), y = Self.integers(count, type, &rng, nonZero: true)
        let wrap = { (v: Int64) in type.wrapping(v) }
        let cases: [(ElementwiseOperation, (Int64, Int64) -> Int64)] = [
            (.add, { wrap($0 &+ $1) }), (.subtract, { wrap($0 &- $1) }), (.multiply, { wrap($0 &* $1) }),
            (.divide, { wrap($0 / $1) }),  // truncates toward zero, as C and ONNX do
            (.remainder, { a, b in let r = a % b; return wrap(r != 0 && (r < 0) != (b < 0) ? r + b : r) }),  // floored
            (.maximum, { max($0, $1) }), (.minimum, { min($0, $1) }),
        ]
        for (operation, reference) in cases {
            let output = try Self.runKernel(operation, type, dims, batch: batch, x, y, isa: isa)
            #expect(output.elementType == type, "\(operation)")
            #expect(output.integers == zip(x, y).map(reference), "\(operation) of \(type) on \(isa)")
        }
        // And through a compiled model, as predict runs it.
        let (operation, reference) = cases[2]
        #expect(try Self.run(operation, type, dims, batch: batch, x, y).integers == zip(x, y).map(reference))
    }

    @Test("Comparisons and mask logic of integers give bool tensors")
    func comparisonsGiveTruthValues() throws {
        var rng = RefRandom(seed: 7)
        let x = Self.integers(24, .int32, &rng).map { $0 % 4 }, y = Self.integers(24, .int32, &rng).map { $0 % 4 }
        let cases: [(ElementwiseOperation, (Int64, Int64) -> Bool)] = [
            (.less, { $0 < $1 }), (.lessOrEqual, { $0 <= $1 }), (.greater, { $0 > $1 }),
            (.greaterOrEqual, { $0 >= $1 }), (.equal, { $0 == $1 }),
            (.and, { $0 != 0 && $1 != 0 }), (.or, { $0 != 0 || $1 != 0 }), (.xor, { ($0 != 0) != ($1 != 0) }),
        ]
        for (operation, reference) in cases {
            let output = try Self.run(operation, .int32, [12], batch: 2, x, y)
            #expect(output.elementType == .bool, "\(operation)")
            #expect(output.truths == zip(x, y).map(reference), "\(operation)")
        }
    }

    @Test("Cast truncates toward zero and wraps; a cast that changes no element runs no step")
    func castConvertsOrRenames() throws {
        let input = Input(shape: OpenShape(dimensions: [6]), name: "x")
        let toInt8 = input --> Cast(to: .int8)
        let back = toInt8 --> Cast(to: .float32)
        let model = try Model(inputs: [input], outputs: [toInt8, back])
        try model.compile(from: ArrayParameterSource([:]))
        let x: [Float] = [130.7, -3.9, 255, -129, .nan, 12.5]
        let outputs = try model.predict([Tensor(batch: 1, shape: try Shape(dimensions: [6]), values: x)])
        // Swift's own conversion: truncate, then keep the low 8 bits (NaN is 0).
        let expected = x.map { v -> Int64 in v.isNaN ? 0 : Int64(Int8(truncatingIfNeeded: Int64(v))) }
        #expect(outputs[0].elementType == .int8)
        #expect(outputs[0].integers == expected)
        #expect(outputs[1].elementType == .float32)
        #expect(outputs[1].values == expected.map(Float.init))
        // int8 → float32 changes no element: only the conversion to int8 is a step.
        let steps = try model.profile(iterations: 1).map(\.typeName)
        #expect(steps == ["Cast"])
        #expect(Cast(to: .int64).onlyRenames(.int8) && Cast(to: .int16).onlyRenames(.uint8) && !Cast(to: .uint8).onlyRenames(.int8))
    }

    @Test("The typed Tensor API checks what its integers can hold")
    func typedTensorChecks() throws {
        let shape = try Shape(dimensions: [2], elementType: .int64)
        let tensor = try Tensor(batch: 1, shape: shape, integers: [-5, 1 << 24])
        #expect(tensor.integers == [-5, 1 << 24] && tensor.values == [-5, 16_777_216])
        #expect(throws: AnvilError.self) { try Tensor(batch: 1, shape: shape, integers: [1, (1 << 24) + 1]) }
        #expect(throws: AnvilError.self) { try Tensor(batch: 1, shape: try Shape(dimensions: [1], elementType: .uint8), integers: [256]) }
        #expect(throws: AnvilError.self) { try Tensor(batch: 1, shape: try Shape(dimensions: [2]), integers: [1, 2]) }
        let mask = try Tensor(batch: 2, shape: try Shape(dimensions: [1], elementType: .bool), truths: [true, false])
        #expect(mask.truths == [true, false] && mask.values == [1, 0])
        // A float32 tensor fed where int64 is expected names the input and both types.
        let model = try Self.binaryModel(.add, .int64, [2])
        let floats = try Tensor(batch: 1, shape: try Shape(dimensions: [2]), values: [1, 2])
        #expect(throws: AnvilError.self) { try model.predict([floats, floats]) }
    }

    @Test("Embedding picks rows of its table by computed indices (negative from the end, NaN outside)",
          arguments: [(table: [7, 3], axis: 0), (table: [2, 5, 3], axis: 1), (table: [4, 6], axis: -1)])
    func embeddingLookup(table: [Int], axis: Int) throws {
        var rng = RefRandom(seed: 11)
        let values = (0 ..< table.reduce(1, *)).map { _ in rng.float() }
        let resolved = axis < 0 ? axis + table.count : axis
        let extent = table[resolved]
        let indexDims = [2, 3], batch = 2
        // Every position, some from the end, and two outside the axis.
        var indices = (0 ..< batch * 6).map { Int64($0 % (2 * extent)) - Int64(extent) }
        indices[3] = Int64(extent)
        indices[8] = -Int64(extent) - 1
        let tokens = Input(shape: OpenShape(dimensions: indexDims, elementType: .int64), name: "tokens")
        let model = try Model(input: tokens, output: tokens --> Embedding(table: table, axis: axis, name: "embed"))
        try model.compile(from: ArrayParameterSource(["embed_constant": values]))
        let output = try model.predict(Tensor(batch: batch, shape: try Shape(dimensions: indexDims, elementType: .int64), integers: indices))
        let leading = Array(table[..<resolved]), trailing = Array(table[(resolved + 1)...])
        #expect(output.shape.dimensions == leading + indexDims + trailing)
        let outer = leading.reduce(1, *), row = trailing.reduce(1, *)
        var expected: [Float] = []
        for item in 0 ..< batch {
            for block in 0 ..< outer {
                for position in 0 ..< 6 {
                    let i = indices[item * 6 + position]
                    let j = i < 0 ? i + Int64(extent) : i
                    for r in 0 ..< row {
                        expected.append(j < 0 || j >= Int64(extent) ? .nan : values[(block * extent + Int(j)) * row + r])
                    }
                }
            }
        }
        #expect(output.values.count == expected.count)
        #expect(zip(output.values, expected).allSatisfy { $0 == $1 || ($0.isNaN && $1.isNaN) })
    }

    @Test("Embedding refuses a table of no axes, an axis outside it and truth-valued indices")
    func embeddingRefusals() throws {
        let indices = try Shape(dimensions: [3], elementType: .int64)
        #expect(throws: AnvilError.self) { try Embedding(table: []).outputShape(for: [indices]) }
        #expect(throws: AnvilError.self) { try Embedding(table: [4, 2], axis: 2).outputShape(for: [indices]) }
        #expect(throws: AnvilError.self) { try Embedding(table: [4, 2]).outputShape(for: [indices.with(elementType: .bool)]) }
    }
}
