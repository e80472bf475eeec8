/// The input of a network: one image per batch element (the batch size is chosen at `predict`).
///
/// A fixed size:
/// ```swift
/// let input = Input(width: 28, height: 28, channels: 1)
/// ```
/// An open size (a fully convolutional network compiled once and run at any image size):
/// ```swift
/// let input = Input(channels: 3)                          // height and width open
/// let rows = Input(height: nil, width: 640, channels: 3)  // only the height open
/// ```
/// Shapes that depend on an open dimension are shown as `?` (see ``OpenShape``); the concrete
/// sizes are inferred for each input size given to `predict`.
public final class Input: SymbolicTensor, @unchecked Sendable {
    // @unchecked Sendable restates the superclass's (Swift requires it): every stored property
    // is a `let` of a Sendable type, so an input is as immutable as every other SymbolicTensor.

    /// The shape with its open dimensions as `nil`.
    public let openShape: OpenShape
    /// The name given by the caller, or `nil` for an automatic one (`input`, `input_2`, ...).
    public let name: String?

    /// The shape of one input item; an open dimension is 0 here (see ``openShape``).
    public var shape: Shape { openShape.filled(height: 0, width: 0) }

    /// True when a dimension (an image's height or width, a sequence's length) is open.
    public var isOpen: Bool { openShape.isOpen }

    /// Creates an input of the given shape, open where it is `nil` (any rank).
    public init(shape: OpenShape, name: String? = nil) {
        self.openShape = shape
        self.name = name
        super.init(origin: .input(shape: shape.filled(height: 0, width: 0), name: name))
    }

    /// Creates an input of `height × width × channels`.
    public convenience init(width: Int, height: Int, channels: Int, name: String? = nil) {
        self.init(shape: OpenShape(height: height, width: width, channels: channels), name: name)
    }

    /// Creates an input whose height and width may be left open (`nil`, the default): the
    /// model is compiled once and `predict` takes images of any size, the fixed dimensions
    /// checked.
    public convenience init(height: Int? = nil, width: Int? = nil, channels: Int, name: String? = nil) {
        self.init(shape: OpenShape(height: height, width: width, channels: channels), name: name)
    }

    /// Creates an input of the given shape, of any rank (``Shape/vector(_:)``,
    /// ``Shape/sequence(length:channels:)``, an image).
    public convenience init(shape: Shape, name: String? = nil) {
        self.init(shape: OpenShape(shape), name: name)
    }

    /// Creates a sequence input `[N, length, channels]` whose length may be left open (`nil`):
    /// compiled once, `predict` takes sequences of any length.
    public convenience init(length: Int?, channels: Int, name: String? = nil) {
        self.init(shape: .sequence(length: length, channels: channels), name: name)
    }
}
