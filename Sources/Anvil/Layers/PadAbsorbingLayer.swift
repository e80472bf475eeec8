/// A windowed layer that reads a zero-padded tensor as well without the padding: a zero ``Pad``
/// right before it is folded into its window's padding by the execution plan (the Pad never
/// runs) and the layer gets the amounts as ``KernelContext/absorbedPad``.
protocol PadAbsorbingLayer: Layer {
    /// The layer's window over `input` (the padded tensor) if zeros in its padding mean what
    /// zeros in its input would (not for max pooling, nor for an average that leaves padding
    /// out of its count); `nil` otherwise.
    func absorbableWindow(over input: Shape) -> WindowGeometry?
}
