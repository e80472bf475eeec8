import Foundation

/// Resizing to a fixed size or by fixed scale factors: bilinear (the default), nearest
/// neighbour or bicubic, with ONNX's coordinate mappings and nearest rounding modes, antialiased
/// downsampling, and TensorFlow's crop-and-resize (a region of the input, constant outside it).
///
/// ```swift
/// x --> Resize(scaleHeight: 2, scaleWidth: 2, coordinates: .asymmetric, mode: .nearest, nearestRounding: .floor)
/// x --> Resize(height: 112, width: 112, antialias: true)
/// x --> Resize(height: 3, width: 3, coordinates: .tfCropAndResize,
///              region: Resize.Region(top: 0.4, left: 0.6, bottom: 0.6, right: 0.8), extrapolationValue: 10)
/// ```
public final class Resize: Layer {
    /// How output pixel coordinates map to input coordinates (ONNX's `coordinate_transformation_mode`).
    public enum Coordinates: String, Sendable, CaseIterable {
        /// `(x + 0.5) / scale − 0.5`: pixel centres align (TensorFlow 2, PyTorch `align_corners=False`).
        case halfPixel
        /// As `halfPixel`, but an output of length 1 samples coordinate 0 (PyTorch).
        case pytorchHalfPixel
        /// `x · (in − 1) / (out − 1)`: corner pixels align (PyTorch `align_corners=True`).
        case alignCorners
        /// `x / scale` (TensorFlow 1 default).
        case asymmetric
        /// `halfPixel` shifted so the resized image stays centred when `in × scale` is not an
        /// integer (ONNX opset 19 `half_pixel_symmetric`).
        case halfPixelSymmetric
        /// Corner-aligned sampling of ``Resize/region`` (TensorFlow `crop_and_resize`, ONNX
        /// `tf_crop_and_resize`): `start · (in − 1) + x · (end − start) · (in − 1) / (out − 1)`;
        /// a row or column whose source lies outside the input takes ``Resize/extrapolationValue``.
        case tfCropAndResize
    }

    /// How the value between input pixels is found (ONNX's `mode`).
    public enum Mode: String, Sendable, CaseIterable {
        /// The nearest input pixel, chosen by ``Resize/nearestRounding``.
        case nearest
        /// Bilinear interpolation (input coordinates clamped to the image).
        case linear
        /// Bicubic convolution over 4 × 4 pixels (ONNX `cubic`, PyTorch `bicubic`).
        case cubic
    }

    /// How `nearest` rounds a source coordinate to a pixel (ONNX's `nearest_mode`).
    public enum NearestRounding: String, Sendable, CaseIterable {
        /// Round to nearest, halves down (ONNX default).
        case roundPreferFloor
        /// Round to nearest, halves up (TensorFlow `half_pixel_centers`).
        case roundPreferCeil
        /// Round down (PyTorch `nearest`, with `asymmetric` coordinates).
        case floor
        /// Round up.
        case ceil
    }

    /// The target size, when resizing to a fixed size.
    public let size: (height: Int, width: Int)?
    /// The scale factors: the output is `floor(input × scale)` unless ``size`` is also given;
    /// the coordinate mapping uses them exactly (as ONNX does).
    public let scale: (height: Float, width: Float)?
    /// The coordinate mapping.
    public let coordinates: Coordinates
    /// The interpolation.
    public let mode: Mode
    /// The rounding of `nearest`.
    public let nearestRounding: NearestRounding
    /// The cubic convolution coefficient `a` (ONNX `cubic_coeff_a`: −0.75, PyTorch's; TensorFlow uses −0.5).
    public let cubicCoefficient: Float
    /// Whether taps outside the image get weight 0 (the others renormalised) instead of the
    /// edge pixel's value (ONNX `exclude_outside`).
    public let excludeOutside: Bool
    /// Whether a downsampling linear or cubic filter is widened by 1 / scale and its weights
    /// normalised, so every input pixel contributes (ONNX `antialias`, PyTorch and Keras `antialias=True`).
    public let antialias: Bool
    /// The part of the input that ``Coordinates/tfCropAndResize`` samples (ONNX's `roi`).
    public let region: Region
    /// The value of outputs whose source lies outside the input, with ``Coordinates/tfCropAndResize``
    /// (ONNX `extrapolation_value`).
    public let extrapolationValue: Float
    /// The user's name for the layer.
    public let name: String?

    private init(size: (height: Int, width: Int)?, scale: (height: Float, width: Float)?, coordinates: Coordinates,
                 mode: Mode, nearestRounding: NearestRounding, cubicCoefficient: Float, excludeOutside: Bool,
                 antialias: Bool, region: Region, extrapolationValue: Float, name: String?) {
        self.size = size
        self.scale = scale
        self.coordinates = coordinates
        self.mode = mode
        self.nearestRounding = nearestRounding
        self.cubicCoefficient = cubicCoefficient
        self.excludeOutside = excludeOutside
        self.antialias = antialias
        self.region = region
        self.extrapolationValue = extrapolationValue
        self.name = name
    }

