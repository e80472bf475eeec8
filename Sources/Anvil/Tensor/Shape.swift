/// The shape of one image-like tensor: height × width × channels (channels-last).
///
/// Vectors (the output of `Dense`, `Flatten`, global pooling) are `1 × 1 × n`.
/// The batch size is not part of a shape; it is chosen at `predict`.
public struct Shape: Hashable, Sendable, CustomStringConvertible {
    /// Rows.
    public var height: Int
    /// Columns.
    public var width: Int
    /// Channels (features).
    public var channels: Int

    /// Creates a shape.
    public init(height: Int, width: Int, channels: Int) {
        self.height = height
        self.width = width
        self.channels = channels
    }

    /// A `1 × 1 × n` vector shape.
    public static func vector(_ n: Int) -> Shape { Shape(height: 1, width: 1, channels: n) }

    /// Elements per image, or `nil` if the product overflows.
    public var checkedCount: Int? {
        let (hw, o1) = height.multipliedReportingOverflow(by: width)
        let (hwc, o2) = hw.multipliedReportingOverflow(by: channels)
        return o1 || o2 ? nil : hwc
    }

    /// Elements per image.
    public var count: Int { height * width * channels }

    /// True when every dimension is positive.
    public var isValid: Bool { height > 0 && width > 0 && channels > 0 && checkedCount != nil }

    /// `(H, W, C)` as in Keras summaries.
    public var description: String { "(\(height), \(width), \(channels))" }
}
