// What each built-in kernel that a fusable layer can build applies after its main computation
// (``EpilogueReportingKernel``): the compiler checks these against the epilogue it fused.

extension ConvolutionKernel: EpilogueReportingKernel {
    /// Its activation.
    var appliedActivation: ActivationFunction { activation }
    /// Reads only its first input.
    var addsResidual: Bool { false }
}

extension DirectConvolutionKernel: EpilogueReportingKernel {
    /// Its activation.
    var appliedActivation: ActivationFunction { activation }
    /// Adds a second input in registers.
    var addsResidual: Bool { true }
}

extension DepthwiseConvolutionKernel: EpilogueReportingKernel {
    /// Its activation.
    var appliedActivation: ActivationFunction { activation }
    /// Reads only its first input.
    var addsResidual: Bool { false }
}

extension WinogradConvolutionKernel: EpilogueReportingKernel {
    /// Its activation.
    var appliedActivation: ActivationFunction { activation }
    /// Reads only its first input.
    var addsResidual: Bool { false }
}

extension Winograd5x5Kernel: EpilogueReportingKernel {
    /// Its activation.
    var appliedActivation: ActivationFunction { activation }
    /// Reads only its first input.
    var addsResidual: Bool { false }
}

extension DenseKernel: EpilogueReportingKernel {
    /// Its activation.
    var appliedActivation: ActivationFunction { activation }
    /// Reads only its first input.
    var addsResidual: Bool { false }
}

extension ResidualKernel: EpilogueReportingKernel {
    /// Its activation, after the residual.
    var appliedActivation: ActivationFunction { activation }
    /// Always: that is what it is for.
    var addsResidual: Bool { true }
}

extension EpilogueKernel: EpilogueReportingKernel {
    /// Its activation, after the affine map and the residual.
    var appliedActivation: ActivationFunction { activation }
    /// When it was built to.
    var addsResidual: Bool { addsSecondInput }
}
