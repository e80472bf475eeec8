/// The shape of a tensor in a network whose input size is left open: each dimension is a
/// number, or `nil` when it depends on the size of the input given to `predict`.
///
/// ```swift
/// let input = Input(channels: 3)                 // height and width open
/// let model = try Model(input: input, output: input --> Convolution(kernel: (3, 3), channels: 8))
/// print(model.openOutputShapes[0])               // (?, ?, 8)
/// ```
///
/// Like ``Shape`` it has a rank (1 to 4 counting the batch axis) and is stored as
/// height × width × channels: an open sequence length (`Input(length: nil, channels: 16)`) is an
/// open width. A model whose inputs are all fixed has no open dimension anywhere.
public struct OpenShape: Hashable, Sendable, CustomStringConvertible {
    /// Rows, or `nil` when open (1 below rank 4).
    public var height: Int?
    /// Columns (the length of a sequence), or `nil` when open (1 below rank 3).
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

    /// Creates a shape from its axes after the batch axis, as ``Shape/init(dimensions:)``,
    /// with `nil` for an open one: `[C]` (a vector), `[L, C]` (a sequence), `[H, W, C]` (an
    /// image). Throws `invalidShape` for more than three axes.
    public init(dimensions: [Int?]) throws {
        switch dimensions.count {
        case 0: self.init(height: 1, width: 1, channels: 1, rank: 1)
        case 1: self.init(height: 1, width: 1, channels: dimensions[0], rank: 2)
        case 2: self.init(height: 1, width: dimensions[0], channels: dimensions[1], rank: 3)
        case 3: self.init(height: dimensions[0], width: dimensions[1], channels: dimensions[2], rank: 4)
        default:
            throw AnvilError(.invalidShape, "a shape has at most 3 axes after the batch axis (rank 4), got \(dimensions.count)")
        }
    }

    /// The fixed shape `shape`: no dimension open.
    public init(_ shape: Shape) {
        self.init(height: shape.height, width: shape.width, channels: shape.channels, rank: shape.rank)
    }

    /// True when at least one dimension is open.
    public var isOpen: Bool { height == nil || width == nil || channels == nil }

    /// The axes after the batch axis (`rank - 1` of them), open ones `nil`.
    public var dimensions: [Int?] {
        switch rank {
        case 1: []
        case 2: [channels]
        case 3: [width, channels]
        default: [height, width, channels]
        }
    }

    /// The shape itself when no dimension is open.
    public var fixed: Shape? {
        guard let height, let width, let channels else { return nil }
        return Shape(height: height, width: width, channels: channels, rank: rank)
    }

    /// The shape with its open height and width set to `height` and `width` (channels fixed).
    func filled(height: Int, width: Int) -> Shape {
        Shape(height: self.height ?? height, width: self.width ?? width, channels: channels ?? 0, rank: rank)
    }

    /// The shape with its open dimensions as 0.
    var zeroOpen: Shape { Shape(height: height ?? 0, width: width ?? 0, channels: channels ?? 0, rank: rank) }

    /// Whether `shape` has this rank and every fixed dimension of this one (open dimensions take any size).
    public func accepts(_ shape: Shape) -> Bool {
        shape.rank == rank && (height ?? shape.height) == shape.height && (width ?? shape.width) == shape.width
            && (channels ?? shape.channels) == shape.channels
    }

    /// The axes after the batch axis with `?` for an open one, e.g. `(?, ?, 3)` for an image,
    /// `(?, 16)` for a sequence.
    public var description: String {
        if let fixed { return fixed.description }
        return "(\(dimensions.map { $0.map(String.init) ?? "?" }.joined(separator: ", ")))"
    }
}

extension Shape {
    /// The size an open input takes, for messages: `H×W` for an image, `length L` for a
    /// sequence, the shape otherwise.
    var sizeDescription: String {
        switch rank {
        case 4: "\(height)×\(width)"
        case 3: "length \(width)"
        default: description
        }
    }
}
