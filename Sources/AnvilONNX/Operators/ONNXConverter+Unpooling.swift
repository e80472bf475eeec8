import Anvil
import Foundation

/// Max pooling's positions and their inverse: `MaxPool`'s second output (`Indices`) and
/// `MaxUnpool`.
extension ONNXConverter {
    static func registerUnpoolingOperators(_ table: inout [String: (ONNXConverter) -> (Onnx_NodeProto, Int) throws -> Void]) {
        table["MaxUnpool"] = { $0.opMaxUnpool }
    }

    /// `MaxPool`'s `Indices` output, when a node or the graph reads it: a `MaxPoolingIndices`
    /// over the pooling's own window (`storage_order` 1: column-major within each image).
    func setMaxPoolIndices(_ node: Onnx_NodeProto, _ tensor: ComputedTensor, _ window: PoolingWindow, shape: [Int?]) throws {
        let storageOrder = try NodeAttributes(node).int("storage_order", 0)
        guard storageOrder == 0 || storageOrder == 1 else {
            throw fail(node, "storage_order \(storageOrder) is not 0 (row-major) or 1 (column-major)")
        }
        guard node.output.count > 1, !node.output[1].isEmpty, !(consumers[node.output[1]] ?? []).isEmpty else { return }
        let name = try add(node, [tensor.name], suffix: "_indices") {
            MaxPoolingIndices(window: window, columnMajor: storageOrder == 1, name: $0)
        }
        try set(node, .tensor(ComputedTensor(name, shape)), index: 1)
    }

    /// `MaxUnpool` (2-D; `kernel_shape`, `strides`, `pads`, optional constant `output_shape`):
    /// the engine's `MaxUnpooling`, the indices a computed tensor (MaxPool's `Indices`).
    func opMaxUnpool(_ node: Onnx_NodeProto, _ index: Int) throws {
        let values = try act(node)
        try requireSpatial(node, values)
        let indices = try act(node, 1)
        guard indices.isSpatial, indices.shape == values.shape else {
            throw fail(node, "needs indices I of X's shape \(Self.text(values.onnxShape)), got \(Self.text(indices.onnxShape))")
        }
        let a = try WindowAttributes(NodeAttributes(node))
        guard let kernel = a.kernel else { throw fail(node, "attribute 'kernel_shape' is missing") }
        let stride = a.strides ?? [1, 1], pads = a.pads ?? [0, 0, 0, 0]
        guard kernel.count == 2, stride.count == 2, pads.count == 4 else {
            throw fail(node, "only 2-D unpooling is supported (kernel_shape \(kernel), strides \(stride), pads \(pads))")
        }
        guard let h = values.shape[0], let w = values.shape[1], let channels = values.shape[2] else {
            throw fail(node, "cannot take an open input size (its output size depends on it); pass --input-shape C,H,W")
        }
        var size = ((h - 1) * stride[0] - pads[0] - pads[2] + kernel[0], (w - 1) * stride[1] - pads[1] - pads[3] + kernel[1])
        if let shape = try const(node, 2, required: false) {
            let dims = try shape.integers()
            guard dims.count == 4, dims[1] == channels else {
                throw fail(node, "output_shape \(dims) must be [N, \(channels), H, W]")
            }
            size = (dims[2], dims[3])
        }
        let name = try add(node, [values.name, indices.name]) {
            MaxUnpooling(kernel: Self.pair(kernel), stride: Self.pair(stride),
                         padding: .explicit(top: pads[0], left: pads[1], bottom: pads[2], right: pads[3]), outputSize: size, name: $0)
        }
        try set(node, ComputedTensor(name, [size.0, size.1, channels]))
    }
}
