/// An output a request asks for: `{"name", "parameters"?: {"binary_data": true}}`.
public struct RequestedOutput: Codable, Sendable, Equatable {
    /// The model output.
    public var name: String
    /// `binary_data` to receive it as binary data.
    public var parameters: ProtocolParameters?

    /// A requested output.
    public init(name: String, parameters: ProtocolParameters? = nil) {
        self.name = name
        self.parameters = parameters
    }
}
