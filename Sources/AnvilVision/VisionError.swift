import Foundation

/// An error from AnvilVision: which file (or buffer) was at fault and what is wrong with it.
///
/// Every failure in this module is a `VisionError`. Its ``description`` reads
/// `"<source>: <message>"`, for example
/// `"/data/t10k-images-idx3-ubyte: file is too short: expected 7840016 bytes (16-byte header + 10000×28×28 data bytes), found 7840000"`,
/// so a command-line tool can print it as is. Match on ``code`` to react to a specific
/// kind of failure; new codes may be added in later versions.
public struct VisionError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    /// The kind of failure, for programmatic matching (`error.code == .fileTooShort`).
    public let code: Code
    /// The file path, or the name given for an in-memory buffer, that the error is about.
    public let source: String
    /// What is wrong, in a sentence that does not repeat ``source``.
    public let message: String

    /// Creates an error about `source`.
    public init(_ code: Code, source: String, message: String) {
        self.code = code
        self.source = source
        self.message = message
    }

    /// `"<source>: <message>"`.
    public var description: String { "\(source): \(message)" }

    /// The same text as ``description``, for `localizedDescription`.
    public var errorDescription: String? { description }
}
