/// The input of a network: one image of a fixed shape (the batch size is chosen at `predict`).
///
/// ```swift
/// let input = Input(width: 28, height: 28, channels: 1)
/// ```
public final class Input: SymbolicTensor, @unchecked Sendable {
    // @unchecked Sendable restates the superclass's (Swift requires it): `shape` and `name` are
    // `let`s of Sendable types, so an input is as immutable as every other SymbolicTensor.

    /// The shape of one input image.
    public let shape: Shape
    /// The name given by the caller, or `nil` for an automatic one (`input`, `input_2`, ...).
    public let name: String?

    /// Creates an input of `height × width × channels`.
    public init(width: Int, height: Int, channels: Int, name: String? = nil) {
        self.shape = Shape(height: height, width: width, channels: channels)
        self.name = name
        super.init(origin: .input(shape: shape, name: name))
    }

    /// Creates an input of the given shape, of any rank (``Shape/vector(_:)``,
    /// ``Shape/sequence(length:channels:)``, an image).
    public init(shape: Shape, name: String? = nil) {
        self.shape = shape
        self.name = name
        super.init(origin: .input(shape: shape, name: name))
    }
}
