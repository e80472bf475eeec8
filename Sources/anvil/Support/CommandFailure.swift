/// A command that could not do its work — a file that cannot be read, a model that does not
/// load, input data of the wrong size: `anvil` prints the message alone on standard error and
/// exits 1. Usage mistakes (an option out of range, a missing one) stay ArgumentParser's
/// `ValidationError`: exit 64, with the usage line.
struct CommandFailure: Error, CustomStringConvertible {
    /// What went wrong, naming the file, layer or shape at fault.
    let message: String

    /// A failure with this message.
    init(_ message: String) { self.message = message }

    /// The message.
    var description: String { message }
}
