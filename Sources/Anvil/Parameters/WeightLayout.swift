/// How weight tensors are ordered in the data given to `compile`. Anvil reorders them once,
/// at compile time, into the layout it computes in.
///
/// | tensor | `.forge` | `.pytorch` | `.tensorflow` |
/// |---|---|---|---|
/// | Convolution | `[out][kh][kw][in]` | `[out][in][kh][kw]` | `[kh][kw][in][out]` |
/// | Depthwise | `[c·m][kh][kw]` | `[c·m][1][kh][kw]` | `[kh][kw][c][m]` |
/// | Dense | `[out][h][w][c]` | `[out][c][h][w]` | `[h·w·c][out]` |
/// | TransposedConvolution | `[out][kh][kw][in/g]` | `[in][out/g][kh][kw]` | `[kh][kw][out/g][in]` |
public enum WeightLayout: String, Sendable, CaseIterable {
    /// Forge / MPSCNN (Anvil's default): output channel first, input channel last.
    case forge
    /// PyTorch, Caffe and ONNX: `OIHW`, Dense over a `CHW`-flattened input.
    case pytorch
    /// TensorFlow and Keras: `HWIO`, Dense `[in][out]`.
    case tensorflow

    /// MPSCNN uses Forge's layout.
    public static let mpscnn = WeightLayout.forge
    /// Caffe uses PyTorch's layout.
    public static let caffe = WeightLayout.pytorch
    /// ONNX uses PyTorch's layout.
    public static let onnx = WeightLayout.pytorch
    /// Keras uses TensorFlow's layout.
    public static let keras = WeightLayout.tensorflow
}
