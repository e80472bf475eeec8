/// One output of a response: `{"name", "shape", "datatype", "data"}`, or with binary data
/// `"parameters": {"binary_data_size": n}` and the bytes after the JSON.
public struct OutputTensor: Codable, Sendable, Equatable {
    /// The model output.
    public var name: String
    /// The batch size first, then the output's axes in the model's layout.
    public var shape: [Int]
    /// `"FP32"`.
    public var datatype: String
    /// The values, flat row-major; absent when sent as binary data.
    public var data: TensorData?
    /// `binary_data_size` for binary data.
    public var parameters: ProtocolParameters?

    /// An output tensor.
    public init(name: String, shape: [Int], datatype: String = "FP32", data: TensorData? = nil, parameters: ProtocolParameters? = nil) {
        self.name = name
        self.shape = shape
        self.datatype = datatype
        self.data = data
        self.parameters = parameters
    }
}
