/// The body of `GET /v2`: the server's name, version and protocol extensions.
public struct ServerMetadata: Codable, Sendable, Equatable {
    /// `"anvil"`.
    public var name: String
    /// The server's version.
    public var version: String
    /// The protocol extensions spoken (`"binary_tensor_data"`).
    public var extensions: [String]

    /// Server metadata.
    public init(name: String, version: String, extensions: [String]) {
        self.name = name
        self.version = version
        self.extensions = extensions
    }
}
