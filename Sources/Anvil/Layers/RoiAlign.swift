/// Pools a fixed-size grid from each region of interest of a batch of feature maps (ONNX
/// `RoiAlign`, torchvision's `roi_align`): `[features, rois, batchIndices] --> RoiAlign(...)`.
///
/// Each item holds a whole batch of feature maps `N × H × W × C` (channels-last; an image
/// `H × W × C` is a batch of one), `R × 4` regions `(x1, y1, x2, y2)` in input coordinates
/// (scaled by `spatialScale`) and `R` batch indices (integers, any element type) saying which
/// map each region reads; the output is `R × outputHeight × outputWidth × C`. Each output cell
/// averages (or takes the largest of) `samplingRatio²` bilinear samples of its bin — with
/// `samplingRatio` 0, `ceil(bin size)` per axis. A batch index that is not an integer in
/// `0 ..< N` gives NaN for its region (the kernel cannot throw).
public final class RoiAlign: Layer {
    /// How the samples of a cell are combined.
    public let mode: RoiAlignMode
    /// How region corners map to pixels.
    public let coordinates: RoiAlignCoordinates
    /// Rows of the pooled grid.
    public let outputHeight: Int
    /// Columns of the pooled grid.
    public let outputWidth: Int
    /// Samples per bin along each axis; 0: adaptive (`ceil` of the bin's size).
    public let samplingRatio: Int
    /// The factor from region coordinates to feature-map pixels (1 / the backbone's stride).
    public let spatialScale: Float
    /// The user's name for the layer.
    public let name: String?

    /// Creates the layer.
    public init(mode: RoiAlignMode = .average, coordinates: RoiAlignCoordinates = .halfPixel, outputHeight: Int = 1,
                outputWidth: Int = 1, samplingRatio: Int = 0, spatialScale: Float = 1, name: String? = nil) {
        self.mode = mode
        self.coordinates = coordinates
        self.outputHeight = outputHeight
        self.outputWidth = outputWidth
        self.samplingRatio = samplingRatio
        self.spatialScale = spatialScale
        self.name = name
    }

    /// `roialign`.
    public var namePrefix: String { "roialign" }
    /// The feature maps, the regions and their batch indices.
    public var inputCountRange: ClosedRange<Int> { 3 ... 3 }
    /// The batch indices may be integers.
    public var acceptsTypedInputs: Bool { true }

    /// The features' maps (`N`, `H`, `W`, `C`) of `shape`, or an error naming it.
    static func maps(_ shape: Shape) throws -> (count: Int, height: Int, width: Int, channels: Int) {
        let d = shape.dimensions
        switch d.count {
        case 3: return (1, d[0], d[1], d[2])
        case 4: return (d[0], d[1], d[2], d[3])
        default: throw AnvilError(.invalidShape, "pools feature maps N × H × W × C (or an image H × W × C), got \(shape)")
        }
    }

    /// `R × outputHeight × outputWidth × C`.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        guard outputHeight > 0, outputWidth > 0 else {
            throw AnvilError(.invalidOption, "outputHeight and outputWidth must be positive, got \(outputHeight) × \(outputWidth)")
        }
        guard samplingRatio >= 0 else { throw AnvilError(.invalidOption, "samplingRatio must be 0 (adaptive) or positive, got \(samplingRatio)") }
        guard spatialScale.isFinite, spatialScale > 0 else { throw AnvilError(.invalidOption, "spatialScale must be a positive number, got \(spatialScale)") }
        let features = try Self.maps(inputs[0]), rois = inputs[1], indices = inputs[2]
        guard inputs[0].elementType == .float32, rois.elementType == .float32 else {
            throw AnvilError(.invalidShape, "pools float32 features and regions, got \(inputs[0].elementType) and \(rois.elementType)")
        }
        guard rois.dimensions.count == 2, rois.dimensions[1] == 4 else {
            throw AnvilError(.invalidShape, "needs regions R × 4 (x1, y1, x2, y2), got \(rois)")
        }
        let count = rois.dimensions[0]
        guard indices.dimensions == [count] else {
            throw AnvilError(.invalidShape, "needs one batch index per region (\(count)), got \(indices)")
        }
        return try Shape(dimensions: [count, outputHeight, outputWidth, features.channels])
    }

    /// Four weighted taps per sample and channel.
    public func macs(for inputs: [Shape], output: Shape) -> Int {
        let grid = samplingRatio > 0 ? samplingRatio * samplingRatio : 4
        return saturatingProduct(output.count, grid, 4)
    }

    /// The pooling kernel.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let features = try Self.maps(context.inputShapes[0])
        return RoiAlignKernel(mode: mode, coordinates: coordinates, outputHeight: outputHeight, outputWidth: outputWidth,
                              samplingRatio: samplingRatio, spatialScale: Double(spatialScale), mapCount: features.count,
                              height: features.height, width: features.width, channels: features.channels,
                              regionCount: context.inputShapes[1].dimensions[0])
    }
}

extension RoiAlign: ModelFileCodable {
    /// `RoiAlign`.
    static var fileTypeName: String { "RoiAlign" }

    /// Reads `mode` (`"average"`), `coordinates` (`"halfPixel"`), `outputHeight` and `outputWidth`
    /// (1), `samplingRatio` (0) and `spatialScale` (1).
    convenience init(fields: JSONFields, name: String) throws {
        let mode: RoiAlignMode = fields.has("mode") ? try fields.choice("mode") : .average
        let coordinates: RoiAlignCoordinates = fields.has("coordinates") ? try fields.choice("coordinates") : .halfPixel
        self.init(mode: mode, coordinates: coordinates, outputHeight: try fields.int("outputHeight", default: 1),
                  outputWidth: try fields.int("outputWidth", default: 1), samplingRatio: try fields.int("samplingRatio", default: 0),
                  spatialScale: try fields.float("spatialScale", default: 1), name: name)
    }

    /// Every option.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("mode", .string(mode.rawValue)), ("coordinates", .string(coordinates.rawValue)), ("outputHeight", .int(outputHeight)),
         ("outputWidth", .int(outputWidth)), ("samplingRatio", .int(samplingRatio)), ("spatialScale", .number(spatialScale))]
    }
}
