import Anvil

/// How a model's tensors are laid out on the wire — in requests, responses and metadata — which
/// is how its model file declares them. Anvil computes channels-last (`N × H × W × C`); a model
/// declared channels-first (an `.onnx` file: `N × C × H × W`) is served in its own layout and
/// transposed at the server's edge, so a client sends what the model's authors documented.
public enum WireLayout: String, Sendable, CaseIterable {
    /// `[N, H, W, C]` images, `[N, L, C]` sequences, `[N, C]` vectors: Anvil's own (model files).
    case channelsLast = "NHWC"
    /// `[N, C, H, W]` images, `[N, C, L]` sequences, `[N, C]` vectors (ONNX, PyTorch).
    case channelsFirst = "NCHW"

    /// The name of the wire axes of a tensor of `rank` (counting the batch axis) where the
    /// layout matters: `"NHWC"`/`"NCHW"` for images, `"NLC"`/`"NCL"` for sequences, else `nil`.
    public func axesName(rank: Int) -> String? {
        switch (rank, self) {
        case (4, _): rawValue
        case (3, .channelsLast): "NLC"
        case (3, .channelsFirst): "NCL"
        default: nil
        }
    }

    /// The wire axes after the batch axis of a tensor of Anvil shape `shape`.
    public func dimensions(of shape: Shape) -> [Int] {
        order(shape.dimensions)
    }

    /// The wire axes after the batch axis of an open shape (`nil` where open).
    public func dimensions(of shape: OpenShape) -> [Int?] {
        order(shape.dimensions)
    }

    /// The Anvil shape of a tensor whose wire axes after the batch axis are `dimensions`.
    public func shape(fromDimensions dimensions: [Int]) throws -> Shape {
        switch self {
        case .channelsLast: return try Shape(dimensions: dimensions)
        case .channelsFirst:
            guard dimensions.count >= 2 else { return try Shape(dimensions: dimensions) }
            return try Shape(dimensions: Array(dimensions.dropFirst()) + [dimensions[0]])
        }
    }

    /// The wire order of Anvil's axes (channels last) after the batch axis.
    private func order<T>(_ axes: [T]) -> [T] {
        guard self == .channelsFirst, axes.count >= 2 else { return axes }
        return [axes[axes.count - 1]] + axes.dropLast()
    }

    /// `batch` images of Anvil shape `shape` in this layout, from Anvil's channels-last values
    /// (floats, integers or truth values alike).
    public func wireValues<Element>(fromChannelsLast values: [Element], batch: Int, shape: Shape) -> [Element] {
        guard self == .channelsFirst, shape.rank >= 3, shape.channels > 1 else { return values }
        return Self.transposed(values, batch: batch, rows: shape.height * shape.width, columns: shape.channels)
    }

    /// Anvil's channels-last values of `batch` images of Anvil shape `shape` sent in this layout
    /// (floats, integers or truth values alike).
    public func channelsLastValues<Element>(fromWire values: [Element], batch: Int, shape: Shape) -> [Element] {
        guard self == .channelsFirst, shape.rank >= 3, shape.channels > 1 else { return values }
        return Self.transposed(values, batch: batch, rows: shape.channels, columns: shape.height * shape.width)
    }

    /// Each of `batch` `rows × columns` matrices of `values` transposed (pixels × channels to
    /// channels × pixels and back).
    private static func transposed<Element>(_ values: [Element], batch: Int, rows: Int, columns: Int) -> [Element] {
        // Every element is overwritten; starting from a copy needs no zero of the element type.
        var result = values
        values.withUnsafeBufferPointer { source in
            result.withUnsafeMutableBufferPointer { target in
                for image in 0 ..< batch {
                    let base = image * rows * columns
                    for row in 0 ..< rows {
                        for column in 0 ..< columns { target[base + column * rows + row] = source[base + row * columns + column] }
                    }
                }
            }
        }
        return result
    }
}
