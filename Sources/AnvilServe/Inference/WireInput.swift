import Foundation

/// One input of an inference request as either protocol gave it — REST's JSON and binary data, or
/// gRPC's `contents` and `raw_input_contents` — before it is checked against the model.
struct WireInput: Sendable {
    /// The model input it feeds.
    var name: String
    /// The datatype the client declared (`"INT64"`, `"FP32"`, ...), which must be the model input's.
    var datatype: String
    /// The batch size, then the model's axes in its wire layout.
    var shape: [Int]
    /// Where its values are.
    var values: Values

    /// An input's values: JSON data, gRPC's typed contents, or little-endian bytes.
    enum Values: Sendable {
        /// JSON `data`, with its nesting when JSON nested it.
        case json(TensorData)
        /// gRPC's typed `contents`, read from the field the datatype names once it is known to be
        /// the model's (so a wrong datatype is named before a wrong field); the reader is given the
        /// datatype and the count the shape needs, and names the field in its errors.
        case contents(@Sendable (_ datatype: TensorDatatype, _ count: Int) throws -> WireElements)
        /// Raw bytes of the datatype's elements, and how to name their size in an error
        /// (`"binary_data_size is 100"`, `"raw_input_contents[0] holds 100 bytes"`).
        case bytes(Data, size: String)
    }
}
