/// Deterministic pseudo-random parameters, for benchmarks and tests: weights uniform in
/// ±1/√fan-in, biases and β small, γ near 1, variances positive.
public struct RandomParameterSource: ParameterSource {
    /// The seed; the same seed gives the same tensors.
    public let seed: UInt64

    /// Creates a source.
    public init(seed: UInt64 = 42) {
        self.seed = seed
    }

    /// A fresh tensor for `request`, depending only on the seed and the request.
    public func data(for request: ParameterRequest) throws -> ParameterData {
        var state = seed ^ 0x9E37_79B9_7F4A_7C15
        for byte in request.tensorName.utf8 { state = (state ^ UInt64(byte)) &* 0x100_0000_01B3 }
        func next() -> Float {  // splitmix64 → [-1, 1)
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            return Float(z >> 40) / Float(1 << 23) - 1
        }
        let values: [Float]
        switch request.kind {
        case .weights:
            // The fan-in is unknown here; assume the tensor is `channels × fan-in` with
            // at most 4096 outputs, which keeps activations in a sane range.
            let scale = 1 / Float(max(1, request.count / 4096)).squareRoot()
            values = (0 ..< request.count).map { _ in next() * scale }
        case .biases, .beta, .mean: values = (0 ..< request.count).map { _ in next() * 0.1 }
        case .gamma: values = (0 ..< request.count).map { _ in 1 + next() * 0.1 }
        case .variance: values = (0 ..< request.count).map { _ in 1 + next() * 0.5 }
        case .slopes: values = (0 ..< request.count).map { _ in 0.25 + next() * 0.05 }
        case .constant: values = (0 ..< request.count).map { _ in 1 + next() * 0.1 }
        // (The first value of the item: valid for every input; the source does not know its size.)
        case .indices: values = [Float](repeating: 0, count: request.count)
        }
        return ParameterData(values)
    }

    /// Unknown (the source makes whatever is asked for).
    public var tensorNames: [String]? { nil }
}
