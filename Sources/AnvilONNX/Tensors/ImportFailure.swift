/// A reason a node cannot be converted, thrown by the importer's helpers; the converter prefixes
/// the node (`node 'conv1' (Conv): ...`) and collects it as a blocker.
struct ImportFailure: Error, CustomStringConvertible {
    /// What went wrong.
    let message: String

    /// A failure with `message`.
    init(_ message: String) {
        self.message = message
    }

    /// The message.
    var description: String { message }
}
