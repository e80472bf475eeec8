/// Gives a tensor new axes without moving its values (ONNX `Reshape`, PyTorch `view`):
/// row-major over Anvil's channels-last layout. `shape` lists the axes after the batch axis
/// (0 to 7 of them); `-1` (at most one) is inferred from the element count, and `0` copies the
/// input's axis at the same position (ONNX's default, `allowzero = 0`).
///
/// ```swift
/// image --> Reshape([-1, 64])    // [N, H, W, 64] → [N, H·W, 64], a sequence
/// [image, computed] --> Reshape()  // the axes a shape computation gives (an int64 vector)
/// ```
public final class Reshape: LayoutLayer {
    /// The axes after the batch axis; `-1` is inferred, `0` copies the input's axis. Ignored
    /// when ``shapeFromInput``.
    public let shape: [Int]
    /// Whether the axes are the known value of a second input (an int64 vector computed from
    /// shapes when the plan is built) rather than ``shape``.
    public let shapeFromInput: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(_ shape: [Int], name: String? = nil) {
        self.shape = shape
        self.shapeFromInput = false
        self.name = name
    }

    /// A reshape to the axes its second input holds (`[x, shape] --> Reshape()`).
    public init(name: String? = nil) {
        self.shape = []
        self.shapeFromInput = true
        self.name = name
    }

    /// `reshape`.
    public var namePrefix: String { "reshape" }

    /// One input, or the tensor and its target axes.
    public var inputCountRange: ClosedRange<Int> { shapeFromInput ? 2 ... 2 : 1 ... 1 }

    /// The target shape of the ``shape`` option with `0` and `-1` resolved.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        try resolve(shape, input: inputs[0])
    }

    /// The target shape from the option or from the second input's known value.
    public func outputShape(for inputs: [Shape], values: [TensorValue?]) throws -> Shape {
        guard shapeFromInput else { return try resolve(shape, input: inputs[0]) }
        guard let target = values[1] else {
            throw AnvilError(.invalidShape, "its target shape (input 2) must be known when the plan is built: a constant or a shape computation, not a tensor computed at predict")
        }
        guard target.shape.rank == 2 else {
            throw AnvilError(.invalidShape, "its target shape (input 2) must be a vector, got \(target.shape)")
        }
        return try resolve(try target.intElements("the target shape"), input: inputs[0])
    }

    /// Any element type: the values do not move.
    public var acceptsTypedInputs: Bool { true }

    /// The shape of the known value of input 2 is not the tensor's: only input 1 moves.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        guard let data = values[0] else { return nil }
        return try data.reshaped(try outputShape(for: inputs, values: values).dimensions)
    }

    /// `shape` with `0` and `-1` resolved against `input`; the element count must not change.
    func resolve(_ shape: [Int], input: Shape) throws -> Shape {
        let dims = input.dimensions
        guard shape.count < Shape.maximumRank else {
            throw AnvilError(.invalidOption, "shape \(shape) has \(shape.count) axes; at most \(Shape.maximumRank - 1) follow the batch axis")
        }
        var resolved: [Int] = []
        for (i, value) in shape.enumerated() {
            switch value {
            case 0:
                guard i < dims.count else {
                    throw AnvilError(.invalidOption, "shape \(shape): 0 at position \(i) copies an input axis, but \(input) has only \(dims.count)")
                }
                resolved.append(dims[i])
            case -1, 1...: resolved.append(value)
            default: throw AnvilError(.invalidOption, "shape \(shape) has \(value); axes are positive, 0 (copy) or -1 (inferred)")
            }
        }
        let unknown = resolved.indices.filter { resolved[$0] == -1 }
        guard unknown.count <= 1 else { throw AnvilError(.invalidOption, "shape \(shape) has more than one -1") }
        let known = try checkedProduct(resolved.filter { $0 != -1 }, what: "reshaped size")
        if let i = unknown.first {
            guard known > 0, input.count % known == 0 else {
                throw AnvilError(.invalidShape, "cannot reshape \(input) (\(input.count) values) to \(shape)")
            }
            resolved[i] = input.count / known
        }
        guard try checkedProduct(resolved, what: "reshaped size") == input.count else {
            throw AnvilError(.invalidShape, "cannot reshape \(input) (\(input.count) values) to \(shape) (\(resolved.reduce(1, *)) values)")
        }
        return try Shape(dimensions: resolved, elementType: input.elementType)
    }

    /// No copy: the values keep their order.
    func copies(for inputs: [Shape], output: Shape) throws -> [StridedCopy]? { nil }

    /// A copy: the values keep their order.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        CopyKernel(shape: context.inputShapes[0], channelsFirst: false, activation: .none)
    }
}

extension Reshape: ModelFileCodable {
    /// `Reshape`.
    static var fileTypeName: String { "Reshape" }

