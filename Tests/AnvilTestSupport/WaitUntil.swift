/// A test waited past its limit for a state of the code under test.
struct WaitTimeout: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Waits until `condition` holds, looking every few milliseconds; throws, naming `what`, after
/// `limit` instead of looking forever for a state that never comes (or came and went: a batch
/// timer flushing a queue before a loaded machine let the test look).
func refWaitUntil(_ what: String, limit: Duration = .seconds(600), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while !condition() {
        guard ContinuousClock.now < deadline else { throw WaitTimeout(message: "still waiting after \(limit): \(what)") }
        try await Task.sleep(for: .milliseconds(2))
    }
}
