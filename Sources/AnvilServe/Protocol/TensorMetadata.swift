/// One input or output in a model's metadata: name, datatype and shape, the batch axis and any
/// open dimension written -1, and the layout its axes follow (`"NHWC"` or `"NCHW"`).
public struct TensorMetadata: Codable, Sendable, Equatable {
    /// The tensor's name: what a request's `inputs[].name` or `outputs[].name` must say.
    public var name: String
    /// The datatype of its values: its element type's (`"FP32"`, `"INT64"`, `"BOOL"`, ...,
    /// ``TensorDatatype``), which a request's input must name.
    public var datatype: String
    /// The batch axis first (-1), then the model's own axes (-1 where open).
    public var shape: [Int]
    /// `{"layout": "NHWC" | "NCHW"}` for images and sequences: the order of the axes.
    public var parameters: [String: String]?

    /// Tensor metadata.
    public init(name: String, datatype: String, shape: [Int], parameters: [String: String]? = nil) {
        self.name = name
        self.datatype = datatype
        self.shape = shape
        self.parameters = parameters
    }
}
