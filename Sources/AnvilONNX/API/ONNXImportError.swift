/// An `.onnx` file cannot be opened or converted: the message names the node, field or file at
/// fault. A conversion stopped by several nodes lists them all (`blockers`, one line each).
public struct ONNXImportError: Error, CustomStringConvertible, Sendable {
    /// The whole message (one line, or a count and one indented line per blocker).
    public let message: String
    /// Every blocker found in one run (the nodes that cannot be converted), one line each;
    /// empty for a file that cannot be read.
    public let blockers: [String]
    /// Whether the graph has fixed input shapes and was converted with its first axis as the
    /// batch, so converting it as one item may succeed.
    var retryAsOneItem = false

    /// An error with `message` and the `blockers` it lists.
    public init(_ message: String, blockers: [String] = []) {
        self.message = message
        self.blockers = blockers
    }

    /// The message.
    public var description: String { message }
}
