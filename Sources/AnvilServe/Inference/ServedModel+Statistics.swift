/// A model's statistics in the statistics extension's form, for both protocols.
extension ServedModel {
    /// The statistics entry of this model now.
    var statisticsEntry: ModelStatisticsEntry {
        let totals = statistics.snapshot
        func duration(_ value: InferenceStatistics.Duration) -> StatisticDuration {
            StatisticDuration(count: value.count, ns: value.nanoseconds)
        }
        // No response cache: its hits and misses are zero, as Triton reports for a model without one.
        let zero = StatisticDuration(count: 0, ns: 0)
        return ModelStatisticsEntry(
            name: name, version: "", lastInference: totals.lastInference, inferenceCount: totals.inferenceCount,
            executionCount: UInt64(runner.statistics.batches),
            inferenceStats: ["success": duration(totals.success), "fail": duration(totals.failure), "queue": duration(totals.queue),
                             "compute_input": duration(totals.computeInput), "compute_infer": duration(totals.computeInfer),
                             "compute_output": duration(totals.computeOutput), "cache_hit": zero, "cache_miss": zero])
    }
}
