/// A layer whose kernel can finish with work that following layers would otherwise do:
/// a folded BatchNormalization, a residual `Add`, an activation (see ``FusionCapabilities``).
///
/// The layer only declares what it can absorb. The compiler resolves the epilogue, offers it
/// through ``KernelContext`` (`foldedAffine`, `fusedResidual`, `fusedActivation`), asks the
/// layer for ``makeFusedKernel(_:)`` and checks what it reports: the layer, whether it folded
/// the affine map in; the kernel, the rest (``EpilogueReportingKernel``). Whatever is not
/// applied, the compiler applies after the kernel, or compilation fails — a fused layer is
/// never dropped.
protocol FusableLayer: Layer {
    /// The activation the layer applies itself; fusion happens only when it is `.none`.
    var activation: ActivationFunction { get }
    /// The following layers its kernel can absorb.
    var absorbs: FusionCapabilities { get }
    /// The kernel for `context`, and whether it applies the context's folded affine map. The
    /// compiler builds a fusable layer's kernel with this; ``Layer/makeKernel(_:)`` returns the
    /// same kernel.
    func makeFusedKernel(_ context: KernelContext) throws -> FusedKernel
}

extension FusableLayer {
    /// ``Layer/makeKernel(_:)``'s kernel, which applies no folded affine map (a layer that does
    /// not absorb a BatchNormalization, or leaves it to the compiler).
    func makeFusedKernel(_ context: KernelContext) throws -> FusedKernel {
        FusedKernel(try makeKernel(context), appliesFoldedAffine: false)
    }
}
