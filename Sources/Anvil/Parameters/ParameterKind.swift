/// What a parameter tensor holds; file loaders map it to a name suffix (`conv1_W`).
public enum ParameterKind: String, CaseIterable, Sendable, Hashable {
    /// Convolution or Dense weights (layout declared at compile time).
    case weights
    /// One bias per output channel.
    case biases
    /// BatchNormalization scale γ.
    case gamma
    /// BatchNormalization offset β.
    case beta
    /// BatchNormalization running mean.
    case mean
    /// BatchNormalization running variance.
    case variance
    /// PReLU slope per channel.
    case slopes
    /// The constant operand of an ``Elementwise`` layer (`x * 0.5`, a layer scale), in its
    /// channels-last shape.
    case constant
    /// The positions a ``Take`` layer copies, one per output value (float32 integers; −1: a zero).
    case indices

    /// The suffix used in tensor names: `W`, `b`, `gamma`, `beta`, `mean`, `variance`, `slopes`, `constant`, `indices`.
    public var suffix: String {
        switch self {
        case .weights: return "W"
        case .biases: return "b"
        default: return rawValue
        }
    }
}
