/// The shape of a tensor in a network whose input size is left open: each dimension is a
/// number, or `nil` when it depends on the size of the input given to `predict`.
///
/// ```swift
/// let input = Input(channels: 3)                 // height and width open
/// let model = try Model(input: input, output: input --> Convolution(kernel: (3, 3), channels: 8))
/// print(model.openOutputShapes[0])               // (?, ?, 8)
/// ```
///
/// A model whose inputs are all fixed has no open dimension anywhere.
public struct OpenShape: Hashable, Sendable, CustomStringConvertible {
    /// Rows, or `nil` when open.
    public var height: Int?
    /// Columns, or `nil` when open.
    public var width: Int?
    /// Channels, or `nil` when they depend on the input size (a `Flatten` of an open tensor).
    public var channels: Int?

    /// Creates a shape; `nil` dimensions are open.
    public init(height: Int?, width: Int?, channels: Int?) {
        self.height = height
        self.width = width
        self.channels = channels
    }

    /// The fixed shape `shape`: no dimension open.
    public init(_ shape: Shape) {
        self.init(height: shape.height, width: shape.width, channels: shape.channels)
    }

    /// True when at least one dimension is open.
    public var isOpen: Bool { height == nil || width == nil || channels == nil }

    /// The shape itself when no dimension is open.
    public var fixed: Shape? {
        guard let height, let width, let channels else { return nil }
        return Shape(height: height, width: width, channels: channels)
    }

    /// Whether `shape` has every fixed dimension of this one (open dimensions take any size).
    public func accepts(_ shape: Shape) -> Bool {
        (height ?? shape.height) == shape.height && (width ?? shape.width) == shape.width
            && (channels ?? shape.channels) == shape.channels
    }

    /// `(H, W, C)` with `?` for an open dimension, e.g. `(?, ?, 3)`.
    public var description: String {
        if let fixed { return fixed.description }
        func text(_ value: Int?) -> String { value.map(String.init) ?? "?" }
        return "(\(text(height)), \(text(width)), \(text(channels)))"
    }
}
