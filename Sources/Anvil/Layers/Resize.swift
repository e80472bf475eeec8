import Foundation

/// Resizing to a fixed size or by fixed scale factors: bilinear (the default), nearest
/// neighbour or bicubic, with ONNX's coordinate mappings and nearest rounding modes.
///
/// ```swift
/// x --> Resize(scaleHeight: 2, scaleWidth: 2, coordinates: .asymmetric, mode: .nearest, nearestRounding: .floor)
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
    /// The scale factors, when resizing by scale (output = floor(input × scale)).
    public let scale: (height: Float, width: Float)?
    /// The coordinate mapping.
    public let coordinates: Coordinates
    /// The interpolation.
    public let mode: Mode
    /// The rounding of `nearest`.
    public let nearestRounding: NearestRounding
    /// The cubic convolution coefficient `a` (ONNX `cubic_coeff_a`: −0.75, PyTorch's; TensorFlow uses −0.5).
    public let cubicCoefficient: Float
    /// Whether cubic taps outside the image get weight 0 (the others renormalised) instead of the
    /// edge pixel's value (ONNX `exclude_outside`).
    public let excludeOutside: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Resizes to `height × width`.
    public init(height: Int, width: Int, coordinates: Coordinates = .halfPixel, mode: Mode = .linear,
                nearestRounding: NearestRounding = .roundPreferFloor, cubicCoefficient: Float = -0.75,
                excludeOutside: Bool = false, name: String? = nil) {
        self.size = (height, width)
        self.scale = nil
        self.coordinates = coordinates
        self.mode = mode
        self.nearestRounding = nearestRounding
        self.cubicCoefficient = cubicCoefficient
        self.excludeOutside = excludeOutside
        self.name = name
    }

    /// Resizes by scale factors; the coordinate mapping uses these factors exactly (as ONNX does).
    public init(scaleHeight: Float, scaleWidth: Float, coordinates: Coordinates = .halfPixel, mode: Mode = .linear,
                nearestRounding: NearestRounding = .roundPreferFloor, cubicCoefficient: Float = -0.75,
                excludeOutside: Bool = false, name: String? = nil) {
        self.size = nil
        self.scale = (scaleHeight, scaleWidth)
        self.coordinates = coordinates
        self.mode = mode
        self.nearestRounding = nearestRounding
        self.cubicCoefficient = cubicCoefficient
        self.excludeOutside = excludeOutside
        self.name = name
    }

    /// `resize`.
    public var namePrefix: String { "resize" }

    /// The target size; same channels.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let input = inputs[0]
        guard cubicCoefficient.isFinite else {
            throw AnvilError(.invalidOption, "resize cubicCoefficient \(cubicCoefficient) must be finite")
        }
        if let size {
            guard size.height > 0, size.width > 0 else {
                throw AnvilError(.invalidOption, "resize target \(size.height)x\(size.width) must be positive")
            }
            return try input.windowOutput(height: size.height, width: size.width, channels: input.channels)
        }
        guard let scale, scale.height > 0, scale.width > 0, scale.height.isFinite, scale.width.isFinite else {
            throw AnvilError(.invalidOption, "resize scale must be positive and finite")
        }
        let height = (Double(input.height) * Double(scale.height)).rounded(.down)
        let width = (Double(input.width) * Double(scale.width)).rounded(.down)
        guard height >= 1, width >= 1, height < 1e9, width < 1e9 else {
            throw AnvilError(.invalidShape, "resizing \(input) by \(scale.height)x\(scale.width) gives an empty or huge output")
        }
        return try input.windowOutput(height: Int(height), width: Int(width), channels: input.channels)
    }

    /// One (nearest), four (linear) or sixteen (cubic) multiply-adds per output element.
    public func macs(for inputs: [Shape], output: Shape) -> Int {
        switch mode {
        case .nearest: return 0
        case .linear: return saturatingProduct(output.count, 4)
        case .cubic: return saturatingProduct(output.count, 16)
        }
    }

    /// The resampling kernel with precomputed taps per output row and column.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0], output = context.outputShape
        let scaleHeight = scale.map { Double($0.height) } ?? Double(output.height) / Double(input.height)
        let scaleWidth = scale.map { Double($0.width) } ?? Double(output.width) / Double(input.width)
        return ResizeKernel(input: input, output: output,
                            rows: taps(input: input.height, output: output.height, scale: scaleHeight),
                            columns: taps(input: input.width, output: output.width, scale: scaleWidth))
    }

    /// The unclamped source coordinate of output coordinate `x`.
    private func source(_ x: Int, input: Int, output: Int, scale: Double) -> Double {
        let x = Double(x)
        // ONNX uses the unrounded resized length (input × scale) in align_corners and half_pixel_symmetric.
        let length = Double(input) * scale
        switch coordinates {
        case .halfPixel: return (x + 0.5) / scale - 0.5
        case .pytorchHalfPixel: return output > 1 ? (x + 0.5) / scale - 0.5 : 0
        case .alignCorners: return length > 1 ? x * Double(input - 1) / (length - 1) : 0
        case .asymmetric: return x / scale
        case .halfPixelSymmetric:
            let offset = Double(input) / 2 * (1 - Double(output) / length)
            return offset + (x + 0.5) / scale - 0.5
        }
    }

    private func taps(input: Int, output: Int, scale: Double) -> ResizeKernel.Taps {
        var result = ResizeKernel.Taps(count: mode == .nearest ? 1 : mode == .linear ? 2 : 4, index: [], weight: [])
        func clamp(_ i: Int) -> Int32 { Int32(min(max(i, 0), input - 1)) }
        for x in 0 ..< output {
            let s = source(x, input: input, output: output, scale: scale)
            switch mode {
            case .nearest:
                let i: Double
                switch nearestRounding {
                case .roundPreferFloor: i = s.rounded(.down) + 0.5 == s ? s.rounded(.down) : s.rounded()
                case .roundPreferCeil: i = s.rounded(.down) + 0.5 == s ? s.rounded(.up) : s.rounded()
                case .floor: i = s.rounded(.down)
                case .ceil: i = s.rounded(.up)
                }
                result.index.append(clamp(Int(max(min(i, 1e9), -1e9))))
                result.weight.append(1)
            case .linear:
                let clamped = min(max(s, 0), Double(input - 1))
                let low = Int(clamped.rounded(.down))
                result.index += [clamp(low), clamp(low + 1)]
                let fraction = Float(clamped - Double(low))
                result.weight += [1 - fraction, fraction]
            case .cubic:
                let base = Int(s.rounded(.down))
                var weights: [Double] = []
                for k in -1 ... 2 {
                    let i = base + k
                    let outside = i < 0 || i >= input
                    weights.append(excludeOutside && outside ? 0 : Self.cubicWeight(s - Double(i), a: Double(cubicCoefficient)))
                    result.index.append(clamp(i))
                }
                let total = excludeOutside ? weights.reduce(0, +) : 1
                result.weight += weights.map { Float(total != 0 ? $0 / total : 0) }
            }
        }
        return result
    }

    /// Keys' cubic convolution weight at distance `t` with coefficient `a`.
    static func cubicWeight(_ t: Double, a: Double) -> Double {
        let t = abs(t)
        if t <= 1 { return ((a + 2) * t - (a + 3)) * t * t + 1 }
        if t < 2 { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a }
        return 0
    }
}

