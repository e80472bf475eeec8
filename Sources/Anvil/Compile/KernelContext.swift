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
    /// (a BatchNormalization that follows a convolution or dense layer). Reading it tells the
    /// compiler the layer folds it; otherwise the compiler applies it after the kernel.
    var foldedAffine: (scale: [Float], shift: [Float])? {
        get {
            if offeredAffine != nil { affineUse.taken = true }
            return offeredAffine
        }
        set { offeredAffine = newValue }
    }
    /// The affine map the compiler offers, read without marking it taken.
    var offeredAffine: (scale: [Float], shift: [Float])? = nil
    /// Whether the layer read ``foldedAffine`` (shared by every copy of this context).
    let affineUse = AffineUse()
    /// An activation that follows the layer and is fused into it (after the residual, if any).
    var fusedActivation: ActivationFunction? = nil
    /// Whether an `Add` of a second tensor is fused into the layer: its kernel gets that tensor
    /// as a second input and adds it before the activation.
    var fusedResidual = false
    /// Set when a `Transpose` → `Flatten` before a `Dense` is folded into it: value `i` of the
    /// layer's (flattened) input is at position `inputOrder[i]` of the buffer the kernel reads.
    var inputOrder: [Int]? = nil

    /// The loaded tensor of `kind`; throws if the layer did not declare it.
    public func parameter(_ kind: ParameterKind) throws -> ParameterData {
        guard let data = parameters[kind] else {
            throw AnvilError(.missingParameter, "layer '\(layerName)' has no \(kind.rawValue) parameter")
        }
        return data
    }
}

/// Whether a layer took the folded affine map its ``KernelContext`` offered.
final class AffineUse {
    /// Set when the layer reads ``KernelContext/foldedAffine``.
    var taken = false
}
