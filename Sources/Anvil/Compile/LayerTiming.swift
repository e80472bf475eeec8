/// Time spent in one compiled step (a layer, with any BatchNormalization or Activation fused into it).
public struct LayerTiming: Sendable {
    /// The layer's name.
    public let name: String
    /// The layer's type.
    public let typeName: String
    /// Median seconds per run of the step.
    public let seconds: Double
}
