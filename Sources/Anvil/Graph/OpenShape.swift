/// The shape of a tensor in a network whose input size is left open: each dimension is a
/// number, or `nil` when it depends on the size of the input given to `predict`.
///
/// ```swift
/// let input = Input(channels: 3)                 // an image, height and width open
/// let model = try Model(input: input, output: input --> Convolution(kernel: (3, 3), channels: 8))
/// print(model.openOutputShapes[0])               // (?, ?, 8)
/// ```
///
/// Like ``Shape`` it lists the axes after the batch axis and has an element type; a model whose
/// inputs are all fixed has no open dimension anywhere.
public struct OpenShape: Hashable, Sendable, CustomStringConvertible {
    /// The axes after the batch axis, `nil` where open.
    public internal(set) var dimensions: [Int?]
    /// The type of the elements.
    public var elementType: ElementType

    /// Creates an image shape (rank 4); `nil` dimensions are open.
    public init(height: Int?, width: Int?, channels: Int?) {
        self.init(height: height, width: width, channels: channels, rank: 4)
    }

    /// A float32 shape of `rank` 1 to 4 stored as `height × width × channels`.
    init(height: Int?, width: Int?, channels: Int?, rank: Int) {
        switch rank {
        case 1: dimensions = []
        case 2: dimensions = [channels]
        case 3: dimensions = [width, channels]
        default: dimensions = [height, width, channels]
        }
        elementType = .float32
    }

    /// A shape of any rank up to ``Shape/maximumRank``: the axes after the batch axis, `nil`
    /// where open.
    public init(dimensions: [Int?], elementType: ElementType = .float32) {
        self.dimensions = dimensions
        self.elementType = elementType
    }

    /// A `[N, length, channels]` sequence whose length may be open (`nil`).
    public static func sequence(length: Int?, channels: Int) -> OpenShape {
        OpenShape(height: 1, width: length, channels: channels, rank: 3)
    }

    /// The fixed shape `shape`: no dimension open.
    public init(_ shape: Shape) {
        self.init(dimensions: shape.dimensions, elementType: shape.elementType)
    }

    /// Axes counting the batch axis, as ``Shape/rank``.
    public var rank: Int { dimensions.count + 1 }

    /// Rows, as ``Shape/height``, or `nil` when open.
    public var height: Int? {
        dimensions.count < 3 ? 1 : dimensions.dropLast(2).reduce(Int?.some(1)) { p, d in p.flatMap { p in d.map { p * $0 } } }
    }
    /// Columns (a sequence's length), or `nil` when open.
    public var width: Int? { dimensions.count < 2 ? 1 : dimensions[dimensions.count - 2] }
    /// Channels, or `nil` when they depend on the input size (a `Flatten` of an open tensor).
    public var channels: Int? { dimensions.isEmpty ? 1 : dimensions[dimensions.count - 1] }

    /// True when at least one dimension is open.
    public var isOpen: Bool { dimensions.contains { $0 == nil } }

    /// The shape itself when no dimension is open.
    public var fixed: Shape? {
        guard !isOpen else { return nil }
        return Shape(unchecked: dimensions.map { $0! }, elementType: elementType)
    }

    /// The shape with sizes in place of the open dimensions: `width` for the next-to-last axis,
    /// `channels` for the last, `height` for any other.
    func filled(height fillHeight: Int, width fillWidth: Int, channels fillChannels: Int = 0) -> Shape {
        let n = dimensions.count
        return Shape(unchecked: dimensions.enumerated().map { axis, d in
            d ?? (axis == n - 1 ? fillChannels : axis == n - 2 ? fillWidth : fillHeight)
        }, elementType: elementType)
    }

    /// Whether `shape` has this one's rank and element type and every fixed dimension (open
    /// dimensions take any size).
    public func accepts(_ shape: Shape) -> Bool {
        guard shape.rank == rank, shape.elementType == elementType else { return false }
        // An index loop: `predict` checks every input with this and must not allocate.
        var i = 0
        while i < dimensions.count {
            if let d = dimensions[i], d != shape.dimensions[i] { return false }
            i += 1
        }
        return true
    }

    /// As ``Shape/description`` with `?` for an open dimension, e.g. `(?, ?, 3)`.
    public var description: String {
        if let fixed { return fixed.description }
        let axes = "(" + dimensions.map { $0.map(String.init) ?? "?" }.joined(separator: ", ") + ")"
        return elementType == .float32 ? axes : "\(axes) \(elementType)"
    }
}