    /// Resizes to `height × width`; the coordinate mapping uses the scales `output / input`.
    public convenience init(height: Int, width: Int, coordinates: Coordinates = .halfPixel, mode: Mode = .linear,
                            nearestRounding: NearestRounding = .roundPreferFloor, cubicCoefficient: Float = -0.75,
                            excludeOutside: Bool = false, antialias: Bool = false, region: Region = .whole,
                            extrapolationValue: Float = 0, name: String? = nil) {
        self.init(size: (height, width), scale: nil, coordinates: coordinates, mode: mode, nearestRounding: nearestRounding,
                  cubicCoefficient: cubicCoefficient, excludeOutside: excludeOutside, antialias: antialias, region: region,
                  extrapolationValue: extrapolationValue, name: name)
    }

    /// Resizes by scale factors to `floor(input × scale)`; the coordinate mapping uses these
    /// factors exactly (as ONNX does).
    public convenience init(scaleHeight: Float, scaleWidth: Float, coordinates: Coordinates = .halfPixel, mode: Mode = .linear,
                            nearestRounding: NearestRounding = .roundPreferFloor, cubicCoefficient: Float = -0.75,
                            excludeOutside: Bool = false, antialias: Bool = false, region: Region = .whole,
                            extrapolationValue: Float = 0, name: String? = nil) {
        self.init(size: nil, scale: (scaleHeight, scaleWidth), coordinates: coordinates, mode: mode,
                  nearestRounding: nearestRounding, cubicCoefficient: cubicCoefficient, excludeOutside: excludeOutside,
                  antialias: antialias, region: region, extrapolationValue: extrapolationValue, name: name)
    }

    /// Resizes to `height × width` with the coordinate mapping at the given scales, which need
    /// not be `output / input`: ONNX's `keep_aspect_ratio_policy` (one scale for both axes, the
    /// output size rounded from it) and resizes whose size was rounded from a scale.
    public convenience init(height: Int, width: Int, scaleHeight: Float, scaleWidth: Float,
                            coordinates: Coordinates = .halfPixel, mode: Mode = .linear,
                            nearestRounding: NearestRounding = .roundPreferFloor, cubicCoefficient: Float = -0.75,
                            excludeOutside: Bool = false, antialias: Bool = false, region: Region = .whole,
                            extrapolationValue: Float = 0, name: String? = nil) {
        self.init(size: (height, width), scale: (scaleHeight, scaleWidth), coordinates: coordinates, mode: mode,
                  nearestRounding: nearestRounding, cubicCoefficient: cubicCoefficient, excludeOutside: excludeOutside,
                  antialias: antialias, region: region, extrapolationValue: extrapolationValue, name: name)
    }

    /// `resize`.
    public var namePrefix: String { "resize" }

    /// The target size; same channels.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let input = inputs[0]
        try checkOptions()
        if let scale {
            guard scale.height > 0, scale.width > 0, scale.height.isFinite, scale.width.isFinite else {
                throw AnvilError(.invalidOption, "resize scale must be positive and finite")
            }
        }
        if let size {
            guard size.height > 0, size.width > 0 else {
                throw AnvilError(.invalidOption, "resize target \(size.height)x\(size.width) must be positive")
            }
            return try input.windowOutput(height: size.height, width: size.width, channels: input.channels)
        }
        guard let scale else { throw AnvilError(.invalidOption, "resize needs a size or a scale") }
        let height = (Double(input.height) * Double(scale.height)).rounded(.down)
        let width = (Double(input.width) * Double(scale.width)).rounded(.down)
        guard height >= 1, width >= 1, height < 1e9, width < 1e9 else {
            throw AnvilError(.invalidShape, "resizing \(input) by \(scale.height)x\(scale.width) gives an empty or huge output")
        }
        return try input.windowOutput(height: Int(height), width: Int(width), channels: input.channels)
    }

    /// The options that do not depend on the input: each error names the option at fault.
    private func checkOptions() throws {
        guard cubicCoefficient.isFinite else {
            throw AnvilError(.invalidOption, "resize cubicCoefficient \(cubicCoefficient) must be finite")
        }
        if antialias && mode == .nearest {
            throw AnvilError(.invalidOption, "resize antialias needs mode linear or cubic (nearest has no filter to widen)")
        }
        let corners = [region.top, region.left, region.bottom, region.right]
        guard corners.allSatisfy(\.isFinite) else {
            throw AnvilError(.invalidOption, "resize region \(region) must be finite")
        }
        if region != .whole && coordinates != .tfCropAndResize {
            throw AnvilError(.invalidOption,
                             "resize region \(region) is read only with coordinates tfCropAndResize, not \(coordinates)")
        }
        guard extrapolationValue.isFinite else {
            throw AnvilError(.invalidOption, "resize extrapolationValue \(extrapolationValue) must be finite")
        }
    }

    /// Per output element, a multiply-add per tap pair: none (nearest), 2 × 2 (linear), 4 × 4
    /// (cubic), more when antialiasing widens a downsampling filter.
    public func macs(for inputs: [Shape], output: Shape) -> Int {
        guard mode != .nearest else { return 0 }
        let input = inputs[0], scales = axisScales(input: input, output: output)
        return saturatingProduct(output.count, tapCount(scale: scales.height), tapCount(scale: scales.width))
    }

    /// The resampling kernel with precomputed taps per output row and column.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0], output = context.outputShape
        let scales = axisScales(input: input, output: output)
        return ResizeKernel(input: input, output: output,
                            rows: taps(input: input.height, output: output.height, scale: scales.height,
                                       start: region.top, end: region.bottom),
                            columns: taps(input: input.width, output: output.width, scale: scales.width,
                                          start: region.left, end: region.right),
                            extrapolationValue: extrapolationValue)
    }

    /// The scales of the coordinate mapping: the given ones, else `output / input`.
    func axisScales(input: Shape, output: Shape) -> (height: Double, width: Double) {
        (scale.map { Double($0.height) } ?? Double(output.height) / Double(input.height),
         scale.map { Double($0.width) } ?? Double(output.width) / Double(input.width))
    }
}

