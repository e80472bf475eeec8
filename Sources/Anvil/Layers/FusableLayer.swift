/// A layer whose kernel can finish with work that following layers would otherwise do:
/// a folded BatchNormalization, a residual `Add`, an activation (see ``FusionCapabilities``).
///
/// The layer only declares what it can absorb. The compiler resolves the epilogue, offers it
/// through ``KernelContext`` (`foldedAffine`, `fusedResidual`, `fusedActivation`), and checks
/// what the built kernel reports (``EpilogueReportingKernel``): whatever the kernel does not
/// apply, the compiler applies after it, or compilation fails — a fused layer is never dropped.
protocol FusableLayer: Layer {
    /// The activation the layer applies itself; fusion happens only when it is `.none`.
    var activation: ActivationFunction { get }
    /// The following layers its kernel can absorb.
    var absorbs: FusionCapabilities { get }
}
