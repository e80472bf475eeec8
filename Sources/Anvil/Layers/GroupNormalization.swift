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

/// Layer normalisation over the last `axes` axes of Anvil's channels-last layout (ONNX
/// `LayerNormalization`, PyTorch `LayerNorm`, Keras `LayerNormalization(axis=-1)`, ConvNeXt's
/// channels-last LayerNorm): each group of values that share the other axes is normalised to
/// mean 0 and variance 1 (`epsilon` added to the variance), then `· gamma + beta` per value of the
/// group. `axes` 1 (the default) normalises each pixel's channels; 2 each row (width × channels);
/// 3 each image (height × width × channels). The normalised axes are the trailing ones in memory,
/// so each group is one contiguous run of values.
///
/// ```swift
/// x --> LayerNormalization(epsilon: 1e-6)            // over the channels
/// x --> LayerNormalization(axes: 3)                  // over height, width and channels (PyTorch LayerNorm([C, H, W]))
/// ```
public final class LayerNormalization: Layer {
    /// How many trailing axes are normalised together: 1 (channels, the default) up to the
    /// shape's axes after the batch axis (3 for an image: height, width and channels).
    public let axes: Int
    /// Added to the variance.
    public let epsilon: Float
    /// Whether the layer has `gamma` and `beta` parameters, one per value of a normalised group
    /// (in memory order: height, width, channels); otherwise 1 and 0.
    public let affine: Bool
    /// The user's name for the layer.
    public let name: String?

    /// Creates a layer normalisation over the last `axes` axes (1: the channels).
    public init(axes: Int = 1, epsilon: Float = 1e-5, affine: Bool = true, name: String? = nil) {
        self.axes = axes
        self.epsilon = epsilon
        self.affine = affine
        self.name = name
    }

    /// `layernorm`.
    public var namePrefix: String { "layernorm" }

    /// `LayerNormalization`, or `LayerNormalization (last 3 axes)` when it normalises more than the channels.
    public var typeName: String { axes == 1 ? "LayerNormalization" : "LayerNormalization (last \(axes) axes)" }

    /// The input's shape.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        try checkEpsilon(epsilon)
        _ = try groupSize(inputs[0])
        return inputs[0]
    }

    /// The values normalised together: the product of the last `axes` extents (the channels when
    /// `axes` is 1). Throws `invalidOption` for `axes` outside 1 … the axes after the batch axis.
    func groupSize(_ input: Shape) throws -> Int {
        let dimensions = input.dimensions
        guard axes >= 1, axes <= max(1, dimensions.count) else {
            throw AnvilError(.invalidOption, "axes \(axes) must be between 1 and \(max(1, dimensions.count)) "
                                             + "(the axes after the batch axis of a rank-\(input.rank) input)")
        }
        return try checkedProduct(Array(dimensions.suffix(axes)), what: "the normalised group of \(input)")
    }

    /// `gamma` and `beta`, one per value of a normalised group, when `affine`.
    public func parameters(for inputs: [Shape]) -> [ParameterSpec] {
        guard affine, let size = try? groupSize(inputs[0]) else { return [] }
        return [ParameterSpec(.gamma, count: size), ParameterSpec(.beta, count: size)]
    }

    /// The C kernel `anvil_layer_norm_pixels` over groups of `groupSize` contiguous values.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        try NormalizationKernel(over: .trailing(try groupSize(context.inputShapes[0])), epsilon: epsilon, affine: affine,
                                context)
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

    /// Reads `axes` (1), `epsilon` (1e-5) and `affine` (true).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(axes: try fields.int("axes", default: 1), epsilon: try fields.float("epsilon", default: 1e-5),
                  affine: try fields.bool("affine", default: true), name: name)
    }

    /// Every option, defaults included.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("axes", .int(axes)), ("epsilon", .number(epsilon)), ("affine", .bool(affine))]
    }
}
