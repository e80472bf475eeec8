/// What a ``FusableLayer`` can absorb from the layers right after it; the execution plan fuses
/// only these, and the compiler makes sure the built kernel applies them (see ``FusedEpilogue``).
struct FusionCapabilities: OptionSet, Sendable {
    let rawValue: Int

    /// A following BatchNormalization, folded into the layer's weights and bias.
    static let batchNormalization = FusionCapabilities(rawValue: 1 << 0)
    /// A following two-input `Add` (a residual connection): the other tensor becomes the
    /// kernel's second input, added before the activation.
    static let residualAdd = FusionCapabilities(rawValue: 1 << 1)
    /// A following Activation (or the `Add`'s activation), applied in the kernel's epilogue.
    static let activation = FusionCapabilities(rawValue: 1 << 2)

    /// Everything a convolution kernel can take.
    static let all: FusionCapabilities = [.batchNormalization, .residualAdd, .activation]
}
