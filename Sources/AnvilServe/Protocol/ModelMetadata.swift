/// The body of `GET /v2/models/{name}`: what a client needs to build a request.
public struct ModelMetadata: Codable, Sendable, Equatable {
    /// The name the model is served under.
    public var name: String
    /// `"anvil"`.
    public var platform: String
    /// The inputs every request must give.
    public var inputs: [TensorMetadata]
    /// The outputs a response can hold.
    public var outputs: [TensorMetadata]

    /// Model metadata.
    public init(name: String, platform: String, inputs: [TensorMetadata], outputs: [TensorMetadata]) {
        self.name = name
        self.platform = platform
        self.inputs = inputs
        self.outputs = outputs
    }
}
