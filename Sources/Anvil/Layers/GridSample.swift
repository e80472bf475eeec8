/// How a ``GridSample`` layer reads between pixels.
public enum GridSampleMode: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The nearest pixel (halves round to even).
    case nearest
    /// Bilinear interpolation of the 2 × 2 pixels around the point.
    case linear
    /// Bicubic convolution (a = −0.75) of the 4 × 4 pixels around the point.
    case cubic

    /// The name used in summaries and model files.
    public var description: String { rawValue }
}

/// What a ``GridSample`` layer reads outside the image.
public enum GridSamplePadding: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Zero.
    case zeros
    /// The nearest border pixel.
    case border
    /// The image mirrored at its borders.
    case reflection

    /// The name used in summaries and model files.
    public var description: String { rawValue }
}

/// Samples an image at the points of a grid (ONNX `GridSample`, PyTorch's `grid_sample`):
/// `[image, grid] --> GridSample(mode: .linear)`. The image is `H × W × C`; the grid is
/// `Ho × Wo × 2`, each point `(x, y)` in normalised coordinates (−1 the left or top, 1 the right
/// or bottom: the centres of the corner pixels with `alignCorners`, their outer edges without);
/// the output is `Ho × Wo × C`. A coordinate that is not a number reads zero.
public final class GridSample: Layer {
    /// How values between pixels are read.
    public let mode: GridSampleMode
    /// What is read outside the image.
    public let padding: GridSamplePadding
    /// Whether −1 and 1 are the centres of the corner pixels (else their outer edges).
    public let alignCorners: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(mode: GridSampleMode = .linear, padding: GridSamplePadding = .zeros, alignCorners: Bool = false, name: String? = nil) {
        self.mode = mode
        self.padding = padding
        self.alignCorners = alignCorners
        self.name = name
    }

    /// `gridsample`.
    public var namePrefix: String { "gridsample" }
    /// The image and the grid.
    public var inputCountRange: ClosedRange<Int> { 2 ... 2 }

    /// The grid's height and width with the image's channels.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let image = inputs[0], grid = inputs[1]
        guard image.rank == 4 else { throw AnvilError(.invalidShape, "samples an image (rank 4), got \(image)") }
        guard grid.rank == 4, grid.channels == 2 else {
            throw AnvilError(.invalidShape, "needs a grid of (x, y) points, height × width × 2, got \(grid)")
        }
        return Shape(height: grid.height, width: grid.width, channels: image.channels)
    }

    /// The sampling kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let image = context.inputShapes[0], output = context.outputShape
        return GridSampleKernel(mode: mode, padding: padding, alignCorners: alignCorners, height: image.height, width: image.width,
                                channels: image.channels, outputHeight: output.height, outputWidth: output.width)
    }
}

extension GridSample: ModelFileCodable {
    /// `GridSample`.
    static var fileTypeName: String { "GridSample" }

    /// Reads `mode` (`"linear"`), `padding` (`"zeros"`) and `alignCorners` (false).
    convenience init(fields: JSONFields, name: String) throws {
        let mode: GridSampleMode = fields.has("mode") ? try fields.choice("mode") : .linear
        let padding: GridSamplePadding = fields.has("padding") ? try fields.choice("padding") : .zeros
        self.init(mode: mode, padding: padding, alignCorners: try fields.bool("alignCorners", default: false), name: name)
    }

    /// `mode`, `padding`, `alignCorners`.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("mode", .string(mode.rawValue)), ("padding", .string(padding.rawValue)), ("alignCorners", .bool(alignCorners))]
    }
}