extension Resize: ModelFileCodable {
    /// `Resize`.
    static var fileTypeName: String { "Resize" }

    /// Reads `size` or `scale`, `coordinates` (`"halfPixel"`), `mode` (`"linear"`),
    /// `nearestRounding` (`"roundPreferFloor"`), `cubicCoefficient` (−0.75) and `excludeOutside` (false).
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
        let a = try fields.float("cubicCoefficient", default: -0.75)
        let exclude = try fields.bool("excludeOutside", default: false)
        if fields.has("size") {
            let size = try fields.pair("size")
            self.init(height: size.0, width: size.1, coordinates: coordinateMode, mode: mode, nearestRounding: rounding,
                      cubicCoefficient: a, excludeOutside: exclude, name: name)
            return
        }
        guard fields.has("scale") else { throw AnvilError(.invalidFile, "\(fields.context): Resize needs 'size' or 'scale'") }
        let scale = try fields.floatPair("scale")
        self.init(scaleHeight: scale.0, scaleWidth: scale.1, coordinates: coordinateMode, mode: mode,
                  nearestRounding: rounding, cubicCoefficient: a, excludeOutside: exclude, name: name)
    }

    /// `size` or `scale`, then `coordinates`, `mode`, `nearestRounding`, `cubicCoefficient`, `excludeOutside`.
    func encodeFields() throws -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = []
        if let size { members.append(("size", .pair(size))) }
        if let scale { members.append(("scale", .pair(scale))) }
        return members + [("coordinates", .string(coordinates.rawValue)), ("mode", .string(mode.rawValue)),
                          ("nearestRounding", .string(nearestRounding.rawValue)),
                          ("cubicCoefficient", .number(cubicCoefficient)), ("excludeOutside", .bool(excludeOutside))]
    }
}
