// What each built-in kernel that a fusable layer can build applies after its main computation
// (``EpilogueReportingKernel``): the compiler checks these against the epilogue it fused.

/// A kernel that ends with its own `activation` and reads only its first input.
protocol ActivationEndingKernel: EpilogueReportingKernel {
    /// The activation it applies last.
    var activation: ActivationFunction { get }
}

extension ActivationEndingKernel {
    /// Its activation.
    var appliedActivation: ActivationFunction { activation }
    /// A second input is ignored.
    var addsResidual: Bool { false }
}

extension Im2colConvolutionKernel: ActivationEndingKernel {}
extension DepthwiseConvolutionKernel: ActivationEndingKernel {}
extension WinogradConvolutionKernel: ActivationEndingKernel {}
extension Winograd5x5Kernel: ActivationEndingKernel {}
extension DenseKernel: ActivationEndingKernel {}

extension DirectConvolutionKernel: EpilogueReportingKernel {
    /// Its activation, after the residual.
    var appliedActivation: ActivationFunction { activation }
    /// Adds a second input in registers.
    var addsResidual: Bool { true }
}

extension EpilogueKernel: EpilogueReportingKernel {
    /// Its activation, after the affine map and the residual.
    var appliedActivation: ActivationFunction { activation }
    /// When it was built to.
    var addsResidual: Bool { addsSecondInput }
}
