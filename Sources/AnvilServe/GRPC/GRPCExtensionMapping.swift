/// Triton's extension answers (configuration, statistics) written as their gRPC messages, from
/// the same values the REST routes write as JSON.
enum GRPCExtensionMapping {
    /// The `ModelConfig` message of `configuration`.
    static func config(_ configuration: ModelConfiguration) -> Inference_ModelConfig {
        .with { config in
            config.name = configuration.name
            config.platform = configuration.platform
            config.backend = configuration.backend
            config.maxBatchSize = Int32(clamping: configuration.maxBatchSize)
            config.input = configuration.input.map { tensor in
                .with {
                    $0.name = tensor.name
                    $0.dataType = TensorDatatype(configurationName: tensor.dataType)?.configurationType ?? .typeInvalid
                    $0.format = tensor.format == "FORMAT_NHWC" ? .nhwc : tensor.format == "FORMAT_NCHW" ? .nchw : .none
                    $0.dims = tensor.dims.map(Int64.init)
                }
            }
            config.output = configuration.output.map { tensor in
                .with {
                    $0.name = tensor.name
                    $0.dataType = TensorDatatype(configurationName: tensor.dataType)?.configurationType ?? .typeInvalid
                    $0.dims = tensor.dims.map(Int64.init)
                }
            }
            if let batching = configuration.dynamicBatching {
                config.dynamicBatching = .with {
                    $0.preferredBatchSize = batching.preferredBatchSize.map { Int32(clamping: $0) }
                    $0.maxQueueDelayMicroseconds = UInt64(max(0, batching.maxQueueDelayMicroseconds))
                }
            }
        }
    }

    /// The `ModelStatistics` message of `entry`.
    static func statistics(_ entry: ModelStatisticsEntry) -> Inference_ModelStatistics {
        func duration(_ key: String) -> Inference_StatisticDuration {
            let value = entry.inferenceStats[key] ?? StatisticDuration(count: 0, ns: 0)
            return .with { $0.count = value.count; $0.ns = value.ns }
        }
        return .with {
            $0.name = entry.name
            $0.version = entry.version
            $0.lastInference = entry.lastInference
            $0.inferenceCount = entry.inferenceCount
            $0.executionCount = entry.executionCount
            $0.inferenceStats = .with {
                $0.success = duration("success")
                $0.fail = duration("fail")
                $0.queue = duration("queue")
                $0.computeInput = duration("compute_input")
                $0.computeInfer = duration("compute_infer")
                $0.computeOutput = duration("compute_output")
            }
        }
    }
}
