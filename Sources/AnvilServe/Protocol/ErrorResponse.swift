/// The protocol's error body: `{"error": "message"}`.
public struct ErrorResponse: Codable, Sendable, Equatable {
    /// What went wrong.
    public var error: String

    /// An error body.
    public init(error: String) { self.error = error }
}
