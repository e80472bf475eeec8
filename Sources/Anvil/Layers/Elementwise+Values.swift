import Foundation

/// ``Elementwise`` on known values: shape arithmetic (`H / 32`, `W · 2`, offsets of an anchor
/// grid) evaluated when the plan is built.
extension Elementwise {
    /// Integer operands of any type; floats otherwise.
    public var acceptsTypedInputs: Bool { true }

    /// The result when every operand is known (a layer with a constant operand runs: its
    /// constant is a parameter, loaded at compile).
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        let known = values.compactMap { $0 }
        guard constant == nil, known.count == values.count else { return nil }
        let type = known[0].shape.elementType
        guard known.allSatisfy({ $0.shape.elementType == type }) else {
            throw AnvilError(.invalidShape, "operands of different types: \(known.map { "\($0.shape.elementType)" }.joined(separator: ", "))")
        }
        let output = try outputShape(for: inputs).with(elementType: type)
        let positions = known.map { Self.broadcastPositions($0.shape, to: output) }
        if type.isInteger {
            var result = positions[0].map { known[0].integers[$0] }
            for (operand, map) in zip(known.dropFirst(), positions.dropFirst()) {
                for i in result.indices { result[i] = try combine(result[i], operand.integers[map[i]]) }
            }
            if operation == .mean { result = result.map { $0 / Int64(known.count) } }
            return try TensorValue(shape: output, integers: result)
        }
        var result = positions[0].map { known[0].floats[$0] }
        for (operand, map) in zip(known.dropFirst(), positions.dropFirst()) {
            for i in result.indices { result[i] = combine(result[i], operand.floats[map[i]]) }
        }
        if operation == .mean { result = result.map { $0 / Float(known.count) } }
        return try TensorValue(shape: output, floats: result.map { activation($0) })
    }

    /// For each element of `output` (row-major), the element of `operand` broadcast to it.
    static func broadcastPositions(_ operand: Shape, to output: Shape) -> [Int] {
        broadcastPositions(operand.dimensions, to: output.dimensions)
    }

    /// For each position of axes `outDims` (row-major), the position of axes `operand` (aligned
    /// on the last axes, extent 1 repeated) broadcast to it.
    static func broadcastPositions(_ operand: [Int], to outDims: [Int]) -> [Int] {
        let dims = Array(operand.suffix(outDims.count))
        let offset = outDims.count - dims.count
        var strides = [Int](repeating: 0, count: outDims.count)
        var step = 1
        for k in stride(from: dims.count - 1, through: 0, by: -1) {
            strides[offset + k] = dims[k] == 1 ? 0 : step
            step *= dims[k]
        }
        var positions = [Int](repeating: 0, count: outDims.reduce(1, *))
        var index = [Int](repeating: 0, count: outDims.count)
        var position = 0
        for i in positions.indices {
            positions[i] = position
            var k = outDims.count - 1
            while k >= 0 {
                index[k] += 1
                position += strides[k]
                if index[k] < outDims[k] { break }
                position -= strides[k] * outDims[k]
                index[k] = 0
                k -= 1
            }
        }
        return positions
    }

    /// `a op b` on integers, as ONNX: division truncates toward zero; throws on a division by 0
    /// or an overflow.
    private func combine(_ a: Int64, _ b: Int64) throws -> Int64 {
        func checked(_ result: (partialValue: Int64, overflow: Bool)) throws -> Int64 {
            guard !result.overflow else { throw AnvilError(.invalidShape, "integer overflow in \(a) \(operation) \(b)") }
            return result.partialValue
        }
        switch operation {
        case .add, .mean: return try checked(a.addingReportingOverflow(b))
        case .subtract: return try checked(a.subtractingReportingOverflow(b))
        case .multiply: return try checked(a.multipliedReportingOverflow(by: b))
        case .divide:
            guard b != 0 else { throw AnvilError(.invalidShape, "integer division by zero (\(a) / 0)") }
            return try checked(a.dividedReportingOverflow(by: b))
        case .maximum: return max(a, b)
        case .minimum: return min(a, b)
        case .power:
            guard b >= 0 else { throw AnvilError(.invalidShape, "integer power with a negative exponent (\(a) ^ \(b))") }
            var result: Int64 = 1
            for _ in 0 ..< min(b, 64) { result = try checked(result.multipliedReportingOverflow(by: a)) }
            return result
        case .remainder, .fmod:
            guard b != 0 else { throw AnvilError(.invalidShape, "integer remainder of a division by zero (\(a) % 0)") }
            let r = b == -1 ? 0 : a % b
            return operation == .remainder && r != 0 && (r < 0) != (b < 0) ? r + b : r
        case .less: return a < b ? 1 : 0
        case .lessOrEqual: return a <= b ? 1 : 0
        case .greater: return a > b ? 1 : 0
        case .greaterOrEqual: return a >= b ? 1 : 0
        case .equal: return a == b ? 1 : 0
        case .and: return a != 0 && b != 0 ? 1 : 0
        case .or: return a != 0 || b != 0 ? 1 : 0
        case .xor: return (a != 0) != (b != 0) ? 1 : 0
        }
    }

    /// `a op b` on floats, as the kernel computes it.
    private func combine(_ a: Float, _ b: Float) -> Float {
        switch operation {
        case .add, .mean: a + b
        case .subtract: a - b
        case .multiply: a * b
        case .divide: a / b
        case .maximum: a.isNaN || b.isNaN ? .nan : max(a, b)
        case .minimum: a.isNaN || b.isNaN ? .nan : min(a, b)
        case .power: powf(a, b)
        case .remainder:
            { (r: Float) in r != 0 && (r < 0) != (b < 0) ? r + b : r }(fmodf(a, b))
        case .fmod: fmodf(a, b)
        case .less: a < b ? 1 : 0
        case .lessOrEqual: a <= b ? 1 : 0
        case .greater: a > b ? 1 : 0
        case .greaterOrEqual: a >= b ? 1 : 0
        case .equal: a == b ? 1 : 0
        case .and: a != 0 && b != 0 ? 1 : 0
        case .or: a != 0 || b != 0 ? 1 : 0
        case .xor: (a != 0) != (b != 0) ? 1 : 0
        }
    }
}