extension Resize: ModelFileCodable {
    /// `Resize`.
    static var fileTypeName: String { "Resize" }

    /// Reads `size` and/or `scale`, `coordinates` (`"halfPixel"`), `mode` (`"linear"`),
    /// `nearestRounding` (`"roundPreferFloor"`), `cubicCoefficient` (−0.75), `excludeOutside`
    /// (false), `antialias` (false), `region` (`[top, left, bottom, right]`, `[0, 0, 1, 1]`) and
    /// `extrapolationValue` (0).
    convenience init(fields: JSONFields, name: String) throws {
        let coordinates = try fields.string("coordinates", default: "halfPixel")
        guard let coordinateMode = Coordinates(rawValue: coordinates) else {
            throw AnvilError(.invalidFile, "\(fields.context): unknown coordinates '\(coordinates)'")
        }
        let modeName = try fields.string("mode", default: "linear")
        guard let mode = Mode(rawValue: modeName) else {
            throw AnvilError(.invalidFile, "\(fields.context): unknown mode '\(modeName)' (nearest, linear or cubic)")
        }
        let roundingName = try fields.string("nearestRounding", default: "roundPreferFloor")
        guard let rounding = NearestRounding(rawValue: roundingName) else {
            throw AnvilError(.invalidFile, "\(fields.context): unknown nearestRounding '\(roundingName)'")
        }
        var region = Region.whole
        if fields.has("region") {
            let edges = try fields.floats("region", count: 4)
            region = Region(top: edges[0], left: edges[1], bottom: edges[2], right: edges[3])
        }
        let size = fields.has("size") ? try fields.pair("size") : nil
        let scale = fields.has("scale") ? try fields.floatPair("scale") : nil
        guard size != nil || scale != nil else {
            throw AnvilError(.invalidFile, "\(fields.context): Resize needs 'size' or 'scale'")
        }
        self.init(size: size.map { (height: $0.0, width: $0.1) }, scale: scale.map { (height: $0.0, width: $0.1) },
                  coordinates: coordinateMode, mode: mode, nearestRounding: rounding,
                  cubicCoefficient: try fields.float("cubicCoefficient", default: -0.75),
                  excludeOutside: try fields.bool("excludeOutside", default: false),
                  antialias: try fields.bool("antialias", default: false), region: region,
                  extrapolationValue: try fields.float("extrapolationValue", default: 0), name: name)
    }

    /// `size` and/or `scale`, then `coordinates`, `mode`, `nearestRounding`, `cubicCoefficient`,
    /// `excludeOutside`; `antialias`, `region` and `extrapolationValue` when they are not the defaults.
    func encodeFields() throws -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = []
        if let size { members.append(("size", .pair(size))) }
        if let scale { members.append(("scale", .pair(scale))) }
        members += [("coordinates", .string(coordinates.rawValue)), ("mode", .string(mode.rawValue)),
                    ("nearestRounding", .string(nearestRounding.rawValue)),
                    ("cubicCoefficient", .number(cubicCoefficient)), ("excludeOutside", .bool(excludeOutside))]
        if antialias { members.append(("antialias", .bool(true))) }
        if region != .whole {
            members.append(("region", .array([region.top, region.left, region.bottom, region.right].map { .number($0) })))
        }
        if extrapolationValue != 0 { members.append(("extrapolationValue", .number(extrapolationValue))) }
        return members
    }
}
