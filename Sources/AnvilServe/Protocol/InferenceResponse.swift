/// The answer to an inference request: `{"model_name", "id"?, "outputs": [...]}`.
public struct InferenceResponse: Codable, Sendable, Equatable {
    /// The model that answered.
    public var modelName: String
    /// The request's `id`, repeated.
    public var id: String?
    /// The outputs asked for, in the model's order.
    public var outputs: [OutputTensor]

    enum CodingKeys: String, CodingKey {
        case modelName = "model_name"
        case id
        case outputs
    }

    /// A response.
    public init(modelName: String, id: String?, outputs: [OutputTensor]) {
        self.modelName = modelName
        self.id = id
        self.outputs = outputs
    }
}
