extension TensorData {
    /// The elements of a tensor's `data`, in row-major order, as JSON holds them: numbers as a
    /// request wrote them, or a response's values in their own datatype.
    public enum Elements: Sendable, Equatable {
        /// JSON numbers as read (a request's `data`; exact for integers up to 2⁵³).
        case numbers([Double])
        /// FP32 values (a response's float output: written in float32's shortest form).
        case floats([Float])
        /// Integers (a response's integer output, written as JSON integers).
        case integers([Int64])
        /// Truth values (BOOL: JSON `true` and `false`).
        case truths([Bool])

        /// How many elements.
        public var count: Int {
            switch self {
            case .numbers(let values): values.count
            case .floats(let values): values.count
            case .integers(let values): values.count
            case .truths(let values): values.count
            }
        }

        /// Each element as a float32 number (a truth value as 1 or 0), as Anvil holds it.
        public var floatValues: [Float] {
            switch self {
            case .numbers(let values): values.map(Float.init)
            case .floats(let values): values
            case .integers(let values): values.map(Float.init)
            case .truths(let values): values.map { $0 ? 1 : 0 }
            }
        }
    }
}
