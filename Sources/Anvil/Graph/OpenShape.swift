/// The shape of a tensor in a network whose input size is left open: each dimension is a
/// number, or `nil` when it depends on the size of the input given to `predict`.
///
/// ```swift
/// let input = Input(channels: 3)                 // an image, height and width open
/// let model = try Model(input: input, output: input --> Convolution(kernel: (3, 3), channels: 8))
/// print(model.openOutputShapes[0])               // (?, ?, 8)
/// ```
///
/// Like ``Shape`` it has a rank (4 for an image, 3 for a sequence whose `width` is its length,
/// 2 for a vector); a model whose inputs are all fixed has no open dimension anywhere.
public struct OpenShape: Hashable, Sendable, CustomStringConvertible {
    /// Rows, or `nil` when open (1 below rank 4).
    public var height: Int?
    /// Columns (a sequence's length), or `nil` when open (1 below rank 3).
    public var width: Int?
    /// Channels, or `nil` when they depend on the input size (a `Flatten` of an open tensor).
    public var channels: Int?
    /// Axes counting the batch axis, as ``Shape/rank``.
    public internal(set) var rank: Int

    /// Creates an image shape (rank 4); `nil` dimensions are open.
    public init(height: Int?, width: Int?, channels: Int?) {
        self.init(height: height, width: width, channels: channels, rank: 4)
    }

    /// A shape of `rank` stored as `height × width × channels`.
    init(height: Int?, width: Int?, channels: Int?, rank: Int) {
        self.height = height
        self.width = width
        self.channels = channels
        self.rank = rank
    }

    /// A `[N, length, channels]` sequence whose length may be open (`nil`).
    public static func sequence(length: Int?, channels: Int) -> OpenShape {
        OpenShape(height: 1, width: length, channels: channels, rank: 3)
    }

    /// The fixed shape `shape`: no dimension open.
    public init(_ shape: Shape) {
        self.init(height: shape.height, width: shape.width, channels: shape.channels, rank: shape.rank)
    }

    /// True when at least one dimension is open.
    public var isOpen: Bool { height == nil || width == nil || channels == nil }

    /// The shape itself when no dimension is open.
    public var fixed: Shape? {
        guard let height, let width, let channels else { return nil }
        return Shape(height: height, width: width, channels: channels, rank: rank)
    }

    /// The shape with `size` in place of every open dimension.
    func filled(height fillHeight: Int, width fillWidth: Int, channels fillChannels: Int = 0) -> Shape {
        Shape(height: height ?? fillHeight, width: width ?? fillWidth, channels: channels ?? fillChannels, rank: rank)
    }

    /// Whether `shape` has this one's rank and every fixed dimension (open dimensions take any size).
    public func accepts(_ shape: Shape) -> Bool {
        shape.rank == rank && (height ?? shape.height) == shape.height && (width ?? shape.width) == shape.width
            && (channels ?? shape.channels) == shape.channels
    }

    /// The axes after the batch axis, as ``Shape/dimensions``, `nil` where open.
    public var dimensions: [Int?] {
        switch rank {
        case 1: []
        case 2: [channels]
        case 3: [width, channels]
        default: [height, width, channels]
        }
    }

    /// As ``Shape/description`` with `?` for an open dimension, e.g. `(?, ?, 3)`.
    public var description: String {
        if let fixed { return fixed.description }
        return "(" + dimensions.map { $0.map(String.init) ?? "?" }.joined(separator: ", ") + ")"
    }
}
