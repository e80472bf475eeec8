/// A network layer: it infers its output shape, declares the parameters it needs, and
/// builds the kernel that computes it.
///
/// Anvil's own layers conform to this protocol, and so can yours: a custom layer takes
/// part in shape inference, naming, the summary and buffer planning like any other.
///
/// ```swift
/// final class Square: Layer {
///     let name: String? = nil
///     func outputShape(for inputs: [Shape]) throws -> Shape { inputs[0] }
///     func makeKernel(_ context: KernelContext) throws -> any Kernel { SquareKernel() }
/// }
/// ```
///
/// Layers are reference types: applying one instance twice shares its parameters.
///
/// Layers are `Sendable`: a model is built and used from any thread, so a layer must be safe to
/// share. A `final class` whose stored properties are `let`s of Sendable types (as above)
/// conforms with nothing more to write; a layer with mutable state must protect it itself
/// (a `Mutex`, for example).
public protocol Layer: AnyObject, Sendable {
    /// The name given by the user, or `nil` for an automatic, deterministic one.
    var name: String? { get }
    /// The type shown in summaries and error messages (default: the Swift type name; model files
    /// use the name a built-in layer declares, see `docs/model-format.md`).
    var typeName: String { get }
    /// The stem of automatic names, e.g. `conv` gives `conv_1`, `conv_2` (default: `typeName` lowercased).
    var namePrefix: String { get }
    /// How many input tensors the layer accepts (default: exactly one).
    var inputCountRange: ClosedRange<Int> { get }

    /// The shape of the output for inputs of these shapes; throws ``AnvilError`` when
    /// the layer cannot be applied (Anvil adds the layer's name to the message).
    func outputShape(for inputs: [Shape]) throws -> Shape
    /// The parameter tensors the layer needs for inputs of these shapes (default: none).
    func parameters(for inputs: [Shape]) -> [ParameterSpec]
    /// Multiply-accumulate operations per image (default: 0).
    func macs(for inputs: [Shape], output: Shape) -> Int
    /// Builds the kernel that computes the layer, with its parameters loaded.
    func makeKernel(_ context: KernelContext) throws -> any Kernel

    /// The output shape when some inputs' values are known as the plan is built (`values[i]`
    /// is input `i`'s, or `nil`): a `Reshape` to a computed shape, a `Range`. The default is
    /// ``outputShape(for:)``.
    func outputShape(for inputs: [Shape], values: [TensorValue?]) throws -> Shape
    /// The output's value when it follows from the inputs' shapes and known values, computed
    /// once per input shape when the plan is built (the layer then never runs); `nil` when the
    /// layer must run. The default is `nil`.
    func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue?
    /// Whether the layer takes inputs whose elements are not float32 (the default: no; shape
    /// computations and layout layers do).
    var acceptsTypedInputs: Bool { get }
}

extension Layer {
    /// The Swift type name.
    public var typeName: String { String(describing: type(of: self)) }
    /// `typeName` lowercased.
    public var namePrefix: String { typeName.lowercased() }
    /// Exactly one input.
    public var inputCountRange: ClosedRange<Int> { 1...1 }
    /// No parameters.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] { [] }
    /// No multiply-accumulates.
    public func macs(for inputs: [Shape], output: Shape) -> Int { 0 }
    /// ``outputShape(for:)``.
    public func outputShape(for inputs: [Shape], values: [TensorValue?]) throws -> Shape { try outputShape(for: inputs) }
    /// Unknown: the layer runs.
    public func value(for inputs: [Shape], values: [TensorValue?]) throws -> TensorValue? { nil }
    /// Float32 only.
    public var acceptsTypedInputs: Bool { false }
}
