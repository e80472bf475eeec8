/// One tensor of a request or response: `{"name", "shape", "datatype", "data"}`, or with the
/// binary tensor data extension `"parameters": {"binary_data_size": n}` and the bytes after the
/// JSON. The protocol gives inputs and outputs the same form.
public struct ProtocolTensor: Codable, Sendable, Equatable {
    /// The model input it feeds, or the model output it holds.
    public var name: String
    /// The batch size first, then the model's axes in its layout.
    public var shape: [Int]
    /// The datatype of its values (``TensorDatatype``: `"FP32"`, `"INT64"`, `"BOOL"`, ...): an
    /// input's must be its model input's; an output's is its model output's.
    public var datatype: String
    /// The values (numbers, or `true`/`false` for BOOL), flat or nested row-major (responses are
    /// flat); absent when sent as binary data.
    public var data: TensorData?
    /// `binary_data_size` for binary data.
    public var parameters: ProtocolParameters?

    /// A tensor.
    public init(name: String, shape: [Int], datatype: String = "FP32", data: TensorData? = nil, parameters: ProtocolParameters? = nil) {
        self.name = name
        self.shape = shape
        self.datatype = datatype
        self.data = data
        self.parameters = parameters
    }
}

/// One input of an inference request.
public typealias InputTensor = ProtocolTensor

/// One output of an inference response.
public typealias OutputTensor = ProtocolTensor
