import CAnvilKernels

/// An ``Elementwise`` layer's kernel: the operands folded pairwise into the output with
/// `anvil_binary` (the first step combines operands 0 and 1, each later one the output so far
/// and the next operand; a mean ends by scaling with 1/n), then the activation, each over the
/// same range of output elements, split over the worker pool.
struct ElementwiseKernel: RangeKernel, EpilogueReportingKernel {
    /// One `anvil_binary` call: `out = a op b`.
    struct Step {
        var op: anvil_binary_op
        var shape: anvil_binary_shape
        /// Operand index of `a`, or -1 for the output so far.
        var a: Int
        /// Operand index of `b`, or -1 for the mean's scale (a single float).
        var b: Int
    }

    let steps: [Step]
    /// The steps' shapes in one C array, read by `run` (an array of structs this large is
    /// copied through the heap when iterated in an unoptimised build).
    let shapes: ShapeArray
    /// For each operand, its input index, or -1 for the constant.
    let inputIndex: [Int]
    /// The constant operand (empty when there is none).
    let constant: ParameterData
    /// `[1 / operands]` for a mean.
    let scale: ParameterData
    let activation: ActivationFunction
    var instructionSet = InstructionSet.current

    /// The layer's activation, or the one fused after it.
    var appliedActivation: ActivationFunction { activation }
    /// It takes no residual.
    var addsResidual: Bool { false }

    init(operation: ElementwiseOperation, operands: [Shape], constantIndex: Int?, constant: [Float], output: Shape,
         activation: ActivationFunction) throws {
        let op: anvil_binary_op
        switch operation {
        case .add, .mean: op = ANVIL_BINARY_ADD
        case .subtract: op = ANVIL_BINARY_SUBTRACT
        case .multiply: op = ANVIL_BINARY_MULTIPLY
        case .divide: op = ANVIL_BINARY_DIVIDE
        case .maximum: op = ANVIL_BINARY_MAXIMUM
        case .minimum: op = ANVIL_BINARY_MINIMUM
        case .power: op = ANVIL_BINARY_POWER
        case .remainder: op = ANVIL_BINARY_REMAINDER
        case .fmod: op = ANVIL_BINARY_FMOD
        case .less: op = ANVIL_BINARY_LESS
        case .lessOrEqual: op = ANVIL_BINARY_LESS_OR_EQUAL
        case .greater: op = ANVIL_BINARY_GREATER
        case .greaterOrEqual: op = ANVIL_BINARY_GREATER_OR_EQUAL
        case .equal: op = ANVIL_BINARY_EQUAL
        case .and: op = ANVIL_BINARY_AND
        case .or: op = ANVIL_BINARY_OR
        case .xor: op = ANVIL_BINARY_XOR
        }
        var steps: [Step] = []
        let imageStride = { (index: Int) in index == constantIndex ? 0 : operands[index].count }
        steps.append(Step(op: op, shape: try Self.shape(output: output, operands[0], imageStride(0), operands[1], imageStride(1)),
                          a: 0, b: 1))
        for index in operands.indices.dropFirst(2) {
            steps.append(Step(op: op, shape: try Self.shape(output: output, output, output.count, operands[index], imageStride(index)),
                              a: -1, b: index))
        }
        if operation == .mean {
            steps.append(Step(op: ANVIL_BINARY_MULTIPLY,
                              shape: try Self.shape(output: output, output, output.count, Shape(height: 1, width: 1, channels: 1), 0),
                              a: -1, b: -1))
        }
        self.steps = steps
        shapes = ShapeArray(steps)
        var inputs: [Int] = []
        var next = 0
        for index in operands.indices {
            if index == constantIndex { inputs.append(-1) } else { inputs.append(next); next += 1 }
        }
        inputIndex = inputs
        self.constant = ParameterData(constant.isEmpty ? [0] : constant)
        scale = ParameterData([1 / Float(operands.count)])
        self.activation = activation
    }

