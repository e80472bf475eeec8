import Foundation

/// One input of an inference request as either protocol gave it — REST's JSON and binary data, or
/// gRPC's `contents` and `raw_input_contents` — before it is checked against the model.
struct WireInput: Sendable {
    /// The model input it feeds.
    var name: String
    /// The datatype the client declared (`"FP32"` is the only one Anvil takes).
    var datatype: String
    /// The batch size, then the model's axes in its wire layout.
    var shape: [Int]
    /// Where its values are.
    var values: Values

    /// An input's values: numbers read already, or little-endian FP32 bytes.
    enum Values: Sendable {
        /// Numbers (JSON `data` or gRPC's typed `contents`), with their nesting when JSON nested them.
        case numbers(TensorData)
        /// Raw bytes, and how to name their size in an error (`"binary_data_size is 100"`,
        /// `"raw_input_contents[0] holds 100 bytes"`).
        case bytes(Data, size: String)
    }
}
