/// The shape of one tensor of a batch, in Anvil's channels-last memory layout.
///
/// A shape has a rank of 1 to 4 counting the batch axis (the batch size itself is not part of
/// a shape; it is chosen at `predict`). Whatever the rank, the values are stored as
/// height × width × channels:
///
/// | rank | axes | stored as | made by |
/// |---|---|---|---|
/// | 1 | `[N]` | 1 × 1 × 1 | `Shape.scalar` |
/// | 2 | `[N, C]` (a vector) | 1 × 1 × C | `Shape.vector(c)` |
/// | 3 | `[N, L, C]` (a sequence) | 1 × L × C | `Shape.sequence(length:channels:)` |
/// | 4 | `[N, H, W, C]` (an image) | H × W × C | `Shape(height:width:channels:)` |
///
/// Layout layers (`Transpose`, `Reshape`, `Slice`, ...) index these axes with the batch axis as
/// axis 0: for an image, axis 1 is the height, 2 the width and 3 the channels.
public struct Shape: Hashable, Sendable, CustomStringConvertible {
    /// Rows (1 below rank 4).
    public var height: Int
    /// Columns (the length of a sequence; 1 below rank 3).
    public var width: Int
    /// Channels (features; 1 at rank 1).
    public var channels: Int
    /// Axes counting the batch axis: 1 (one value per item), 2 (vector), 3 (sequence) or 4 (image).
    public internal(set) var rank: Int

    /// Creates an image shape (rank 4).
    public init(height: Int, width: Int, channels: Int) {
        self.height = height
        self.width = width
        self.channels = channels
        self.rank = 4
    }

    /// A shape of `rank` stored as `height × width × channels`.
    init(height: Int, width: Int, channels: Int, rank: Int) {
        self.height = height
        self.width = width
        self.channels = channels
        self.rank = rank
    }

    /// Creates a shape from its axes after the batch axis: `[]` (rank 1), `[C]` (a vector),
    /// `[L, C]` (a sequence) or `[H, W, C]` (an image). Throws `invalidShape` for more than
    /// three axes.
    public init(dimensions: [Int]) throws {
        switch dimensions.count {
        case 0: self.init(height: 1, width: 1, channels: 1, rank: 1)
        case 1: self.init(height: 1, width: 1, channels: dimensions[0], rank: 2)
        case 2: self.init(height: 1, width: dimensions[0], channels: dimensions[1], rank: 3)
        case 3: self.init(height: dimensions[0], width: dimensions[1], channels: dimensions[2], rank: 4)
        default:
            throw AnvilError(.invalidShape, "a shape has at most 3 axes after the batch axis (rank 4), got \(dimensions)")
        }
    }

    /// A `[N, n]` vector, stored `1 × 1 × n`.
    public static func vector(_ n: Int) -> Shape { Shape(height: 1, width: 1, channels: n, rank: 2) }

    /// A `[N, length, channels]` sequence, stored `1 × length × channels`.
    public static func sequence(length: Int, channels: Int) -> Shape {
        Shape(height: 1, width: length, channels: channels, rank: 3)
    }

    /// A `[N]` shape: one value per batch item.
    public static var scalar: Shape { Shape(height: 1, width: 1, channels: 1, rank: 1) }

    /// The axes after the batch axis (`rank - 1` of them).
    public var dimensions: [Int] {
        switch rank {
        case 1: []
        case 2: [channels]
        case 3: [width, channels]
        default: [height, width, channels]
        }
    }

    /// Elements per image, or `nil` if the product overflows.
    public var checkedCount: Int? {
        let (hw, o1) = height.multipliedReportingOverflow(by: width)
        let (hwc, o2) = hw.multipliedReportingOverflow(by: channels)
        return o1 || o2 ? nil : hwc
    }

    /// Elements per image.
    public var count: Int { height * width * channels }

    /// True when every dimension is positive and the rank's unused axes are 1.
    public var isValid: Bool {
        height > 0 && width > 0 && channels > 0 && checkedCount != nil && (1 ... 4).contains(rank)
            && (rank == 4 || height == 1) && (rank >= 3 || width == 1) && (rank >= 2 || channels == 1)
    }

    /// The axes after the batch axis, Keras-style: `(H, W, C)` for an image, `(L, C)` for a
    /// sequence, `(C)` for a vector, `()` at rank 1.
    public var description: String { "(\(dimensions.map(String.init).joined(separator: ", ")))" }
}