    /// Reads `shape` (0 to 7 integers), or `shapeFromInput` true (a second input holds it).
    convenience init(fields: JSONFields, name: String) throws {
        if try fields.bool("shapeFromInput", default: false) {
            self.init(name: name)
        } else {
            self.init(try fields.intArray("shape", counts: 0 ... Shape.maximumRank - 1), name: name)
        }
    }

    /// `shape`, or `shapeFromInput`.
    func encodeFields() throws -> [(String, JSONValue)] {
        shapeFromInput ? [("shapeFromInput", .bool(true))] : [("shape", .array(shape.map { .int($0) }))]
    }
}

/// Removes axes of extent 1 (ONNX `Squeeze`): `axes` count the batch axis as 0 (which stays);
/// empty removes every axis of extent 1 after the batch axis. The values do not move.
public final class Squeeze: LayoutLayer {
    /// The axes to remove (each of extent 1); empty for all of them.
    public let axes: [Int]
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(axes: [Int] = [], name: String? = nil) {
        self.axes = axes
        self.name = name
    }

    /// `squeeze`.
    public var namePrefix: String { "squeeze" }

    /// The input's axes without the removed ones.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let input = inputs[0], dims = input.dimensions
        let removed = try Set(axes.map { try LayoutAxes.resolve($0, rank: input.rank, option: "axis") })
        guard removed.count == axes.count else { throw AnvilError(.invalidOption, "axes \(axes) name an axis twice") }
        for axis in removed where dims[axis - 1] != 1 {
            throw AnvilError(.invalidShape, "axis \(axis) of \(input) has extent \(dims[axis - 1]), not 1")
        }
        let kept = dims.indices.filter { axes.isEmpty ? dims[$0] != 1 : !removed.contains($0 + 1) }
        return try Shape(dimensions: kept.map { dims[$0] }, elementType: input.elementType)
    }

    /// Any element type: the values only move.
    public var acceptsTypedInputs: Bool { true }

    /// The known inputs' elements moved, when every input is known.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        try movedValue(for: inputs, values: values)
    }

    /// No copy: the values keep their order.
    func copies(for inputs: [Shape], output: Shape) throws -> [StridedCopy]? { nil }

    /// A copy: the values keep their order.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        CopyKernel(shape: context.inputShapes[0], channelsFirst: false, activation: .none)
    }
}

extension Squeeze: ModelFileCodable {
    /// `Squeeze`.
    static var fileTypeName: String { "Squeeze" }

    /// Reads `axes` (`[]`).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(axes: fields.has("axes") ? try fields.intArray("axes", counts: 0 ... Shape.maximumRank - 1) : [], name: name)
    }

    /// `axes`.
    func encodeFields() throws -> [(String, JSONValue)] { [("axes", .array(axes.map { .int($0) }))] }
}

/// Inserts axes of extent 1 (ONNX `Unsqueeze`): `axes` are positions in the output, counting the
/// batch axis as 0 (a new axis cannot come before it). The values do not move.
public final class Unsqueeze: LayoutLayer {
    /// Where the new axes go, in the output's numbering.
    public let axes: [Int]
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(axes: [Int], name: String? = nil) {
        self.axes = axes
        self.name = name
    }

    /// `unsqueeze`.
    public var namePrefix: String { "unsqueeze" }

    /// The input's axes with the new ones inserted.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let input = inputs[0]
        let rank = input.rank + axes.count
        guard !axes.isEmpty, rank <= Shape.maximumRank else {
            throw AnvilError(.invalidOption, "axes \(axes) on \(input) give rank \(rank); Unsqueeze adds axes up to rank \(Shape.maximumRank)")
        }
        let added = try Set(axes.map { try LayoutAxes.resolve($0, rank: rank, option: "axis") })
        guard added.count == axes.count else { throw AnvilError(.invalidOption, "axes \(axes) name an axis twice") }
        var source = input.dimensions.makeIterator()
        return try Shape(dimensions: (1 ..< rank).map { added.contains($0) ? 1 : source.next()! }, elementType: input.elementType)
    }

    /// Any element type: the values only move.
    public var acceptsTypedInputs: Bool { true }

    /// The known inputs' elements moved, when every input is known.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        try movedValue(for: inputs, values: values)
    }

    /// No copy: the values keep their order.
    func copies(for inputs: [Shape], output: Shape) throws -> [StridedCopy]? { nil }

    /// A copy: the values keep their order.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        CopyKernel(shape: context.inputShapes[0], channelsFirst: false, activation: .none)
    }
}

extension Unsqueeze: ModelFileCodable {
    /// `Unsqueeze`.
    static var fileTypeName: String { "Unsqueeze" }

    /// Reads `axes` (required).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(axes: try fields.intArray("axes", counts: 1 ... Shape.maximumRank - 1), name: name)
    }

    /// `axes`.
    func encodeFields() throws -> [(String, JSONValue)] { [("axes", .array(axes.map { .int($0) }))] }
}
