/// Local response normalisation across channels (ONNX `LRN`, Caffe `LRN` ACROSS_CHANNELS,
/// PyTorch `LocalResponseNorm`; AlexNet, GoogLeNet):
/// `y = x / (bias + alpha / size · Σ x²)^beta`, the sum over channels
/// `c − ⌊(size − 1)/2⌋ … c + ⌈(size − 1)/2⌉` of the same pixel.
///
/// ```swift
/// x --> LocalResponseNormalization(size: 5, alpha: 1e-4, beta: 0.75, bias: 2)
/// ```
public final class LocalResponseNormalization: Layer {
    /// Channels in the window.
    public let size: Int
    /// The scale of the sum of squares (divided by `size`).
    public let alpha: Float
    /// The exponent.
    public let beta: Float
    /// The constant added before the power (ONNX `bias`, Caffe `k`).
    public let bias: Float
    /// The user's name for the layer.
    public let name: String?

    /// Creates an LRN layer.
    public init(size: Int, alpha: Float = 1e-4, beta: Float = 0.75, bias: Float = 1, name: String? = nil) {
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.bias = bias
        self.name = name
    }

    /// `lrn`.
    public var namePrefix: String { "lrn" }

    /// The input's shape.
    public func outputShape(for inputs: [Shape]) throws -> Shape {
        guard size > 0, size < 1 << 20 else { throw AnvilError(.invalidOption, "size must be positive, got \(size)") }
        guard alpha.isFinite, beta.isFinite, bias.isFinite else {
            throw AnvilError(.invalidOption, "alpha \(alpha), beta \(beta) and bias \(bias) must be finite")
        }
        return inputs[0]
    }

    /// `size` multiply-adds per value.
    public func macs(for inputs: [Shape], output: Shape) -> Int { saturatingProduct(output.count, size) }

    /// The C kernel `anvil_lrn_pixels`.
    public func makeKernel(_ context: KernelContext) throws -> any Kernel {
        LocalResponseNormalizationKernel(channels: context.inputShapes[0].channels, size: size, alpha: alpha, beta: beta,
                                         bias: bias, pixels: context.inputShapes[0].height * context.inputShapes[0].width)
    }
}

extension LocalResponseNormalization: ModelFileCodable {
    /// `LocalResponseNormalization`.
    static var fileTypeName: String { "LocalResponseNormalization" }

    /// Reads `size` (required), `alpha` (1e-4), `beta` (0.75) and `bias` (1).
    convenience init(fields: JSONFields, name: String) throws {
        self.init(size: try fields.int("size"), alpha: try fields.float("alpha", default: 1e-4),
                  beta: try fields.float("beta", default: 0.75), bias: try fields.float("bias", default: 1), name: name)
    }

    /// Every option, defaults included.
    func encodeFields() throws -> [(String, JSONValue)] {
        [("size", .int(size)), ("alpha", .number(alpha)), ("beta", .number(beta)), ("bias", .number(bias))]
    }
}
