/// Picks each value from one of two operands by a mask: `x` where `condition` is non-zero, else
/// `y` (ONNX `Where`): `[mask, scores, fill] --> Select()`. The operands broadcast as NumPy's do,
/// aligned on their last axes. One of the three may be a constant (parameter kind
/// ``ParameterKind/constant``, of shape `constant` after the batch axis) at `constantPosition`
/// (0 the condition, 1 `x`, 2 `y`), the other two the layer's inputs in order.
public final class Select: Layer {
    /// The constant operand's shape after the batch axis, or nil when all three are inputs.
    public let constant: Shape?
    /// Which operand the constant is (0 condition, 1 x, 2 y).
    public let constantPosition: Int
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(constant: Shape? = nil, constantPosition: Int = 2, name: String? = nil) {
        self.constant = constant
        self.constantPosition = constantPosition
        self.name = name
    }

    /// `select`.
    public var namePrefix: String { "select" }
    /// Three inputs, or two beside the constant.
    public var inputCountRange: ClosedRange<Int> { constant == nil ? 3 ... 3 : 2 ... 2 }

    /// The three operands' shapes in order (condition, x, y).
    func operands(_ inputs: [Shape]) throws -> [Shape] {
        guard let constant else { return inputs }
        guard (0 ... 2).contains(constantPosition) else {
            throw AnvilError(.invalidOption, "constantPosition \(constantPosition) must be 0 (the condition), 1 (x) or 2 (y)")
        }
        var shapes = inputs
        shapes.insert(constant, at: constantPosition)
        return shapes
    }

    /// The broadcast of the three operands, of the type of `x` (of `y` when `x` is the constant).
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let shapes = try operands(inputs)
        let valueType = constant != nil && constantPosition == 1 ? shapes[2].elementType : shapes[1].elementType
        return try Elementwise.broadcast(shapes).with(elementType: valueType)
    }
    /// A condition of any type (non-zero selects `x`); values of any type.
    public var acceptsTypedInputs: Bool { true }

    /// The constant operand, if any.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] {
        constant.map { [ParameterSpec(.constant, count: $0.count)] } ?? []
    }

    /// The selection kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let shapes = try operands(context.inputShapes)
        let output = try outputShape(for: context.inputShapes)
        let values = constant == nil ? [] : try context.parameter(.constant).values
        return SelectKernel(positions: shapes.map { Elementwise.broadcastPositions($0, to: output).map { Int32($0) } },
                            itemCounts: shapes.enumerated().map { constant != nil && $0.offset == constantPosition ? 0 : $0.element.count },
                            constantPosition: constant == nil ? nil : constantPosition, constant: values)
    }
}

extension Select: ModelFileCodable {
    /// `Select`.
    static var fileTypeName: String { "Select" }

    /// Reads `constant` (absent: none; the shape after the batch axis) and `constantPosition` (2).
    convenience init(fields: JSONFields, name: String) throws {
        let constant = fields.has("constant") ? Shape(unchecked: try fields.intArray("constant", counts: 1 ... Shape.maximumRank - 1)) : nil
        self.init(constant: constant, constantPosition: try fields.int("constantPosition", default: 2), name: name)
    }

    /// `constant` and `constantPosition` when there is a constant.
    func encodeFields() throws -> [(String, JSONValue)] {
        guard let constant else { return [] }
        return [("constant", .array(constant.dimensions.map { .int($0) })), ("constantPosition", .int(constantPosition))]
    }
}
