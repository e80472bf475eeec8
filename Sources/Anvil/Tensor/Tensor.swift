/// A batch of channels-last float32 values: `batch × height × width × channels`.
public struct Tensor: Equatable, Sendable {
    /// Images in the batch.
    public var batch: Int
    /// The shape of one image.
    public var shape: Shape
    /// The values, `N × H × W × C` row-major.
    public var values: [Float]

    /// Creates a tensor; `values.count` must equal `batch * shape.count`.
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

    /// The values of image `index` of the batch.
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
