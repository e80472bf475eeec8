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

    /// The shape of one input image; an open dimension is 0 here (see ``openShape``).
    public let shape: Shape
    /// The name given by the caller, or `nil` for an automatic one (`input`, `input_2`, ...).
    public let name: String?
    /// The shape with its open dimensions as `nil`.
    public let openShape: OpenShape

    /// True when the height or the width is open.
    public var isOpen: Bool { openShape.isOpen }

    /// Creates an input of `height × width × channels`.
    public init(width: Int, height: Int, channels: Int, name: String? = nil) {
        self.shape = Shape(height: height, width: width, channels: channels)
        self.openShape = OpenShape(shape)
        self.name = name
        super.init(origin: .input(shape: shape, name: name))
    }

    /// Creates an input whose height and width may be left open (`nil`, the default): the
    /// model is compiled once and `predict` takes images of any size, the fixed dimensions
    /// checked.
    public init(height: Int? = nil, width: Int? = nil, channels: Int, name: String? = nil) {
        self.shape = Shape(height: height ?? 0, width: width ?? 0, channels: channels)
        self.openShape = OpenShape(height: height, width: width, channels: channels)
        self.name = name
        super.init(origin: .input(shape: shape, name: name))
    }

    /// Creates an input of the given shape.
    public convenience init(shape: Shape, name: String? = nil) {
        self.init(width: shape.width, height: shape.height, channels: shape.channels, name: name)
    }

    /// Creates an input of the given shape, open where it is `nil`.
    public convenience init(shape: OpenShape, name: String? = nil) {
        self.init(height: shape.height, width: shape.width, channels: shape.channels ?? 0, name: name)
    }
}
