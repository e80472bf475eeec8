/// A description of one layer application in a ``Model``: what the summary prints.
public struct LayerInfo {
    /// The resolved name.
    public let name: String
    /// The layer.
    public let layer: any Layer
    /// Names of the tensors it reads.
    public let inputNames: [String]
    /// Shapes of its inputs.
    public let inputShapes: [Shape]
    /// Shape of its output.
    public let outputShape: Shape
    /// Its parameter tensors (empty for a second application of a shared layer).
    public let parameters: [ParameterSpec]
    /// True when this application reuses the parameters of an earlier one.
    public let sharesParameters: Bool
    /// Multiply-accumulates per image (0 when they depend on an open input size).
    public let macs: Int
    /// The output shape with the dimensions that depend on an open input size as `nil`.
    public let openOutputShape: OpenShape
    /// True when the multiply-accumulates depend on an open input size.
    public let macsDependOnInputSize: Bool
    /// True when the parameter count depends on an open input size (the model cannot compile).
    public let parametersDependOnInputSize: Bool

    /// Total parameter values.
    public var parameterCount: Int { saturatingSum(parameters.map(\.count)) }

    /// The values among ``parameterCount`` that are normalization statistics (running mean and
    /// variance), which Keras counts as parameters and PyTorch keeps as buffers.
    public var normalizationStatisticCount: Int {
        saturatingSum(parameters.filter { $0.kind == .mean || $0.kind == .variance }.map(\.count))
    }
}