    /// The strides of `a` and `b` broadcast to `output` (aligned on their last axes), with axes
    /// merged where both operands run on contiguously (or both stay put), so the C loop's inner
    /// spans are as long as can be. Throws when more than three axes remain after merging (the
    /// C loop walks three per item).
    static func shape(output: Shape, _ a: Shape, _ aImage: Int, _ b: Shape, _ bImage: Int) throws -> anvil_binary_shape {
        let sizes = output.dimensions
        func strides(_ s: Shape) -> [Int] {
            // Axes beyond the output's rank are leading 1s (a constant stored as an image).
            let dims = Array(s.dimensions.suffix(sizes.count))
            let offset = sizes.count - dims.count
            var result = [Int](repeating: 0, count: sizes.count)
            var step = 1
            for k in stride(from: dims.count - 1, through: 0, by: -1) {
                result[offset + k] = dims[k] == sizes[offset + k] ? step : 0
                step *= dims[k]
            }
            return result
        }
        let sa = strides(a), sb = strides(b)
        // (size, a stride, b stride) of each axis longer than 1, merged from the inside out.
        var axes: [(size: Int, a: Int, b: Int)] = []
        for axis in sizes.indices.reversed() where sizes[axis] > 1 {
            if let inner = axes.last, sa[axis] == inner.a * inner.size, sb[axis] == inner.b * inner.size {
                axes[axes.count - 1] = (inner.size * sizes[axis], inner.a, inner.b)
            } else {
                axes.append((sizes[axis], sa[axis], sb[axis]))
            }
        }
        guard axes.count <= 3 else {
            throw AnvilError(.invalidShape, "broadcasting \(a) with \(b) to \(output) alternates between broadcast and full axes \(axes.count) times; at most 3 are supported")
        }
        while axes.count < 3 { axes.append((1, 0, 0)) }
        let (c, w, h) = (axes[0], axes[1], axes[2])
        return anvil_binary_shape(height: h.size, width: w.size, channels: c.size,
                                  a_image: aImage, a_row: h.a, a_column: w.a, a_channel: c.a,
                                  b_image: bImage, b_row: h.b, b_column: w.b, b_channel: c.b)
    }

    func run(_ io: KernelIO) {
        let cost = steps.count + (activation == .none ? 0 : 4)
        Compute.parallelFor(io.batch * io.outputShape.count, costPerItem: cost, KernelRange(kernel: self, io: io))
    }

    /// Output elements `range` (flat over the batch). No closures: a warm run allocates nothing.
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let isa = instructionSet.cValue
        for index in 0 ..< shapes.count {
            let first = shapes.a[index], second = shapes.b[index]
            let a = first < 0 ? UnsafePointer(io.output) : operand(first, io)
            let b = second < 0 ? scale.buffer.baseAddress! : operand(second, io)
            anvil_binary(isa, shapes.ops[index], shapes.pointer + index, a, b, io.output, range.lowerBound, range.upperBound)
        }
        activation.apply(io.output + range.lowerBound, count: range.count, instructionSet: instructionSet)
    }

    /// The steps as flat arrays the run loop indexes without copying structs.
    final class ShapeArray: @unchecked Sendable {
        let count: Int
        let pointer: UnsafeMutablePointer<anvil_binary_shape>
        let ops: UnsafeMutablePointer<anvil_binary_op>
        let a: [Int], b: [Int]

        init(_ steps: [Step]) {
            count = steps.count
            pointer = .allocate(capacity: max(1, count))
            pointer.initialize(from: steps.map(\.shape), count: count)
            ops = .allocate(capacity: max(1, count))
            ops.initialize(from: steps.map(\.op), count: count)
            a = steps.map(\.a)
            b = steps.map(\.b)
        }

        deinit {
            pointer.deallocate()
            ops.deallocate()
        }
    }

    /// Operand `index`: its input buffer, or the constant.
    private func operand(_ index: Int, _ io: KernelIO) -> UnsafePointer<Float> {
        let input = inputIndex[index]
        return input < 0 ? constant.buffer.baseAddress! : io.inputs[input]
    }
}
