/// An error thrown by Anvil: a category you can match on and a message that names the
/// layer, file or shape at fault.
///
/// ```swift
/// do { try model.compile(parameters: source) }
/// catch let error as AnvilError where error.code == .missingParameter { print(error) }
/// ```
public struct AnvilError: Error, CustomStringConvertible, Sendable {
    /// The category of an ``AnvilError``; new categories may be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A stable identifier, e.g. `"invalidGraph"`.
        public let rawValue: String

        /// The graph cannot be built: cycles, dangling references, unreachable tensors.
        public static let invalidGraph = Code(rawValue: "invalidGraph")
        /// A layer cannot be applied to the shapes it receives.
        public static let invalidShape = Code(rawValue: "invalidShape")
        /// A layer option is out of range (zero kernel, negative stride, ...).
        public static let invalidOption = Code(rawValue: "invalidOption")
        /// A parameter tensor was not supplied.
        public static let missingParameter = Code(rawValue: "missingParameter")
        /// A parameter tensor has the wrong number of elements or bad values.
        public static let invalidParameter = Code(rawValue: "invalidParameter")
        /// The parameter source holds a tensor that no layer used.
        public static let unusedParameter = Code(rawValue: "unusedParameter")
        /// The input given to `predict` does not match the model.
        public static let invalidInput = Code(rawValue: "invalidInput")
        /// `predict` was called before `compile`.
        public static let notCompiled = Code(rawValue: "notCompiled")
        /// A file could not be read or mapped.
        public static let fileError = Code(rawValue: "fileError")
        /// A file was read but its contents are malformed.
        public static let invalidFile = Code(rawValue: "invalidFile")
        /// Anvil broke a rule of its own (e.g. a layer's kernel applies a fused activation other
        /// than the one the compiler fused): a bug to report, not a problem with the input.
        public static let internalError = Code(rawValue: "internalError")

        /// The identifier.
        public var description: String { rawValue }
    }

    /// The category.
    public let code: Code
    /// A human-readable explanation naming the layer, file or shape at fault.
    public let message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
