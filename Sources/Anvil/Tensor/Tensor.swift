/// A batch of values: `batch ×` one item's ``shape`` (an image is channels-last,
/// `batch × height × width × channels`), row-major.
///
/// A float32 tensor holds ``values``. A tensor of integers or truth values (token ids, indices,
/// a mask; its shape's ``Shape/elementType`` says which) is made with
/// ``init(batch:shape:integers:)`` or ``init(batch:shape:truths:)`` and read with ``integers``
/// or ``truths``; Anvil holds its elements as float32 numbers in ``values``, exact up to
/// ``ElementType/exactIntegerLimit`` in magnitude.
/// ```swift
/// let tokens = try Tensor(batch: 1, shape: Shape(dimensions: [4], elementType: .int64), integers: [101, 7, 42, 102])
/// ```
public struct Tensor: Equatable, Sendable {
    /// Items in the batch.
    public var batch: Int
    /// The shape of one item, with its element type.
    public var shape: Shape
    /// The elements, row-major (for an integer or truth tensor, each as a float32 number).
    public var values: [Float]

    /// The type of the elements.
    public var elementType: ElementType { shape.elementType }

    /// Creates a tensor of integers (`shape`'s element type an integer type, `int64` for
    /// instance): `integers.count` must equal `batch * shape.count`; throws for an element
    /// beyond ``ElementType/exactIntegerLimit`` in magnitude, or one the type cannot hold.
    public init(batch: Int, shape: Shape, integers: [Int64]) throws {
        guard shape.elementType.isInteger, shape.elementType != .bool else {
            throw AnvilError(.invalidInput, "integers need an integer element type; the shape is \(shape.elementType)")
        }
        let limit = ElementType.exactIntegerLimit
        if let position = integers.firstIndex(where: { $0 > limit || $0 < -limit || shape.elementType.wrapping($0) != $0 }) {
            let value = integers[position]
            throw AnvilError(.invalidInput, shape.elementType.wrapping(value) != value
                ? "element \(position) (\(value)) does not fit \(shape.elementType)"
                : "element \(position) (\(value)) is beyond ±2^24, the integers Anvil holds exactly")
        }
        try self.init(batch: batch, shape: shape, values: integers.map(Float.init))
    }

    /// Creates a tensor of truth values (`shape`'s element type must be `bool`):
    /// `truths.count` must equal `batch * shape.count`.
    public init(batch: Int, shape: Shape, truths: [Bool]) throws {
        guard shape.elementType == .bool else {
            throw AnvilError(.invalidInput, "truth values need the bool element type; the shape is \(shape.elementType)")
        }
        try self.init(batch: batch, shape: shape, values: truths.map { $0 ? 1 : 0 })
    }

    /// The elements as integers (a float truncated toward zero; an infinity or a value beyond
    /// `Int64` saturates, NaN reads 0).
    public var integers: [Int64] {
        values.map { v in v.isNaN ? 0 : v >= 9.2e18 ? .max : v <= -9.2e18 ? .min : Int64(v) }
    }

    /// The elements as truth values (non-zero is `true`).
    public var truths: [Bool] { values.map { $0 != 0 } }

    /// Creates a tensor; `values.count` must equal `batch * shape.count` (of any element type:
    /// for an integer or truth type each element as a float32 number).
    public init(batch: Int, shape: Shape, values: [Float]) throws {
        guard batch > 0, shape.isValid else {
            throw AnvilError(.invalidInput, "tensor batch \(batch) × \(shape) has a non-positive dimension")
        }
        let (needed, overflow) = batch.multipliedReportingOverflow(by: shape.count)
        guard !overflow, values.count == needed else {
            throw AnvilError(.invalidInput, "tensor \(batch) × \(shape) needs \(overflow ? "too many" : String(needed)) values, got \(values.count)")
        }
        self.batch = batch
        self.shape = shape
        self.values = values
    }

    /// Creates a zero-filled tensor.
    public init(zeros shape: Shape, batch: Int = 1) {
        self.batch = batch
        self.shape = shape
        self.values = [Float](repeating: 0, count: batch * shape.count)
    }

    /// The values of item `index` of the batch.
    public func image(_ index: Int) -> ArraySlice<Float> {
        values[index * shape.count ..< (index + 1) * shape.count]
    }

    /// The index of the largest channel of each pixel of each image (for a classifier:
    /// the predicted class of each image).
    public func argmax() -> [Int] {
        let c = shape.channels
        return stride(from: 0, to: values.count, by: c).map { start in
            var best = start
            for i in start ..< start + c where values[i] > values[best] { best = i }
            return best - start
        }
    }
}
