import Anvil

/// Where an ONNX graph input or output sits in Anvil's tensors: Anvil keeps activations channels
/// last, so an NCHW input of ONNX is held as NHWC (`permutation` [0, 3, 1, 2]: ONNX axis i is
/// Anvil axis `permutation[i]`, the batch axis 0 first).
public struct ONNXTensorLayout: Sendable, Equatable {
    /// The Anvil input or layer name.
    public let name: String
    /// Anvil's extents after the batch axis (nil: open).
    public let shape: [Int?]
    /// Which Anvil axis holds each ONNX axis.
    public let permutation: [Int]
    /// The Anvil tensor's rank (smaller than ONNX's where a global pooling left a vector).
    public let anvilRank: Int

    init(_ tensor: ComputedTensor) {
        name = tensor.name
        shape = tensor.shape
        permutation = tensor.permutation
        anvilRank = tensor.anvilRank
    }

    /// As JSON: name, shape (null: open), permutation, anvilRank.
    public var json: JSONValue {
        .object([("name", .string(name)), ("shape", .array(shape.map { $0.map(JSONValue.int) ?? .null })),
                 ("permutation", .array(permutation.map { .int($0) })), ("anvilRank", .int(anvilRank))])
    }
}
