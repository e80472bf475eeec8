/// The body of `POST /v2/models/{name}/infer`:
/// `{"id"?, "inputs": [...], "outputs"?: [...], "parameters"?: {...}}`.
public struct InferenceRequest: Codable, Sendable, Equatable {
    /// An identifier the response repeats.
    public var id: String?
    /// One tensor per model input.
    public var inputs: [InputTensor]
    /// The outputs wanted (all of them when absent), and how.
    public var outputs: [RequestedOutput]?
    /// Request parameters (`binary_data_output`).
    public var parameters: ProtocolParameters?

    /// A request.
    public init(id: String? = nil, inputs: [InputTensor], outputs: [RequestedOutput]? = nil, parameters: ProtocolParameters? = nil) {
        self.id = id
        self.inputs = inputs
        self.outputs = outputs
        self.parameters = parameters
    }
}
