/// What a `Conv` or `ConvTranspose` node reads before its own rules: the input, the weights as
/// rank 4, the optional bias and the window attributes. A 1-D node on a sequence has
/// `[out, in, k]` weights, read as `[out, in, 1, k]` with its attributes widened to the height-1
/// window Anvil runs.
struct ConvolutionOperands {
    /// The input tensor.
    let tensor: ComputedTensor
    /// Whether the input is a sequence (a 1-D convolution).
    let oneD: Bool
    /// The weights, rank 4.
    let weights: ConstantTensor
    /// The bias, if the node has one.
    let bias: ConstantTensor?
    /// The window attributes (height-1 for a 1-D node).
    let attributes: WindowAttributes
    /// Whether rank-3 weights and 1-D attributes were widened (so 1-D-only attributes such as
    /// ConvTranspose's output padding need the same).
    let widened: Bool
}

extension ONNXConverter {
    /// The operands of a convolution-like node; `what` names it in the error for weights of
    /// another rank ("convolutions", "transposed convolutions").
    func convolutionOperands(_ node: Onnx_NodeProto, what: String) throws -> ConvolutionOperands {
        let tensor = try act(node)
        let oneD = try windowed(node, tensor)
        var weights = try constant(node, 1)
        let bias = try const(node, 2, required: false)
        var attributes = try WindowAttributes(NodeAttributes(node))
        let widened = oneD && weights.rank == 3
        if widened {
            weights = try weights.reshaped([weights.shape[0], weights.shape[1], 1, weights.shape[2]])
            attributes = attributes.oneDimensional()
        }
        guard weights.rank == 4 else {
            throw fail(node, "weights of rank \(weights.rank) on an input of rank \(tensor.rank); only 1-D and 2-D \(what) are supported")
        }
        return ConvolutionOperands(tensor: tensor, oneD: oneD, weights: weights, bias: bias, attributes: attributes,
                                   widened: widened)
    }
}
