/// An input's values as a protocol carried them, before they are checked against the model
/// input's element type: JSON numbers or truth values, gRPC's typed `contents`, or the values of
/// binary data and `raw_input_contents` read as the datatype's little-endian elements.
enum WireElements: Sendable {
    /// FP32 values (`fp32_contents`, FP32 bytes).
    case floats([Float])
    /// JSON numbers, as doubles.
    case numbers([Double])
    /// Signed integers (`int_contents`, `int64_contents`, INT8 ... INT64 bytes).
    case signed([Int64])
    /// Unsigned integers (`uint_contents`, `uint64_contents`, UINT8 ... UINT64 and BOOL bytes).
    case unsigned([UInt64])
    /// Truth values (JSON `true`/`false`, `bool_contents`).
    case truths([Bool])

    /// How many values.
    var count: Int {
        switch self {
        case .floats(let values): values.count
        case .numbers(let values): values.count
        case .signed(let values): values.count
        case .unsigned(let values): values.count
        case .truths(let values): values.count
        }
    }

    /// The elements of a request's JSON `data`.
    init(_ elements: TensorData.Elements) {
        switch elements {
        case .numbers(let values): self = .numbers(values)
        case .floats(let values): self = .floats(values)
        case .integers(let values): self = .signed(values)
        case .truths(let values): self = .truths(values)
        }
    }
}
