"""ONNX handlers of reductions that torchvision exports for a global pooling: `x.mean([2, 3])`
(ShuffleNet v2, MNASNet) is a ReduceMean over the spatial axes, `x.amax([2, 3])` a ReduceMax. A
mixin of from_onnx.OnnxConverter, using its helpers (act, const, add, set, fail)."""

import numpy as np


def _attributes(node):
    """The node's attributes as Python values (bytes decoded to str)."""
    import onnx
    result = {}
    for attribute in node.attribute:
        value = onnx.helper.get_attribute_value(attribute)
        result[attribute.name] = value.decode() if isinstance(value, bytes) else value
    return result


class ReduceOps:
    """ReduceMean / ReduceMax over every spatial axis: GlobalAveragePooling / GlobalMaxPooling."""

    def reduce_spatial(self, node, layer_type):
        """A reduction over exactly the spatial axes of an image (2, 3) or a sequence (2): the
        global pooling `layer_type`; keepdims 1 gives ONNX's [N, C, 1, 1] (Anvil's vector of C),
        keepdims 0 gives [N, C]."""
        from ..from_onnx import Act
        value = self.value(node, 0)
        a = _attributes(node)
        if self.opset >= 18 or node.op_type == "ReduceSum":
            axes = self.const(node, 1, required=False)
            axes = None if axes is None or axes.size == 0 else [int(v) for v in axes.reshape(-1)]
        else:
            axes = a.get("axes")
        keep = int(a.get("keepdims", 1))
        if isinstance(value, np.ndarray):
            reduce = {"ReduceMean": np.mean, "ReduceMax": np.max}[node.op_type]
            self.set(node, reduce(value, axis=None if axes is None else tuple(axes), keepdims=bool(keep)))
            return
        tensor = self.act(node)
        if tensor.rank not in (3, 4):
            self.fail(node, f"reduces an input of shape {tensor.onnx_shape}; Anvil reduces the spatial axes of "
                            "an image or a sequence (a global pooling)")
        spatial = list(range(2, tensor.rank))
        wanted = sorted(int(v) % tensor.rank for v in axes) if axes is not None else None
        if wanted != spatial:
            self.fail(node, f"reduces axes {wanted if wanted is not None else 'all'} of an input of shape "
                            f"{tensor.onnx_shape}; Anvil reduces exactly the spatial axes {spatial} (a global pooling)")
        name = self.add(node, layer_type, [tensor.name])
        c = tensor.shape[-1]
        if keep:
            self.set(node, Act(name, (1,) * (tensor.rank - 2) + (c,), anvil_rank=2))
        else:
            self.set(node, Act(name, (c,)))

    def op_ReduceMean(self, node, index):
        """`ReduceMean` over the spatial axes: GlobalAveragePooling."""
        self.reduce_spatial(node, "GlobalAveragePooling")

    def op_ReduceMax(self, node, index):
        """`ReduceMax` over the spatial axes: GlobalMaxPooling."""
        self.reduce_spatial(node, "GlobalMaxPooling")
