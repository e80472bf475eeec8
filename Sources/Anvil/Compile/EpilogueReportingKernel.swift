/// A kernel that says which parts of a fused epilogue it applies itself, so the compiler can
/// check it against what it fused (``FusedEpilogue``). A kernel that does not conform is taken
/// to apply no activation and to ignore a second input.
protocol EpilogueReportingKernel: Kernel {
    /// The activation the kernel applies to its output, last (`.none` if none).
    var appliedActivation: ActivationFunction { get }
    /// Whether the kernel adds its second input, when given one, before the activation.
    var addsResidual: Bool { get }
    /// The groups of a channel shuffle the kernel applies to its output, last (see
    /// ``KernelContext/fusedShuffleGroups``); `nil` if none.
    var appliedShuffleGroups: Int? { get }
}

extension EpilogueReportingKernel {
    /// None: only a concatenation takes a shuffle.
    var appliedShuffleGroups: Int? { nil }
}
