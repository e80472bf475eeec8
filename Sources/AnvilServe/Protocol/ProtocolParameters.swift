/// The `parameters` object of a request, an input, a requested output or a response output,
/// holding the binary tensor data extension's keys; other keys are accepted and ignored.
public struct ProtocolParameters: Codable, Sendable, Equatable {
    /// On an input or a response output: the tensor's bytes follow the JSON, this many of them.
    public var binaryDataSize: Int?
    /// On a requested output: return it as binary data.
    public var binaryData: Bool?
    /// On a request: return every output as binary data (unless an output says otherwise).
    public var binaryDataOutput: Bool?

    enum CodingKeys: String, CodingKey {
        case binaryDataSize = "binary_data_size"
        case binaryData = "binary_data"
        case binaryDataOutput = "binary_data_output"
    }

    /// Parameters.
    public init(binaryDataSize: Int? = nil, binaryData: Bool? = nil, binaryDataOutput: Bool? = nil) {
        self.binaryDataSize = binaryDataSize
        self.binaryData = binaryData
        self.binaryDataOutput = binaryDataOutput
    }
}
