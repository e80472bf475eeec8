import Foundation

/// Bilinear resizing to a fixed size or by fixed scale factors.
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
    }

    /// The target size, when resizing to a fixed size.
    public let size: (height: Int, width: Int)?
    /// The scale factors, when resizing by scale (output = floor(input × scale)).
    public let scale: (height: Float, width: Float)?
    /// The coordinate mapping.
    public let coordinates: Coordinates
    /// The user's name for the layer.
    public let name: String?

    /// Resizes to `height × width`.
    public init(height: Int, width: Int, coordinates: Coordinates = .halfPixel, name: String? = nil) {
        self.size = (height, width)
        self.scale = nil
        self.coordinates = coordinates
        self.name = name
    }

    /// Resizes by scale factors; the coordinate mapping uses these factors exactly (as ONNX does).
    public init(scaleHeight: Float, scaleWidth: Float, coordinates: Coordinates = .halfPixel, name: String? = nil) {
        self.size = nil
        self.scale = (scaleHeight, scaleWidth)
        self.coordinates = coordinates
        self.name = name
    }

    /// `resize`.
    public var namePrefix: String { "resize" }

    /// The target size; same channels.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        let input = inputs[0]
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

    /// Four multiply-adds per output element.
    public func macs(for inputs: [Shape], output: Shape) -> Int { saturatingProduct(output.count, 4) }

    /// The bilinear kernel with precomputed taps.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        let input = context.inputShapes[0], output = context.outputShape
        let scaleHeight = scale.map { Double($0.height) } ?? Double(output.height) / Double(input.height)
        let scaleWidth = scale.map { Double($0.width) } ?? Double(output.width) / Double(input.width)
        return ResizeKernel(input: input, output: output,
                            rows: taps(input: input.height, output: output.height, scale: scaleHeight),
                            columns: taps(input: input.width, output: output.width, scale: scaleWidth))
    }

    private func taps(input: Int, output: Int, scale: Double) -> ResizeKernel.Taps {
        var result = ResizeKernel.Taps(low: [], high: [], weight: [])
        for x in 0 ..< output {
            var source: Double
            switch coordinates {
            case .halfPixel: source = (Double(x) + 0.5) / scale - 0.5
            case .pytorchHalfPixel: source = output > 1 ? (Double(x) + 0.5) / scale - 0.5 : 0
            // ONNX uses the unrounded resized length (input × scale) here.
            case .alignCorners:
                let length = Double(input) * scale
                source = length > 1 ? Double(x) * Double(input - 1) / (length - 1) : 0
            case .asymmetric: source = Double(x) / scale
            }
            source = min(max(source, 0), Double(input - 1))
            let low = Int(source.rounded(.down))
            result.low.append(low)
            result.high.append(min(low + 1, input - 1))
            result.weight.append(Float(source - Double(low)))
        }
        return result
    }
}

extension Resize: ModelFileCodable {
    /// `Resize`.
    static var fileTypeName: String { "Resize" }

    /// Reads `size` or `scale`, and `coordinates` (`"halfPixel"`).
    convenience init(fields: JSONFields, name: String) throws {
        let coordinates = try fields.string("coordinates", default: "halfPixel")
        guard let mode = Coordinates(rawValue: coordinates) else {
            throw AnvilError(.invalidFile, "\(fields.context): unknown coordinates '\(coordinates)'")
        }
        if fields.has("size") {
            let size = try fields.pair("size")
            self.init(height: size.0, width: size.1, coordinates: mode, name: name)
            return
        }
        guard fields.has("scale") else { throw AnvilError(.invalidFile, "\(fields.context): Resize needs 'size' or 'scale'") }
        let scale = try fields.floatPair("scale")
        self.init(scaleHeight: scale.0, scaleWidth: scale.1, coordinates: mode, name: name)
    }

    /// `size` or `scale`, then `coordinates`.
    func encodeFields() throws -> [(String, JSONValue)] {
        var members: [(String, JSONValue)] = []
        if let size { members.append(("size", .pair(size))) }
        if let scale { members.append(("scale", .pair(scale))) }
        return members + [("coordinates", .string(coordinates.rawValue))]
    }
}
