/// How a ``RoiAlign`` layer maps a region's corners to pixel coordinates.
public enum RoiAlignCoordinates: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Corners shifted by half a pixel (torchvision's `aligned=True`, ONNX `half_pixel`); a
    /// region may be smaller than a pixel.
    case halfPixel
    /// Corners as given, each region at least 1 × 1 pixel (the legacy `aligned=False`, ONNX
    /// `output_half_pixel`).
    case outputHalfPixel

    /// The name used in summaries and model files.
    public var description: String { rawValue }
}
