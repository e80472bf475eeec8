/// What an ``Elementwise`` layer computes from its operands.
public enum ElementwiseOperation: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The sum of two or more operands (ONNX `Add`, `Sum`).
    case add
    /// `a − b` (exactly two operands).
    case subtract
    /// The product of two or more operands (ONNX `Mul`; a squeeze-and-excitation gate).
    case multiply
    /// `a / b` (exactly two operands).
    case divide
    /// The largest of two or more operands (ONNX `Max`).
    case maximum
    /// The smallest of two or more operands (ONNX `Min`).
    case minimum
    /// `a` to the power `b` (exactly two operands; C's `powf`).
    case power
    /// `a − b·⌊a / b⌋`, the sign of `b` (exactly two operands; ONNX `Mod`, NumPy's `mod`).
    case remainder
    /// `a − b·trunc(a / b)`, the sign of `a` (exactly two operands; ONNX `Mod` with `fmod` 1, C's `fmod`).
    case fmod
    /// The mean of two or more operands (ONNX `Mean`).
    case mean
    /// 1 where `a < b`, else 0 (ONNX `Less`; a mask, false where either is NaN).
    case less
    /// 1 where `a ≤ b`, else 0 (ONNX `LessOrEqual`).
    case lessOrEqual
    /// 1 where `a > b`, else 0 (ONNX `Greater`).
    case greater
    /// 1 where `a ≥ b`, else 0 (ONNX `GreaterOrEqual`).
    case greaterOrEqual
    /// 1 where `a = b`, else 0 (ONNX `Equal`).
    case equal
    /// 1 where both operands are non-zero, else 0 (ONNX `And` on masks).
    case and
    /// 1 where either operand is non-zero, else 0 (ONNX `Or` on masks).
    case or
    /// 1 where exactly one operand is non-zero, else 0 (ONNX `Xor` on masks).
    case xor

    /// Whether the operation takes exactly two operands (the others take two or more).
    public var isBinary: Bool {
        [.subtract, .divide, .power, .remainder, .fmod, .less, .lessOrEqual, .greater, .greaterOrEqual, .equal, .and, .or, .xor].contains(self)
    }

    /// Whether the result is a truth value (the comparisons and the mask logic): its type is `bool`.
    public var givesTruthValues: Bool {
        [.less, .lessOrEqual, .greater, .greaterOrEqual, .equal, .and, .or, .xor].contains(self)
    }

    /// The name used in summaries and model files (`"add"`, `"multiply"`, …).
    public var description: String { rawValue }
}

/// An element-wise operation between computed tensors, and optionally one constant tensor, with
/// NumPy/ONNX broadcasting: `[x, gate] --> Elementwise(.multiply)`.
///
/// Operand shapes are aligned axis by axis on Anvil's channels-last `(height, width, channels)`;
/// each axis is either equal or 1 in every operand, and the output takes the largest. A
/// `1 × 1 × C` gate times an `H × W × C` map is a squeeze-and-excitation multiply; a `1 × 1 × 1`
/// operand is a scalar; an `H × W × 1` one scales every channel of a pixel alike.
///
/// `constant` adds one parameter tensor (kind ``ParameterKind/constant``) of that shape as an
/// operand, after the computed inputs (or before them with `constantFirst`, for `c − x`,
/// `c / x` or `c ^ x`): `x --> Elementwise(.multiply, constant: .vector(C))` is ConvNeXt's layer
/// scale. Unlike ``Add`` (a residual sum of equal shapes, fused into the convolution before it)
/// this layer is its own step; an Activation after it is fused into its kernel.
public final class Elementwise: Layer, FusableLayer {
    /// The operation.
    public let operation: ElementwiseOperation
    /// The shape of the constant operand, or `nil` when every operand is an input.
    public let constant: Shape?
    /// Whether the constant is the first operand rather than the last.
    public let constantFirst: Bool
    /// The activation applied to the result.
    public let activation: ActivationFunction
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(_ operation: ElementwiseOperation, constant: Shape? = nil, constantFirst: Bool = false,
                activation: ActivationFunction = .none, name: String? = nil) {
        self.operation = operation
        self.constant = constant
        self.constantFirst = constantFirst
        self.activation = activation
        self.name = name
    }

    /// `elementwise`.
    public var namePrefix: String { "elementwise" }

    /// A following Activation, applied by the kernel to each range it has just written.
    var absorbs: FusionCapabilities { .activation }

    /// Two operands for subtract, divide, power and the remainders, two or more for the others; the constant,
    /// if any, is one of them.
    public var inputCountRange: ClosedRange<Int> {
        let fromConstant = constant == nil ? 0 : 1
        return (2 - fromConstant)...(operation.isBinary ? 2 - fromConstant : Int.max)
    }

