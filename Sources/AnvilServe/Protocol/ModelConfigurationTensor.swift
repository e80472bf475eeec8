/// One input or output of a ``ModelConfiguration``: `{"name", "data_type", "format"?, "dims"}`.
public struct ModelConfigurationTensor: Codable, Sendable, Equatable {
    /// The tensor's name.
    public var name: String
    /// Triton's datatype name: `"TYPE_FP32"`, `"TYPE_INT64"`, `"TYPE_BOOL"`, ...
    public var dataType: String
    /// On an image input: `"FORMAT_NHWC"` or `"FORMAT_NCHW"` (`"FORMAT_NONE"` otherwise); absent on outputs.
    public var format: String?
    /// The axes after the batch axis in the wire layout, -1 where open.
    public var dims: [Int]

    enum CodingKeys: String, CodingKey {
        case name, format, dims
        case dataType = "data_type"
    }

    /// A tensor's configuration.
    public init(name: String, dataType: String, format: String?, dims: [Int]) {
        self.name = name
        self.dataType = dataType
        self.format = format
        self.dims = dims
    }
}
