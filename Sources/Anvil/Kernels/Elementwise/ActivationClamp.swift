/// How the C kernels apply an activation: the ones that are a clamp run inside the kernel,
/// while the results are still in registers; any other runs afterwards, in Swift.
struct ActivationClamp {
    /// The lower bound (`-infinity` for none).
    let min: Float
    /// The upper bound (`infinity` for none).
    let max: Float
    /// What still has to be applied after the kernel (`.none` when the clamp is all of it).
    let rest: ActivationFunction

    init(_ activation: ActivationFunction) {
        switch activation {
        case .none: (min, max, rest) = (-.infinity, .infinity, .none)
        case .relu: (min, max, rest) = (0, .infinity, .none)
        case .relu6: (min, max, rest) = (0, 6, .none)
        case .clip(let lo, let hi): (min, max, rest) = (lo, hi, .none)
        default: (min, max, rest) = (-.infinity, .infinity, activation)
        }
    }
}
