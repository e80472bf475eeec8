import Anvil
import Foundation

/// The operators of detection and segmentation heads: `RoiAlign` (Mask R-CNN's region pooling)
/// and `DeformConv` (deformable convolution v1/v2).
extension ONNXConverter {
    static func registerDetectionOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        table["RoiAlign"] = { $0.opRoiAlign }
        table["DeformConv"] = { $0.opDeformConv }
    }

    /// `RoiAlign` (every mode, coordinate transformation, output size, sampling ratio and
    /// scale): the engine's `RoiAlign` on the features held `[N, H, W, C]`.
    ///
    /// Its output has one item per region (`[R, C, Ho, Wo]`), not one per image, and a region
    /// reads whichever image its batch index names: the operator works across the batch. So it
    /// converts in a graph converted as one item (fixed input sizes; a graph whose inputs'
    /// first axes differ, or which fails batch-first, is retried so), where every tensor is
    /// whole; the regions and indices may be computed or constants.
    func opRoiAlign(_ node: Onnx_NodeProto, _ index: Int) throws {
        let a = NodeAttributes(node)
        let modeName = try a.string("mode", "avg")
        let modes: [String: RoiAlignMode] = ["avg": .average, "max": .max]
        guard let mode = modes[modeName] else { throw fail(node, "mode '\(modeName)' is not avg or max") }
        // Opset 10's RoiAlign predates the attribute and maps corners as output_half_pixel does.
        let transformName = try a.string("coordinate_transformation_mode", opset >= 16 ? "half_pixel" : "output_half_pixel")
        let transforms: [String: RoiAlignCoordinates] = ["half_pixel": .halfPixel, "output_half_pixel": .outputHalfPixel]
        guard let coordinates = transforms[transformName] else {
            throw fail(node, "coordinate_transformation_mode '\(transformName)' is not half_pixel or output_half_pixel")
        }
        let outputHeight = try a.int("output_height", 1), outputWidth = try a.int("output_width", 1)
        let samplingRatio = try a.int("sampling_ratio", 0), spatialScale = try a.float("spatial_scale", 1)
        guard (1 ... 1 << 16).contains(outputHeight), (1 ... 1 << 16).contains(outputWidth) else {
            throw fail(node, "output_height and output_width must be between 1 and 65536, got \(outputHeight) and \(outputWidth)")
        }
        guard (0 ... 1 << 16).contains(samplingRatio) else { throw fail(node, "sampling_ratio must be 0 (adaptive) to 65536, got \(samplingRatio)") }
        guard spatialScale.isFinite, spatialScale > 0 else { throw fail(node, "spatial_scale must be a positive number, got \(spatialScale)") }
        let features = try wholeOperand(node, 0, "X")
        let rois = try wholeOperand(node, 1, "rois"), indices = try wholeOperand(node, 2, "batch_indices")
        guard features.onnxRank == 4, let channels = features.onnxShape[1] else {
            throw fail(node, "needs features X [N, C, H, W] with known channels, got \(Self.text(features.onnxShape))")
        }
        guard rois.onnxRank == 2, rois.onnxShape[1] == 4, let count = rois.onnxShape[0] else {
            throw fail(node, "needs rois [R, 4] (x1, y1, x2, y2), got \(Self.text(rois.onnxShape))")
        }
        guard indices.onnxRank == 1, indices.onnxShape[0] == count else {
            throw fail(node, "needs batch_indices [\(count)], one per region, got \(Self.text(indices.onnxShape))")
        }
        // [N, C, H, W] held [N, H, W, C]: ONNX axis i at Anvil axis target[i].
        let channelsLast = try transpose(node, features, to: [1, 4, 2, 3])
        let name = try add(node, [channelsLast.name, rois.name, indices.name]) {
            RoiAlign(mode: mode, coordinates: coordinates, outputHeight: outputHeight, outputWidth: outputWidth, samplingRatio: samplingRatio,
                     spatialScale: Float(spatialScale), name: $0)
        }
        let pooled = ComputedTensor(name, [count, outputHeight, outputWidth, channels], permutation: [1, 4, 2, 3],
                                    batchFold: BatchFold(axis: 0, inner: count, wholeItem: true))
        // Whole items are held in ONNX's order ([R, C, Ho, Wo]), as every operator after expects.
        try set(node, try toONNXOrder(node, pooled))
    }

    /// Input `index` of a region operator as a whole item in ONNX's order: a whole computed
    /// tensor, or a constant written as a `Constant` layer; an error naming `what` otherwise.
    func wholeOperand(_ node: Onnx_NodeProto, _ index: Int, _ what: String) throws -> ComputedTensor {
        switch try value(node, index) {
        case .tensor(let t)? where isWholeItem(t):
            return try toONNXOrder(node, try exact(node, t))
        case .constant(let c)? where isUnbatched:
            return wholeItem(try writeConstant(node, c), c.shape)
        case nil:
            throw fail(node, "input \(index) ('\(what)') is missing")
        default:
            throw fail(node, "pools regions across the batch (its output has one item per region, and '\(what)' is not a whole item): Anvil converts it when the graph is converted as one item, which needs fixed input sizes (pass --input-shape C,H,W, or export with fixed sizes)")
        }
    }

    /// `DeformConv` (2-D: offsets, optional bias and mask, `group`, `offset_group`,
    /// `dilations`, `pads`, `strides`, `kernel_shape`): the engine's `DeformableConvolution`,
    /// its offsets and mask read channels-last in ONNX's channel order.
    func opDeformConv(_ node: Onnx_NodeProto, _ index: Int) throws {
        let image = try act(node)
        try requireSpatial(node, image)
        let weights = try constant(node, 1)
        guard weights.rank == 4 else { throw fail(node, "weights W of shape \(weights.shape); only 2-D deformable convolutions are supported") }
        let offsets = try act(node, 2)
        try requireSpatial(node, offsets)
        let bias = try const(node, 3, required: false)
        let mask = try value(node, 4) == nil ? nil : try act(node, 4)
        if let mask { try requireSpatial(node, mask) }
        let a = try WindowAttributes(NodeAttributes(node))
        let attributes = NodeAttributes(node)
        let groups = try attributes.int("group", 1), offsetGroups = try attributes.int("offset_group", 1)
        let kernel = a.kernel ?? [weights.shape[2], weights.shape[3]]
        let stride = a.strides ?? [1, 1], dilation = a.dilations ?? [1, 1], pads = a.pads ?? [0, 0, 0, 0]
        guard kernel.count == 2, stride.count == 2, dilation.count == 2, pads.count == 4 else {
            throw fail(node, "kernel_shape, strides, dilations and pads must be 2-D (pads: 4 values), got \(kernel), \(stride), \(dilation), \(pads)")
        }
        guard kernel == [weights.shape[2], weights.shape[3]] else { throw fail(node, "kernel_shape \(kernel) does not match weights \(weights.shape)") }
        guard let inputChannels = image.shape[2], groups >= 1, weights.shape[1] * groups == inputChannels, weights.shape[0] % groups == 0 else {
            throw fail(node, "weights \(weights.shape) with group \(groups) do not match \(Self.text(image.onnxShape))")
        }
        guard offsetGroups >= 1, inputChannels % offsetGroups == 0 else {
            throw fail(node, "offset_group \(offsetGroups) must divide the \(inputChannels) input channels")
        }
        if let bias, bias.count != weights.shape[0] { throw fail(node, "bias B has \(bias.count) values for \(weights.shape[0]) output channels") }
        var parameters = [("W", weights.floats)]
        if let bias { parameters.append(("b", bias.floats)) }
        let outputs = weights.shape[0]
        let name = try add(node, [image.name, offsets.name] + (mask.map { [$0.name] } ?? []), parameters: parameters) {
            DeformableConvolution(channels: outputs, kernel: Self.pair(kernel), stride: Self.pair(stride),
                                  padding: .explicit(top: pads[0], left: pads[1], bottom: pads[2], right: pads[3]),
                                  dilation: Self.pair(dilation), groups: groups, offsetGroups: offsetGroups, useBias: bias != nil, name: $0)
        }
        try set(node, ComputedTensor(name, [offsets.shape[0], offsets.shape[1], outputs]))
    }
}
