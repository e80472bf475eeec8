/// A count and the cumulative nanoseconds of what was counted: `{"count", "ns"}`.
public struct StatisticDuration: Codable, Sendable, Equatable {
    /// How many.
    public var count: UInt64
    /// Their total time in nanoseconds.
    public var ns: UInt64

    /// A duration statistic.
    public init(count: UInt64, ns: UInt64) {
        self.count = count
        self.ns = ns
    }
}
