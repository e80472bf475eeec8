import Anvil
import Foundation

/// `Col2Im`, the inverse of im2col (PyTorch's `fold`).
extension ONNXConverter {
    static func registerCol2ImOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        table["Col2Im"] = { $0.opCol2Im }
    }

    /// `Col2Im` of a 2-D image (`image_shape` and `block_shape` constants; `dilations`, `pads`,
    /// `strides`): the engine's `Col2Im` on the blocks `[N, C·kh·kw, L]` held channels-last.
    func opCol2Im(_ node: Onnx_NodeProto, _ index: Int) throws {
        let columns = try act(node)
        guard columns.isStandard, columns.rank == 3 else {
            throw fail(node, "needs blocks [N, C·kh·kw, L], got \(Self.text(columns.onnxShape))")
        }
        let image = try constant(node, 1).integers(), block = try constant(node, 2).integers()
        guard image.count == 2, block.count == 2 else {
            throw fail(node, "image_shape \(image) and block_shape \(block) must have 2 values (3-D images are not supported)")
        }
        let limit = WindowAttributes.limit
        guard image.allSatisfy({ (1 ... limit).contains($0) }), block.allSatisfy({ (1 ... limit).contains($0) }) else {
            throw fail(node, "image_shape \(image) and block_shape \(block) must be between 1 and \(limit)")
        }
        let a = try WindowAttributes(NodeAttributes(node))
        let stride = a.strides ?? [1, 1], dilation = a.dilations ?? [1, 1], pads = a.pads ?? [0, 0, 0, 0]
        guard stride.count == 2, dilation.count == 2, pads.count == 4, pads.allSatisfy({ $0 >= 0 }) else {
            throw fail(node, "strides \(stride), dilations \(dilation) and pads \(pads) must be 2-D (pads: 4 values, not negative)")
        }
        guard let values = columns.shape[1], values % (block[0] * block[1]) == 0 else {
            throw fail(node, "the blocks' \(Self.text([columns.shape[1]])) values are not a multiple of block_shape \(block)")
        }
        let name = try add(node, [columns.name]) {
            Col2Im(imageSize: Self.pair(image), block: Self.pair(block), stride: Self.pair(stride), dilation: Self.pair(dilation),
                   padding: .explicit(top: pads[0], left: pads[1], bottom: pads[2], right: pads[3]), name: $0)
        }
        try set(node, ComputedTensor(name, [image[0], image[1], values / (block[0] * block[1])]))
    }
}
