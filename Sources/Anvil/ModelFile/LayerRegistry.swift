/// The built-in layers model files can describe, one line each, and the lookup from a file's
/// `type` to the layer that decodes it. A new built-in layer adds its line here.
enum LayerRegistry {
    /// Every built-in layer type, in the order of `docs/model-format.md`'s table.
    static let builtIn: [any ModelFileCodable.Type] = [
        Convolution.self,
        DepthwiseConvolution.self,
        PointwiseConvolution.self,
        MaxPooling.self,
        AveragePooling.self,
        GlobalAveragePooling.self,
        GlobalMaxPooling.self,
        Dense.self,
        Flatten.self,
        Activation.self,
        PReLU.self,
        Softmax.self,
        LogSoftmax.self,
        BatchNormalization.self,
        Add.self,
        Elementwise.self,
        Concatenate.self,
        ChannelShuffle.self,
        Transpose.self,
        Reshape.self,
        Squeeze.self,
        Unsqueeze.self,
        Slice.self,
        DepthToSpace.self,
        SpaceToDepth.self,
        Resize.self,
        TransposedConvolution.self,
        Pad.self,
        InstanceNormalization.self,
        LayerNormalization.self,
        GroupNormalization.self,
        LocalResponseNormalization.self,
        LpPooling.self,
        Reduce.self,
        ArgReduce.self,
        Cumulative.self,
        TopK.self,
        Take.self,
        Embedding.self,
        Select.self,
        Constant.self,
        ShapeOf.self,
        Gather.self,
        Arange.self,
        ConstantOfShape.self,
        Cast.self,
        Expand.self,
        MatMul.self,
    ]

    /// The layer type for each file type name.
    static let byFileTypeName: [String: any ModelFileCodable.Type] =
        Dictionary(builtIn.map { ($0.fileTypeName, $0) }, uniquingKeysWith: { first, _ in first })
}
