/// The shape of one item of a batch, in Anvil's channels-last memory layout, and the type of
/// its elements.
///
/// A shape lists the axes after the batch axis (the batch size itself is not part of a shape;
/// it is chosen at `predict`): 0 to 7 of them, so a rank of 1 to ``maximumRank`` counting the
/// batch axis. Values are stored row-major, the last axis (the channels) contiguous. Image
/// layers (convolution, pooling, resize) read the first four ranks as:
///
/// | rank | axes | height × width × channels | made by |
/// |---|---|---|---|
/// | 1 | `[N]` | 1 × 1 × 1 | `Shape.scalar` |
/// | 2 | `[N, C]` (a vector) | 1 × 1 × C | `Shape.vector(c)` |
/// | 3 | `[N, L, C]` (a sequence) | 1 × L × C | `Shape.sequence(length:channels:)` |
/// | 4 | `[N, H, W, C]` (an image) | H × W × C | `Shape(height:width:channels:)` |
/// | 5 to 8 | `[N, D1, ..., W, C]` | (D1 · ...) × W × C | `Shape(dimensions:)` |
///
/// Layout layers (`Transpose`, `Reshape`, `Slice`, ...) index the axes with the batch axis as
/// axis 0: for an image, axis 1 is the height, 2 the width and 3 the channels.
public struct Shape: Hashable, Sendable, CustomStringConvertible {
    /// The most axes a tensor has, counting the batch axis.
    public static let maximumRank = 8

    /// The axes after the batch axis (`rank - 1` of them), outermost first.
    public internal(set) var dimensions: [Int] { didSet { summarize() } }
    /// The type of the elements (float32 unless made otherwise).
    public var elementType: ElementType

    // What the hot paths read, kept with the axes: computed from them once, never per call
    // (a prediction reads shapes at every step and must not allocate, even unoptimised).
    private var storedHeight = 1, storedWidth = 1, storedChannels = 1, storedCount = 1
    private var countOverflows = false, allPositive = true

    /// Recomputes the stored summaries of ``dimensions``.
    private mutating func summarize() {
        let n = dimensions.count
        var product = 1, overflow = false, positive = true, leading = 1
        var i = 0
        while i < n {
            let d = dimensions[i]
            if d <= 0 { positive = false }
            let (next, o) = product.multipliedReportingOverflow(by: d)
            overflow = overflow || o
            product = next
            if i < n - 2 { leading = leading &* d }
            i += 1
        }
        storedCount = product
        countOverflows = overflow
        allPositive = positive
        storedChannels = n >= 1 ? dimensions[n - 1] : 1
        storedWidth = n >= 2 ? dimensions[n - 2] : 1
        storedHeight = n >= 3 ? leading : 1
    }

    /// Creates an image shape (rank 4).
    public init(height: Int, width: Int, channels: Int) {
        self.init(height: height, width: width, channels: channels, rank: 4)
    }

    /// A float32 shape of `rank` 1 to 4 stored as `height × width × channels`.
    init(height: Int, width: Int, channels: Int, rank: Int) {
        switch rank {
        case 1: dimensions = []
        case 2: dimensions = [channels]
        case 3: dimensions = [width, channels]
        default: dimensions = [height, width, channels]
        }
        elementType = .float32
        summarize()
    }

    /// A shape of these axes and element type, unchecked.
    init(unchecked dimensions: [Int], elementType: ElementType = .float32) {
        self.dimensions = dimensions
        self.elementType = elementType
        summarize()
    }

    /// Creates a shape from its axes after the batch axis: `[]` (rank 1), `[C]` (a vector),
    /// `[L, C]` (a sequence), `[H, W, C]` (an image), up to seven axes. Throws `invalidShape`
    /// for more.
    public init(dimensions: [Int], elementType: ElementType = .float32) throws {
        guard dimensions.count < Self.maximumRank else {
            throw AnvilError(.invalidShape, "a shape has at most \(Self.maximumRank - 1) axes after the batch axis (rank \(Self.maximumRank)), got \(dimensions)")
        }
        self.init(unchecked: dimensions, elementType: elementType)
    }

    /// A `[N, n]` vector, stored `1 × 1 × n`.
    public static func vector(_ n: Int) -> Shape { Shape(height: 1, width: 1, channels: n, rank: 2) }

    /// A `[N, length, channels]` sequence, stored `1 × length × channels`.
    public static func sequence(length: Int, channels: Int) -> Shape {
        Shape(height: 1, width: length, channels: channels, rank: 3)
    }

    /// A `[N]` shape: one value per batch item.
    public static var scalar: Shape { Shape(height: 1, width: 1, channels: 1, rank: 1) }

    /// Axes counting the batch axis: 1 (one value per item), 2 (vector), 3 (sequence), 4 (image),
    /// up to ``maximumRank``.
    public var rank: Int { dimensions.count + 1 }

    /// Rows: the first axis of an image, the product of every axis before the last two above
    /// rank 4, 1 below rank 4. Setting it above rank 4 merges those axes into one.
    public var height: Int {
        get { storedHeight }
        set {
            if dimensions.count >= 3 { dimensions = [newValue] + dimensions.suffix(2) }
            else if newValue != 1 { dimensions = [newValue, width, channels] }
        }
    }

    /// Columns (the length of a sequence; the next-to-last axis; 1 below rank 3).
    public var width: Int {
        get { storedWidth }
        set {
            if dimensions.count >= 2 { dimensions[dimensions.count - 2] = newValue }
            else if newValue != 1 { dimensions = [newValue, channels] }
        }
    }

    /// Channels (features: the last axis; 1 at rank 1).
    public var channels: Int {
        get { storedChannels }
        set {
            if dimensions.isEmpty { if newValue != 1 { dimensions = [newValue] } }
            else { dimensions[dimensions.count - 1] = newValue }
        }
    }

    /// The same axes with another element type.
    public func with(elementType: ElementType) -> Shape {
        Shape(unchecked: dimensions, elementType: elementType)
    }

    /// Elements per item, or `nil` if the product overflows.
    public var checkedCount: Int? { countOverflows ? nil : storedCount }

    /// Elements per item.
    public var count: Int { storedCount }

    /// True when every dimension is positive, the rank at most ``maximumRank`` and the element
    /// count representable.
    public var isValid: Bool {
        dimensions.count < Self.maximumRank && allPositive && !countOverflows
    }

    /// The axes after the batch axis, Keras-style: `(H, W, C)` for an image, `(L, C)` for a
    /// sequence, `(C)` for a vector, `()` at rank 1; the element type follows unless float32,
    /// as in `(2) int64`.
    public var description: String {
        let axes = "(\(dimensions.map(String.init).joined(separator: ", ")))"
        return elementType == .float32 ? axes : "\(axes) \(elementType)"
    }
}
