/// One model's statistics in Triton's form (see ``InferenceStatistics`` for what each counts).
public struct ModelStatisticsEntry: Codable, Sendable, Equatable {
    /// The model.
    public var name: String
    /// `""`: Anvil models are unversioned.
    public var version: String
    /// Milliseconds since 1970 of the last successful inference, 0 before any.
    public var lastInference: UInt64
    /// Images inferred (each image of a batched request counts).
    public var inferenceCount: UInt64
    /// Batches the model ran.
    public var executionCount: UInt64
    /// Request counts and cumulative times.
    public var inferenceStats: [String: StatisticDuration]
    /// Per batch size statistics: none kept (always empty).
    public var batchStats: [[String: StatisticDuration]]

    enum CodingKeys: String, CodingKey {
        case name, version
        case lastInference = "last_inference"
        case inferenceCount = "inference_count"
        case executionCount = "execution_count"
        case inferenceStats = "inference_stats"
        case batchStats = "batch_stats"
    }

    /// A model's statistics.
    public init(name: String, version: String, lastInference: UInt64, inferenceCount: UInt64, executionCount: UInt64,
                inferenceStats: [String: StatisticDuration], batchStats: [[String: StatisticDuration]] = []) {
        self.name = name
        self.version = version
        self.lastInference = lastInference
        self.inferenceCount = inferenceCount
        self.executionCount = executionCount
        self.inferenceStats = inferenceStats
        self.batchStats = batchStats
    }
}
