/// The body of `GET /v2/models/{name}/stats` and `GET /v2/models/stats` (Triton's statistics
/// extension): `{"model_stats": [...]}`, one entry per model.
public struct ModelStatisticsResponse: Codable, Sendable, Equatable {
    /// One entry per model asked for.
    public var modelStats: [ModelStatisticsEntry]

    enum CodingKeys: String, CodingKey { case modelStats = "model_stats" }

    /// A statistics answer.
    public init(modelStats: [ModelStatisticsEntry]) { self.modelStats = modelStats }
}
