import CAnvilKernels

/// An ``Elementwise`` layer's kernel: the operands folded pairwise into the output with
/// `anvil_binary` (the first step combines operands 0 and 1, each later one the output so far
/// and the next operand; a mean ends by scaling with 1/n), then the activation, each over the
/// same range of output elements, split over the worker pool. A broadcast whose axes alternate
/// between broadcast and full more than the C loop's three levels walks its outer axes here, one
/// chunk of the inner three at a time (``Step/outer``); the patterns of three or fewer run as one
/// C call over the whole range.
struct ElementwiseKernel: RangeKernel, EpilogueReportingKernel {
    /// One `anvil_binary` call: `out = a op b`.
    struct Step {
        var op: anvil_binary_op
        var shape: anvil_binary_shape
        /// Operand index of `a`, or -1 for the output so far.
        var a: Int
        /// Operand index of `b`, or -1 for the mean's scale (a single float).
        var b: Int
        /// The axes beyond `shape`'s three, from the inside out (empty for most patterns):
        /// `shape` then covers one chunk of its three axes, its image strides unused.
        var outer: [OuterAxis] = []
    }

    /// An output axis outside the three `anvil_binary` walks: its extent and each operand's
    /// stride along it, in floats.
    struct OuterAxis: Equatable {
        var size: Int
        var a: Int
        var b: Int
    }

    /// How `a` and `b` broadcast to an output: the C loop's shape of its three innermost merged
    /// axes, and the axes outside them (from the inside out), walked by the kernel in Swift.
    struct Broadcast {
        var shape: anvil_binary_shape
        var outer: [OuterAxis]
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
        func step(_ op: anvil_binary_op, _ broadcast: Broadcast, a: Int, b: Int) -> Step {
            Step(op: op, shape: broadcast.shape, a: a, b: b, outer: broadcast.outer)
        }
        steps.append(step(op, Self.broadcast(output: output, operands[0], imageStride(0), operands[1], imageStride(1)), a: 0, b: 1))
        for index in operands.indices.dropFirst(2) {
            steps.append(step(op, Self.broadcast(output: output, output, output.count, operands[index], imageStride(index)),
                              a: -1, b: index))
        }
        if operation == .mean {
            steps.append(step(ANVIL_BINARY_MULTIPLY,
                              Self.broadcast(output: output, output, output.count, Shape(height: 1, width: 1, channels: 1), 0),
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

    /// ``broadcast(output:_:_:_:_:)``'s shape for a caller that runs one C call per range (the
    /// gate of ``GatedKernel``): throws when more than three axes remain after merging.
    static func shape(output: Shape, _ a: Shape, _ aImage: Int, _ b: Shape, _ bImage: Int) throws -> anvil_binary_shape {
        let broadcast = broadcast(output: output, a, aImage, b, bImage)
        guard broadcast.outer.isEmpty else {
            throw AnvilError(.invalidShape, "broadcasting \(a) with \(b) to \(output) alternates between broadcast and full axes \(broadcast.outer.count + 2) times; at most 3 are supported")
        }
        return broadcast.shape
    }

    /// The strides of `a` and `b` broadcast to `output` (aligned on their last axes), with axes
    /// merged where both operands run on contiguously (or both stay put), so the C loop's inner
    /// spans are as long as can be. The C loop walks three axes per item; any merged axes beyond
    /// them are returned as ``Broadcast/outer``.
    static func broadcast(output: Shape, _ a: Shape, _ aImage: Int, _ b: Shape, _ bImage: Int) -> Broadcast {
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
        let outer = axes.dropFirst(3).map { OuterAxis(size: $0.size, a: $0.a, b: $0.b) }
        while axes.count < 3 { axes.append((1, 0, 0)) }
        let (c, w, h) = (axes[0], axes[1], axes[2])
        // With outer axes each C call covers one chunk, so its image strides are never used.
        let (ai, bi) = outer.isEmpty ? (aImage, bImage) : (0, 0)
        let shape = anvil_binary_shape(height: h.size, width: w.size, channels: c.size,
                                       a_image: ai, a_row: h.a, a_column: w.a, a_channel: c.a,
                                       b_image: bi, b_row: h.b, b_column: w.b, b_channel: c.b)
        // The batch closes the outer axes: its size -1 takes whatever chunks are left.
        return Broadcast(shape: shape, outer: outer.isEmpty ? [] : outer + [OuterAxis(size: -1, a: aImage, b: bImage)])
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
            let outerCount = shapes.outerCounts[index]
            if outerCount == 0 {
                anvil_binary(isa, shapes.ops[index], shapes.pointer + index, a, b, io.output, range.lowerBound, range.upperBound)
            } else {
                runChunks(index, outerCount, a, b, range, io.output, isa)
            }
        }
        activation.apply(io.output + range.lowerBound, count: range.count, instructionSet: instructionSet)
    }

    /// Step `index` over output elements `range` when it has `outerCount` outer axes: one C call
    /// per chunk of its three inner axes that `range` touches, at the operands' offsets for that
    /// chunk. (The last "outer axis" of a step is the batch: size -1, the image strides.)
    private func runChunks(_ index: Int, _ outerCount: Int, _ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>,
                           _ range: Range<Int>, _ output: UnsafeMutablePointer<Float>, _ isa: anvil_isa) {
        let inner = shapes.pointer[index]
        let chunk = inner.height * inner.width * inner.channels
        let first = shapes.outerStarts[index]
        var k = range.lowerBound / chunk
        while k * chunk < range.upperBound {
            var rest = k, offsetA = 0, offsetB = 0
            for j in first ..< first + outerCount {
                let axis = shapes.outer[j]
                // The batch (size -1) takes whatever is left.
                let position = axis.size < 0 ? rest : rest % axis.size
                rest = axis.size < 0 ? 0 : rest / axis.size
                offsetA += position * axis.a
                offsetB += position * axis.b
            }
            let start = k * chunk
            let begin = max(range.lowerBound, start) - start, end = min(range.upperBound, start + chunk) - start
            anvil_binary(isa, shapes.ops[index], shapes.pointer + index, a + offsetA, b + offsetB, output + start, begin, end)
            k += 1
        }
    }

    /// The steps as flat arrays the run loop indexes without copying structs.
    final class ShapeArray: @unchecked Sendable {
        let count: Int
        let pointer: UnsafeMutablePointer<anvil_binary_shape>
        let ops: UnsafeMutablePointer<anvil_binary_op>
        let a: [Int], b: [Int]
        /// Every step's outer axes, one after another (the batch last in each).
        let outer: [OuterAxis]
        /// Where each step's outer axes start in ``outer``, and how many it has (0: one C call).
        let outerStarts: [Int], outerCounts: [Int]

        init(_ steps: [Step]) {
            count = steps.count
            pointer = .allocate(capacity: max(1, count))
            pointer.initialize(from: steps.map(\.shape), count: count)
            ops = .allocate(capacity: max(1, count))
            ops.initialize(from: steps.map(\.op), count: count)
            a = steps.map(\.a)
            b = steps.map(\.b)
            outer = steps.flatMap(\.outer)
            outerCounts = steps.map(\.outer.count)
            var starts: [Int] = [], next = 0
            for step in steps {
                starts.append(next)
                next += step.outer.count
            }
            outerStarts = starts
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
