/// The body of `GET /v2/models/{name}/config` (Triton's model configuration extension, in
/// Triton's JSON form): what tools such as perf_analyzer read to build requests and batches.
public struct ModelConfiguration: Codable, Sendable, Equatable {
    /// The name the model is served under.
    public var name: String
    /// `"anvil"`.
    public var platform: String
    /// `"anvil"`.
    public var backend: String
    /// The most images one batch holds (`--max-batch`); the dims below leave out the batch axis.
    public var maxBatchSize: Int
    /// The inputs.
    public var input: [ModelConfigurationTensor]
    /// The outputs.
    public var output: [ModelConfigurationTensor]
    /// The runner's batching, absent when each request runs alone (`--max-batch 1`).
    public var dynamicBatching: DynamicBatchingConfiguration?

    enum CodingKeys: String, CodingKey {
        case name, platform, backend, input, output
        case maxBatchSize = "max_batch_size"
        case dynamicBatching = "dynamic_batching"
    }

    /// A configuration.
    public init(name: String, platform: String, backend: String, maxBatchSize: Int, input: [ModelConfigurationTensor],
                output: [ModelConfigurationTensor], dynamicBatching: DynamicBatchingConfiguration?) {
        self.name = name
        self.platform = platform
        self.backend = backend
        self.maxBatchSize = maxBatchSize
        self.input = input
        self.output = output
        self.dynamicBatching = dynamicBatching
    }
}
