/// The elements of a tensor known when the plan for an input shape is built: a shape
/// computation (`ShapeOf`, `Range`, `Gather` of a shape, ...) or a constant, the same for every
/// item of the batch. Integers and truth values are held as `Int64`, floats as `Float`.
///
/// Layers compute these from their inputs' shapes and known values (``Layer/value(for:values:)``);
/// a tensor whose value is known is never computed at `predict`: it is filled in once per plan.
public struct TensorValue: Hashable, Sendable, CustomStringConvertible {
    /// The shape of one item, with the element type.
    public let shape: Shape
    /// The elements, row-major, when the type is an integer or truth type.
    public let integers: [Int64]
    /// The elements, row-major, when the type is float32 (or bfloat16).
    public let floats: [Float]

    /// Integer (or truth) elements of `shape`, whose element type must be an integer type.
    public init(shape: Shape, integers: [Int64]) throws {
        guard shape.isValid || shape.dimensions.contains(0), shape.elementType.isInteger,
              shape.checkedCount == integers.count else {
            throw AnvilError(.invalidShape, "a \(shape) value needs \(shape.checkedCount.map(String.init) ?? "too many") integers, got \(integers.count)")
        }
        self.shape = shape
        self.integers = integers
        self.floats = []
    }

    /// Float elements of `shape` (float32).
    public init(shape: Shape, floats: [Float]) throws {
        guard shape.isValid || shape.dimensions.contains(0), !shape.elementType.isInteger,
              shape.checkedCount == floats.count else {
            throw AnvilError(.invalidShape, "a \(shape) value needs \(shape.checkedCount.map(String.init) ?? "too many") floats, got \(floats.count)")
        }
        self.shape = shape
        self.floats = floats
        self.integers = []
    }

    /// A vector of int64 elements (a shape, a list of indices).
    public static func int64(_ values: [Int]) -> TensorValue {
        try! TensorValue(shape: Shape(unchecked: [values.count], elementType: .int64), integers: values.map(Int64.init))
    }

    /// Whether the elements are integers (or truth values).
    public var isInteger: Bool { shape.elementType.isInteger }

    /// Elements in the value.
    public var count: Int { isInteger ? integers.count : floats.count }

    /// Each element as a double (exact for integers up to 2^53).
    public var doubles: [Double] { isInteger ? integers.map(Double.init) : floats.map(Double.init) }

    /// The elements as `Int`, for values used as shapes, axes or indices; throws for a float
    /// value or an element that does not fit.
    public func intElements(_ what: String) throws -> [Int] {
        guard isInteger else { throw AnvilError(.invalidShape, "\(what) must be integers, got a \(shape.elementType) value") }
        return integers.map { Int(truncatingIfNeeded: $0) }
    }

    /// The elements as float32 (integers rounded to the nearest float).
    public var floatElements: [Float] { isInteger ? integers.map(Float.init) : floats }

    /// The same elements as another type: floats truncate toward zero to integers, integers wrap
    /// to the type's width, anything non-zero is `true`; throws for a float that does not fit
    /// an `Int64`.
    public func converted(to type: ElementType) throws -> TensorValue {
        let target = shape.with(elementType: type)
        switch (isInteger, type.isInteger) {
        case (true, true):
            return try TensorValue(shape: target, integers: integers.map(type.wrapping))
        case (true, false):
            return try TensorValue(shape: target, floats: integers.map(Float.init))
        case (false, true):
            if type == .bool { return try TensorValue(shape: target, integers: floats.map { $0 != 0 ? 1 : 0 }) }
            return try TensorValue(shape: target, integers: floats.map { f in
                guard f.isFinite, abs(f) < 9.2e18 else {
                    throw AnvilError(.invalidShape, "cannot cast \(f) to \(type)")
                }
                return type.wrapping(Int64(f))
            })
        case (false, false):
            return try TensorValue(shape: target, floats: floats)
        }
    }

    /// The same elements with other axes (the count must match).
    public func reshaped(_ dimensions: [Int]) throws -> TensorValue {
        let target = try Shape(dimensions: dimensions, elementType: shape.elementType)
        return isInteger ? try TensorValue(shape: target, integers: integers) : try TensorValue(shape: target, floats: floats)
    }

    /// The value `copies` make from `inputs` (known values of one element type), of `shape`.
    static func moving(_ inputs: [TensorValue], by copies: [StridedCopy], into shape: Shape) throws -> TensorValue {
        let target = shape.with(elementType: inputs[0].shape.elementType)
        if inputs[0].isInteger {
            var out = [Int64](repeating: 0, count: shape.count)
            for copy in copies { copy.apply(inputs[copy.input].integers, into: &out) }
            return try TensorValue(shape: target, integers: out)
        }
        var out = [Float](repeating: 0, count: shape.count)
        for copy in copies { copy.apply(inputs[copy.input].floats, into: &out) }
        return try TensorValue(shape: target, floats: out)
    }

    /// `[1, 2, 3] int64`, or the first elements followed by `...` when there are many.
    public var description: String {
        let shown = isInteger ? integers.prefix(8).map(String.init) : floats.prefix(8).map { "\($0)" }
        return "[\(shown.joined(separator: ", "))\(count > 8 ? ", ..." : "")] \(shape)"
    }
}