    /// Every operand's shape, in the order they are combined.
    func operandShapes(_ inputs: [Shape]) -> [Shape] {
        guard let constant else { return inputs }
        return constantFirst ? [constant] + inputs : inputs + [constant]
    }

    /// The broadcast shape of the operands, of type `bool` for a comparison or mask logic, else
    /// of the first input's type; throws naming the shapes that do not broadcast.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        if let constant, !constant.isValid {
            throw AnvilError(.invalidOption, "constant shape \(constant) must have positive dimensions")
        }
        if constantFirst && constant == nil {
            throw AnvilError(.invalidOption, "constantFirst needs a constant")
        }
        var result = try Self.broadcast(operandShapes(inputs))
        // The output has the largest rank of the computed inputs (a vector plus a vector is a
        // vector): a constant's leading axes of extent 1 do not raise it.
        let inputRank = inputs.map(\.rank).max() ?? result.rank
        while result.rank > inputRank, result.dimensions.first == 1 { result.dimensions.removeFirst() }
        return result.with(elementType: operation.givesTruthValues ? .bool : inputs.first?.elementType ?? .float32)
    }

    /// The NumPy broadcast of `shapes`, aligned on their last axes: per axis, every size is 1 or
    /// the largest; the rank is the highest operand rank.
    static func broadcast(_ shapes: [Shape]) throws -> Shape {
        let rank = shapes.map(\.rank).max() ?? 1
        var dims = [Int](repeating: 1, count: rank - 1)
        for shape in shapes {
            let offset = dims.count - shape.dimensions.count
            for (k, d) in shape.dimensions.enumerated() {
                let a = dims[offset + k]
                if a == d || d == 1 { continue }
                guard a == 1 else {
                    throw AnvilError(.invalidShape, "cannot broadcast shapes \(shapes.map(\.description).joined(separator: " and ")): each axis must be equal or 1")
                }
                dims[offset + k] = d
            }
        }
        return Shape(unchecked: dims, elementType: shapes[0].elementType)
    }

    /// The constant tensor, if any.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] {
        guard let constant else { return [] }
        return [ParameterSpec(.constant, count: constant.count)]
    }

    /// The C kernel over the broadcast operands; for integer operands, its result brought to
    /// their type (integer division truncates, results wrap to the type's width).
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let values = try constant.map { _ in try context.parameter(.constant).values } ?? []
        let type = context.outputShape.elementType
        // (A power's exponent may be of another type: ONNX `Pow` of an integer base by a float.)
        if type.isInteger, type != .bool, operation != .power, let first = context.inputShapes.first,
           let mixed = context.inputShapes.first(where: { $0.elementType != first.elementType }) {
            throw AnvilError(.invalidShape, "operands of different types: \(first.elementType) and \(mixed.elementType)")
        }
        let kernel = try ElementwiseKernel(operation: operation, operands: operandShapes(context.inputShapes),
                                 constantIndex: constant == nil ? nil : (constantFirst ? 0 : context.inputShapes.count),
                                 constant: values, output: context.outputShape,
                                 activation: context.fusedActivation ?? activation)
        return operation.givesTruthValues ? kernel : IntegerResultKernel.bringing(kernel, to: type)
    }
}

extension Elementwise: ModelFileCodable {
    /// `Elementwise`.
    static var fileTypeName: String { "Elementwise" }

    /// Reads `operation` (required), `constant` (the axes after the batch axis, `[height, width,
    /// channels]` for an image; absent for none),
    /// `constantFirst` (false) and `activation` (`"none"`).
    convenience init(fields: JSONFields, name: String) throws {
        let operation: ElementwiseOperation = try fields.choice("operation")
        var constant: Shape? = nil
        if fields.has("constant") {
            let axes = try fields.intArray("constant", counts: 1 ... Shape.maximumRank - 1)
            guard axes.allSatisfy({ $0 >= 1 }) else {
                throw AnvilError(.invalidFile, "\(fields.context): field 'constant' \(axes) must have positive axes")
            }
            constant = Shape(unchecked: axes)
        }
        self.init(operation, constant: constant, constantFirst: try fields.bool("constantFirst", default: false),
                  activation: try fields.activation("activation", default: .none), name: name)
    }

    /// `operation`, `constant` (when there is one), `constantFirst`, `activation`.
    func encodeFields() throws -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = [("operation", .string(operation.rawValue))]
        if let constant {
            members.append(("constant", .array(constant.dimensions.map { .int($0) })))
        }
        return members + [("constantFirst", .bool(constantFirst)), ("activation", .activation(activation))]
    }
}
