/// What a ``FusableLayer`` builds for a step the compiler fused work into: the kernel, and
/// whether it applies the folded BatchNormalization its ``KernelContext`` offered.
///
/// A layer folds that affine map into its kernel's weights and bias as it builds them, so only
/// the layer can say it did. What the kernel does as it runs (a residual, an activation, a
/// shuffle) the kernel reports itself (``EpilogueReportingKernel``). The compiler applies what
/// neither reports (``FusedEpilogue``).
struct FusedKernel {
    /// The kernel.
    let kernel: any Kernel
    /// Whether `kernel` applies ``KernelContext/foldedAffine`` when the context offered one.
    let appliesFoldedAffine: Bool

    /// `kernel`, which applies the offered affine map or not.
    init(_ kernel: any Kernel, appliesFoldedAffine: Bool) {
        self.kernel = kernel
        self.appliesFoldedAffine = appliesFoldedAffine
    }
}
