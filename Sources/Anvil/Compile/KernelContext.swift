/// What a layer gets when `compile` asks it for its kernel: its shapes, its loaded
/// parameters, and the layout they were supplied in.
public struct KernelContext {
    /// The layer's resolved name (for error messages).
    public let layerName: String
    /// The shapes of its inputs (one image each).
    public let inputShapes: [Shape]
    /// The shape of its output.
    public let outputShape: Shape
    /// The layout the weight tensors are in.
    public let layout: WeightLayout
    let parameters: [ParameterKind: ParameterData]
    /// A per-channel affine map `y = scale * y + shift` folded in after the layer
    /// (a BatchNormalization that follows a convolution or dense layer).
    var foldedAffine: (scale: [Float], shift: [Float])? = nil
    /// An activation that follows the layer and is fused into it (after the residual, if any).
    var fusedActivation: ActivationFunction? = nil
    /// Whether an `Add` of a second tensor is fused into the layer: its kernel gets that tensor
    /// as a second input and adds it before the activation.
    var fusedResidual = false

    /// The loaded tensor of `kind`; throws if the layer did not declare it.
    public func parameter(_ kind: ParameterKind) throws -> ParameterData {
        guard let data = parameters[kind] else {
            throw AnvilError(.missingParameter, "layer '\(layerName)' has no \(kind.rawValue) parameter")
        }
        return data
    }
}
