/// The `dynamic_batching` of a ``ModelConfiguration``: the runner's batch and wait.
public struct DynamicBatchingConfiguration: Codable, Sendable, Equatable {
    /// `[--max-batch]`: a batch goes as soon as it is full.
    public var preferredBatchSize: [Int]
    /// `--max-wait-ms` in microseconds: how long the first request of a batch waits for others.
    public var maxQueueDelayMicroseconds: Int

    enum CodingKeys: String, CodingKey {
        case preferredBatchSize = "preferred_batch_size"
        case maxQueueDelayMicroseconds = "max_queue_delay_microseconds"
    }

    /// Batching settings.
    public init(preferredBatchSize: [Int], maxQueueDelayMicroseconds: Int) {
        self.preferredBatchSize = preferredBatchSize
        self.maxQueueDelayMicroseconds = maxQueueDelayMicroseconds
    }
}
