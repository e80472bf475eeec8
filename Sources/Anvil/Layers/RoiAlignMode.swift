/// How a ``RoiAlign`` layer combines the samples of one output cell.
public enum RoiAlignMode: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The mean of the bilinearly interpolated samples (Mask R-CNN's RoIAlign).
    case average
    /// The largest weighted tap of any sample (ONNX `mode = "max"`).
    case max

    /// The name used in summaries and model files.
    public var description: String { rawValue }
}
