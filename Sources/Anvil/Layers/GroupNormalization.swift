/// Group normalisation (ONNX `GroupNormalization`, PyTorch `GroupNorm`, Keras
/// `GroupNormalization`): per image, each of `groups` groups of channels is normalised over its
/// pixels and channels to mean 0 and variance 1 (`epsilon` added to the variance), then scaled by
/// `gamma` and shifted by `beta` per channel.
///
/// ```swift
/// x --> GroupNormalization(groups: 32)
/// ```
public final class GroupNormalization: Layer {
    /// Groups of channels; must divide the channels.
    public let groups: Int
    /// Added to the variance.
    public let epsilon: Float
    /// Whether the layer has per-channel `gamma` and `beta` parameters (otherwise 1 and 0).
    public let affine: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates a group normalisation.
    public init(groups: Int, epsilon: Float = 1e-5, affine: Bool = true, name: String? = nil) {
        self.groups = groups
        self.epsilon = epsilon
        self.affine = affine
        self.name = name
    }

    /// `groupnorm`.
    public var namePrefix: String { "groupnorm" }

    /// The input's shape.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        guard groups > 0 else { throw AnvilError(.invalidOption, "groups must be positive, got \(groups)") }
        try checkEpsilon(epsilon)
        guard inputs[0].channels % groups == 0 else {
            throw AnvilError(.invalidShape, "groups \(groups) must divide channels \(inputs[0].channels)")
        }
        return inputs[0]
    }

    /// `gamma` and `beta` per channel, when `affine`.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] { affineParameters(affine, inputs[0]) }

    /// The C kernels `anvil_group_norm_coefficients` and `anvil_scale_shift_pixels`.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        try NormalizationKernel(over: .groups(groups), epsilon: epsilon, affine: affine, context)
    }
}

/// Instance normalisation (ONNX `InstanceNormalization`, PyTorch `InstanceNorm2d`): each channel
/// of each image normalised over its pixels, then `· gamma + beta` per channel — group
/// normalisation with one channel per group.
///
/// ```swift
/// x --> InstanceNormalization(epsilon: 1e-5)
/// ```
public final class InstanceNormalization: Layer {
    /// Added to the variance.
    public let epsilon: Float
    /// Whether the layer has per-channel `gamma` and `beta` parameters (otherwise 1 and 0).
    public let affine: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates an instance normalisation.
    public init(epsilon: Float = 1e-5, affine: Bool = true, name: String? = nil) {
        self.epsilon = epsilon
        self.affine = affine
        self.name = name
    }

    /// `instancenorm`.
    public var namePrefix: String { "instancenorm" }

    /// The input's shape.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        try checkEpsilon(epsilon)
        return inputs[0]
    }

    /// `gamma` and `beta` per channel, when `affine`.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] { affineParameters(affine, inputs[0]) }

    /// Group normalisation's kernels with one channel per group.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        try NormalizationKernel(over: .groups(context.inputShapes[0].channels), epsilon: epsilon, affine: affine, context)
    }
}

/// Layer normalisation over each pixel's channels (ONNX `LayerNormalization` on the channel
/// axis, Keras `LayerNormalization(axis=-1)`, ConvNeXt's channels-last LayerNorm): each pixel's
/// channels normalised to mean 0 and variance 1, then `· gamma + beta` per channel.
///
/// ```swift
/// x --> LayerNormalization(epsilon: 1e-6)
/// ```
public final class LayerNormalization: Layer {
    /// Added to the variance.
    public let epsilon: Float
    /// Whether the layer has per-channel `gamma` and `beta` parameters (otherwise 1 and 0).
    public let affine: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates a layer normalisation over the channels.
    public init(epsilon: Float = 1e-5, affine: Bool = true, name: String? = nil) {
        self.epsilon = epsilon
        self.affine = affine
        self.name = name
    }

    /// `layernorm`.
    public var namePrefix: String { "layernorm" }

    /// The input's shape.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        try checkEpsilon(epsilon)
        return inputs[0]
    }

    /// `gamma` and `beta` per channel, when `affine`.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] { affineParameters(affine, inputs[0]) }

    /// The C kernel `anvil_layer_norm_pixels`.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        try NormalizationKernel(over: .channels, epsilon: epsilon, affine: affine, context)
    }
}

/// Throws unless `epsilon` is finite and at least 0.
private func checkEpsilon(_ epsilon: Float) throws {
    guard epsilon.isFinite, epsilon >= 0 else {
        throw AnvilError(.invalidOption, "epsilon \(epsilon) must be finite and at least 0")
    }
}

/// `gamma` and `beta`, one per channel, when `affine`.
private func affineParameters(_ affine: Bool, _ input: Shape) -> [ParameterSpec] {
    affine ? [ParameterSpec(.gamma, count: input.channels), ParameterSpec(.beta, count: input.channels)] : []
}

extension GroupNormalization: ModelFileCodable {
    /// `GroupNormalization`.
    static var fileTypeName: String { "GroupNormalization" }

    /// Reads `groups` (required), `epsilon` (1e-5) and `affine` (true).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(groups: try fields.int("groups"), epsilon: try fields.float("epsilon", default: 1e-5),
                  affine: try fields.bool("affine", default: true), name: name)
    }

    /// Every option, defaults included.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("groups", .int(groups)), ("epsilon", .number(epsilon)), ("affine", .bool(affine))]
    }
}

extension InstanceNormalization: ModelFileCodable {
    /// `InstanceNormalization`.
    static var fileTypeName: String { "InstanceNormalization" }

    /// Reads `epsilon` (1e-5) and `affine` (true).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(epsilon: try fields.float("epsilon", default: 1e-5), affine: try fields.bool("affine", default: true),
                  name: name)
    }

    /// Every option, defaults included.
    func encodeFields() throws -> [(String, JSONValue)] { [("epsilon", .number(epsilon)), ("affine", .bool(affine))] }
}

extension LayerNormalization: ModelFileCodable {
    /// `LayerNormalization`.
    static var fileTypeName: String { "LayerNormalization" }

    /// Reads `epsilon` (1e-5) and `affine` (true).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(epsilon: try fields.float("epsilon", default: 1e-5), affine: try fields.bool("affine", default: true),
                  name: name)
    }

    /// Every option, defaults included.
    func encodeFields() throws -> [(String, JSONValue)] { [("epsilon", .number(epsilon)), ("affine", .bool(affine))] }
}
