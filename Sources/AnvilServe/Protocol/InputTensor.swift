/// One input of a request: `{"name", "shape", "datatype", "data"}`, or with the binary tensor
/// data extension `"parameters": {"binary_data_size": n}` and the bytes after the JSON.
public struct InputTensor: Codable, Sendable, Equatable {
    /// The model input it feeds.
    public var name: String
    /// The batch size first, then the model's axes in its layout.
    public var shape: [Int]
    /// `"FP32"` (the only datatype Anvil computes in).
    public var datatype: String
    /// The values, flat or nested row-major; absent when sent as binary data.
    public var data: TensorData?
    /// `binary_data_size` for binary data.
    public var parameters: ProtocolParameters?

    /// An input tensor.
    public init(name: String, shape: [Int], datatype: String = "FP32", data: TensorData? = nil, parameters: ProtocolParameters? = nil) {
        self.name = name
        self.shape = shape
        self.datatype = datatype
        self.data = data
        self.parameters = parameters
    }
}
