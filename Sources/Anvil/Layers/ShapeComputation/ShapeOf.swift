/// The axes of its input as an int64 vector (ONNX `Shape`, PyTorch `x.shape`), known when the
/// plan for an input size is built: a shape computation that follows it (a `Reshape` to a
/// computed shape, a `Range` over a computed length) is evaluated then, once per size.
///
/// The axes are Anvil's after the batch axis (an image gives `[H, W, C]`); `start` and `end`
/// pick a part of them as Python's `dims[start:end]` would.
///
/// ```swift
/// let size = image --> ShapeOf(start: 0, end: 2)   // [H, W], computed once per input size
/// ```
public final class ShapeOf: Layer {
    /// The first axis reported (negative counts from the end).
    public let start: Int
    /// The axis the report stops before (`nil`: the last).
    public let end: Int?
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(start: Int = 0, end: Int? = nil, name: String? = nil) {
        self.start = start
        self.end = end
        self.name = name
    }

    /// `shapeof`.
    public var namePrefix: String { "shapeof" }

    /// Any element type: only the shape is read.
    public var acceptsTypedInputs: Bool { true }

    /// The reported axes of `input`.
    func reported(_ input: Shape) -> [Int] {
        let dims = input.dimensions
        func clamp(_ index: Int) -> Int { min(max(index < 0 ? index + dims.count : index, 0), dims.count) }
        let lower = clamp(start), upper = clamp(end ?? dims.count)
        return lower < upper ? Array(dims[lower ..< upper]) : []
    }

    /// An int64 vector of the reported axes.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        Shape(unchecked: [reported(inputs[0]).count], elementType: .int64)
    }

    /// The reported axes.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? {
        .int64(reported(inputs[0]))
    }

    /// Never runs: its value is known when the plan is built.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        throw AnvilError(.internalError, "ShapeOf runs when the plan is built, never at predict")
    }
}

extension ShapeOf: ModelFileCodable {
    /// `ShapeOf`.
    static var fileTypeName: String { "ShapeOf" }

    /// Reads `start` (0) and `end` (absent: the last axis).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(start: try fields.int("start", default: 0), end: fields.has("end") ? try fields.int("end") : nil, name: name)
    }

    /// `start`, and `end` when set.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("start", .int(start))] + (end.map { [("end", JSONValue.int($0))] } ?? [])
    }
}
