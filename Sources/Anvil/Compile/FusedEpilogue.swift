/// What the compiler fused into one step, in the order it must be applied after the layer's own
/// computation: a folded BatchNormalization (per-channel affine map), a residual `Add` (the
/// step's second input), the final activation.
///
/// The layer's kernel is expected to apply all of it; ``completing(_:layerName:)`` checks what
/// the layer and its kernel report and applies the rest after the kernel, so a forgotten part of
/// the epilogue costs a pass over the output instead of silently changing the result.
struct FusedEpilogue {
    /// The folded BatchNormalization, if any.
    var foldedAffine: (scale: [Float], shift: [Float])?
    /// Whether a residual `Add` was fused.
    var addsResidual: Bool
    /// The activation the step must end with (the fused one, or the layer's own).
    var activation: ActivationFunction

    /// `built`'s kernel if it applies the whole epilogue; otherwise that kernel followed by the
    /// parts it does not apply. Throws when what it did apply cannot be completed in order (it
    /// applied a different activation, or an activation or residual before a folded affine map
    /// it left out).
    func completing(_ built: FusedKernel, layerName: String) throws -> any Kernel {
        let kernel = built.kernel
        let reporting = kernel as? any EpilogueReportingKernel
        let appliedActivation = reporting?.appliedActivation ?? .none
        let kernelAddsResidual = addsResidual && (reporting?.addsResidual ?? false)
        let affineDone = foldedAffine == nil || built.appliesFoldedAffine
        if affineDone && kernelAddsResidual == addsResidual && appliedActivation == activation { return kernel }
        // The missing parts can be applied after the kernel only if the kernel stopped before them.
        let canComplete = appliedActivation == .none && (affineDone || !kernelAddsResidual)
        guard canComplete else {
            var fused: [String] = []
            if foldedAffine != nil { fused.append("a folded BatchNormalization\(affineDone ? "" : " (not taken)")") }
            if addsResidual { fused.append("a residual Add\(kernelAddsResidual ? "" : " (not added)")") }
            fused.append("activation \(activation)")
            throw AnvilError(.internalError, "layer '\(layerName)': its kernel applies activation \(appliedActivation), but the compiler fused \(fused.joined(separator: ", ")); the rest cannot be applied after the kernel")
        }
        return EpilogueKernel(inner: kernel, affine: affineDone ? nil : foldedAffine,
                              addsSecondInput: addsResidual && !kernelAddsResidual, activation: activation)
    }
}
