"""Converts an ONNX model to an Anvil model file.

    python3 Scripts/convert_onnx.py model.onnx out/ [--name NAME] [--input-shape C,H,W]

An input whose height/width are symbolic (dim_param) or missing stays open in the model file
(null: any size at predict) unless --input-shape fixes them; the channels must be known.

Writes out/model.json and out/weights.bin with layout "pytorch" (ONNX weights are OIHW and
Flatten/Reshape of NCHW is C,H,W order, exactly Anvil's "pytorch" layout). The NCHW graph
becomes Anvil's NHWC one: channel axes map to Anvil's channels, and a Flatten (or a Reshape
to [N, -1]) followed by Gemm/MatMul becomes a Dense layer on the spatial tensor, whose
C,H,W-ordered weights Anvil reorders at compile time. Needs `pip install onnx`.
Supported operators and errors: docs/converters.md.
"""

import sys

import numpy as np

from . import cli
from .writer import ConversionError, ModelWriter, activation_json

SELU_ALPHA = 1.67326319217681884765625
SELU_GAMMA = 1.05070102214813232421875
FLOAT_MAX = 3.4028234663852886e38


class Act:
    """An activation tensor in Anvil: name and shape (h, w, c) for NCHW, (n,) for [N, n]; a
    height or width is None when it depends on an open input size."""

    def __init__(self, name, shape):
        """`shape` is (h, w, c) for an NCHW tensor, (n,) for [N, n]; None for an open dimension."""
        self.name = name
        self.shape = tuple(None if v is None else int(v) for v in shape)

    @property
    def open(self):
        """Whether a dimension depends on an open input size."""
        return None in self.shape

    @property
    def spatial(self):
        """Whether the tensor is an image."""
        return len(self.shape) == 3

    @property
    def onnx_shape(self):
        """The shape as ONNX sees it: [1, C, H, W] or [1, n]."""
        return [1, self.shape[2], self.shape[0], self.shape[1]] if self.spatial else [1, self.shape[0]]


class Flat:
    """A spatial tensor flattened to [N, C*H*W] (C,H,W order), not yet written: Gemm/MatMul read
    the spatial tensor directly; anything else gets an Anvil Flatten (order chw)."""

    def __init__(self, source):
        """`source` is the spatial Act being flattened."""
        self.source = source
        self.written = None

    @property
    def shape(self):
        """(C·H·W,): the flattened length (None when the source's size is open)."""
        return (None,) if self.source.open else (int(np.prod(self.source.shape)),)


def _attributes(node):
    """The node's attributes as Python values (bytes decoded to str)."""
    import onnx
    result = {}
    for attribute in node.attribute:
        result[attribute.name] = onnx.helper.get_attribute_value(attribute)
    for key, value in list(result.items()):
        if isinstance(value, bytes):
            result[key] = value.decode()
    return result


class OnnxConverter:
    """Converts an onnx ModelProto into a ModelWriter (layout "pytorch"), NCHW mapped to Anvil's NHWC."""
    def __init__(self, model, name=None, input_shape=None):
        """`input_shape` (C, H, W) fills in open input dimensions."""
        self.model = model
        self.graph = model.graph
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 13)
        self.writer = ModelWriter(name or self.graph.name or "onnx", layout="pytorch")
        self.input_shape = input_shape
        self.values = {}     # ONNX tensor name -> Act, Flat or np.ndarray (a constant)
        self.consumers = {}  # ONNX tensor name -> indices of nodes reading it
        self.skip = set()    # indices of nodes folded into an earlier one

    # -- helpers --------------------------------------------------------------------------

    def describe(self, node):
        """"node '<name>' (<op>)", the node named by its name or first output; starts every error."""
        label = node.name or (node.output[0] if node.output else "?")
        return f"node '{label}' ({node.op_type})"

    def fail(self, node, message):
        """Raises the ConversionError naming the node and its op type."""
        raise ConversionError(f"{self.describe(node)}: {message}")

    def layer_name(self, node, suffix=""):
        """A unique Anvil name for the node's layer (its name or first output, without a leading '/')."""
        base = node.name or (node.output[0] if node.output else node.op_type)
        return self.writer.unique_name(base.lstrip("/") + suffix)

    def add(self, node, layer_type, inputs, parameters=None, suffix="", **options):
        """Writes one layer for `node` with its parameter tensors; returns the Anvil name."""
        name = self.layer_name(node, suffix)
        self.writer.add_layer(name, layer_type, inputs, **options)
        for key, values in (parameters or {}).items():
            self.writer.add_tensor(f"{name}_{key}", values)
        return name

    def value(self, node, index):
        """What input `index` of the node is: an Act, a Flat, a constant array, or None when absent."""
        if index >= len(node.input) or node.input[index] == "":
            return None
        name = node.input[index]
        if name not in self.values:
            self.fail(node, f"reads '{name}', which is neither a graph input, an initializer nor an earlier node's output")
        return self.values[name]

    def act(self, node, index=0, allow_flat=False):
        """Input `index` as a computed tensor; a pending flatten is written unless `allow_flat`."""
        value = self.value(node, index)
        if isinstance(value, Flat):
            return value if allow_flat else self.write_flatten(value, node)
        if not isinstance(value, Act):
            self.fail(node, f"input {index} ('{node.input[index]}') must be a computed tensor, not a constant")
        return value

    def write_flatten(self, flat, node):
        """Writes the Flatten (chw order) a pending flatten stands for, once; returns its tensor."""
        if flat.written is None:
            name = self.add(node, "Flatten", [flat.source.name], suffix="_flatten", order="chw")
            flat.written = Act(name, flat.shape)
        return flat.written

    def const(self, node, index, required=True):
        """Input `index` as a constant array; an error for a computed tensor or, when `required`, a missing input."""
        value = self.value(node, index)
        if value is None:
            if required:
                self.fail(node, f"input {index} is missing")
            return None
        if not isinstance(value, np.ndarray):
            self.fail(node, f"input {index} ('{node.input[index]}') must be a constant (an initializer)")
        return value

    def spatial(self, node, tensor):
        """An error unless `tensor` is a 4-D NCHW image."""
        if not isinstance(tensor, Act) or not tensor.spatial:
            self.fail(node, f"needs a 4-D NCHW input, got shape {tensor.onnx_shape}")

    def set(self, node, value, index=0):
        """Records `value` as output `index` of the node; an error when a later output is used."""
        if isinstance(value, np.generic):
            value = np.asarray(value)
        self.values[node.output[index]] = value
        for extra in node.output[index + 1:]:
            if extra and self.consumers.get(extra):
                self.fail(node, f"its output '{extra}' is used, and Anvil computes only the first output")

    # -- conversion -----------------------------------------------------------------------

    def convert(self):
        """Converts every node in graph order; returns the ModelWriter, outputs set and pruned."""
        from onnx import numpy_helper
        for initializer in self.graph.initializer:
            self.values[initializer.name] = numpy_helper.to_array(initializer)
        for index, node in enumerate(self.graph.node):
            for name in node.input:
                self.consumers.setdefault(name, []).append(index)
        for output in self.graph.output:
            self.consumers.setdefault(output.name, []).append(-1)
        for graph_input in self.graph.input:
            if graph_input.name in self.values:
                continue
            self.add_input(graph_input)
        for index, node in enumerate(self.graph.node):
            if index in self.skip:
                continue
            if node.domain not in ("", "ai.onnx"):
                self.fail(node, f"operators of domain '{node.domain}' are not supported")
            handler = getattr(self, f"op_{node.op_type}", None)
            if handler is None:
                self.fail(node, "this operator is not supported by the Anvil converter (see docs/converters.md)")
            handler(node, index)
        outputs = []
        for output in self.graph.output:
            value = self.values.get(output.name)
            if isinstance(value, Flat):
                value = value.written or self.write_flatten(value, self.graph.node[-1])
            if not isinstance(value, Act):
                raise ConversionError(f"graph output '{output.name}' is a constant or was never computed")
            outputs.append(value.name)
        self.writer.set_outputs(outputs)
        self.writer.prune()
        return self.writer

    def add_input(self, graph_input):
        """Adds a graph input: [N, C, H, W] or [N, F]. An open height/width (dim_param or no
        dim_value) stays open unless --input-shape gives the sizes; the channels must be known."""
        dims = []
        for d in graph_input.type.tensor_type.shape.dim:
            dims.append(d.dim_value if d.HasField("dim_value") else None)
        name = self.writer.unique_name(graph_input.name)
        if len(dims) == 4:
            c, h, w = dims[1:]
            if self.input_shape is not None:
                c, h, w = self.input_shape
            if c is None:
                raise ConversionError(f"input '{graph_input.name}' has open channels {dims}; pass --input-shape C,H,W")
            self.writer.add_input(name, (h, w, c))
            self.values[graph_input.name] = Act(name, (h, w, c))
        elif len(dims) == 2 and dims[1] is not None:
            self.writer.add_input(name, (1, 1, dims[1]))
            self.values[graph_input.name] = Act(name, (dims[1],))
        else:
            raise ConversionError(f"input '{graph_input.name}' has shape {dims}; Anvil takes NCHW images or [N, F] vectors")

    # -- constants and shape arithmetic -----------------------------------------------------

    def op_Constant(self, node, index):
        """`Constant`: a constant array."""
        from onnx import numpy_helper
        a = _attributes(node)
        if "value" in a:
            value = numpy_helper.to_array(a["value"])
        elif "value_float" in a:
            value = np.array(a["value_float"], np.float32)
        elif "value_floats" in a:
            value = np.array(a["value_floats"], np.float32)
        elif "value_int" in a:
            value = np.array(a["value_int"], np.int64)
        elif "value_ints" in a:
            value = np.array(a["value_ints"], np.int64)
        else:
            self.fail(node, f"unsupported constant attributes {sorted(a)}")
        self.set(node, value)

    def op_Shape(self, node, index):
        """`Shape` of a tensor or constant (start/end honoured): a constant."""
        value = self.value(node, 0)
        if isinstance(value, np.ndarray):
            shape = np.array(value.shape, np.int64)
        else:
            if isinstance(value, (Act, Flat)) and None in value.shape:
                self.fail(node, "the shape of a tensor whose height/width depend on the open input size is not a "
                                "constant; pass --input-shape C,H,W (or export with fixed sizes)")
            shape = np.array(value.onnx_shape if isinstance(value, Act) else [1, value.shape[0]], np.int64)
        a = _attributes(node)
        start, end = a.get("start", 0), a.get("end", None)
        self.set(node, shape[start:end])

    def op_Gather(self, node, index):
        """`Gather` on constants: a constant."""
        data, indices = self.const(node, 0), self.const(node, 1)
        self.set(node, np.take(data, indices.astype(np.int64), axis=_attributes(node).get("axis", 0)))

    def _axes(self, node):
        """The node's axes, from its second input (opset 13+) or its attribute."""
        if self.opset >= 13 and len(node.input) > 1 and node.input[1]:
            return [int(v) for v in self.const(node, 1).reshape(-1)]
        return list(_attributes(node).get("axes", []))

    def op_Unsqueeze(self, node, index):
        """`Unsqueeze` of a constant: a constant (of a computed tensor: an error)."""
        value = self.value(node, 0)
        if not isinstance(value, np.ndarray):
            self.fail(node, "Unsqueeze of a computed tensor is not supported")
        result = value
        for axis in sorted(a % (value.ndim + len(self._axes(node))) for a in self._axes(node)):
            result = np.expand_dims(result, axis)
        self.set(node, result)

    def op_Squeeze(self, node, index):
        """`Squeeze` of a constant: a constant."""
        value = self.value(node, 0)
        if not isinstance(value, np.ndarray):
            self.fail(node, "Squeeze of a computed tensor is not supported")
        axes = self._axes(node)
        self.set(node, np.squeeze(value, axis=tuple(axes)) if axes else np.squeeze(value))

    def op_Cast(self, node, index):
        """`Cast` of a constant to the target type; a tensor passes unchanged."""
        value = self.value(node, 0)
        if isinstance(value, np.ndarray):
            from onnx import helper
            self.set(node, value.astype(helper.tensor_dtype_to_np_dtype(_attributes(node)["to"])))
        else:
            self.set(node, value)

    def op_Identity(self, node, index):
        """`Identity`: its input."""
        self.set(node, self.value(node, 0))

    def op_Dropout(self, node, index):
        """`Dropout` at inference: its input."""
        self.set(node, self.value(node, 0))

    # -- layers -----------------------------------------------------------------------------

    def window(self, node, tensor, kernel, pooling):
        """Padding, stride, dilation, output size and ceil mode of a Conv or pooling window (auto_pad resolved)."""
        a = _attributes(node)
        stride = tuple(a.get("strides", [1, 1]))
        dilation = tuple(a.get("dilations", [1, 1]))
        if len(kernel) != 2 or len(stride) != 2 or len(dilation) != 2:
            self.fail(node, "only 2-D windows are supported")
        auto_pad = a.get("auto_pad", "NOTSET")
        h, w, _ = tensor.shape
        ceil = bool(a.get("ceil_mode", 0))
        extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
        if auto_pad == "SAME_LOWER" and None in (h, w):
            self.fail(node, "auto_pad SAME_LOWER on an open input size (its pads depend on the size); pass --input-shape C,H,W")
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            outs = [None if size is None else -(-size // s) for size, s in zip((h, w), stride)]
            if auto_pad == "SAME_UPPER":
                return "same", stride, dilation, outs, ceil
            totals = [max((o - 1) * s + e - size, 0) for o, s, e, size in zip(outs, stride, extent, (h, w))]
            pads = [totals[0] - totals[0] // 2, totals[1] - totals[1] // 2, totals[0] // 2, totals[1] // 2]
        elif auto_pad == "VALID":
            pads = [0, 0, 0, 0]
        elif auto_pad == "NOTSET":
            pads = list(a.get("pads", [0, 0, 0, 0]))
            if len(pads) != 4:
                self.fail(node, "only 2-D pads are supported")
            pads = [pads[0], pads[1], pads[2], pads[3]]  # ONNX [top, left, bottom, right] = Anvil's order
        else:
            self.fail(node, f"auto_pad '{auto_pad}' is not supported")
        outs = []
        for size, e, s, before, after in zip((h, w), extent, stride, pads[:2], pads[2:]):
            if size is None:  # an open size: Anvil infers it per predicted size
                outs.append(None)
                continue
            span = size + before + after - e
            if span < 0:
                self.fail(node, f"the window does not fit the input {h}x{w}")
            out = (-(-span // s) if ceil else span // s) + 1
            if ceil and (out - 1) * s >= size + before:
                out -= 1
            outs.append(out)
        if pooling and (max(pads[0], pads[2]) >= extent[0] or max(pads[1], pads[3]) >= extent[1]):
            self.fail(node, f"pads {pads} must be smaller than the window {kernel}")
        return pads, stride, dilation, outs, ceil

    def op_Conv(self, node, index):
        """`Conv`: Convolution, or DepthwiseConvolution when group equals the input channels."""
        tensor = self.act(node)
        self.spatial(node, tensor)
        weights = self.const(node, 1)
        bias = self.const(node, 2, required=False)
        a = _attributes(node)
        if weights.ndim != 4:
            self.fail(node, f"weights of rank {weights.ndim}; only 2-D convolutions are supported")
        outputs, per_group, kh, kw = weights.shape
        kernel = tuple(a.get("kernel_shape", [kh, kw]))
        groups = int(a.get("group", 1))
        channels = tensor.shape[2]
        if per_group * groups != channels:
            self.fail(node, f"weights {list(weights.shape)} with group {groups} do not match {channels} input channels")
        padding, stride, dilation, (oh, ow), _ = self.window(node, tensor, kernel, pooling=False)
        parameters = {"W": weights}
        if bias is not None:
            parameters["b"] = bias
        common = dict(kernel=kernel, stride=stride, padding=padding, dilation=dilation, bias=bias is not None)
        if groups > 1 and groups == channels and per_group == 1:
            name = self.add(node, "DepthwiseConvolution", [tensor.name], parameters, multiplier=outputs // channels, **common)
        else:
            name = self.add(node, "Convolution", [tensor.name], parameters, channels=outputs, groups=groups, **common)
        self.set(node, Act(name, (oh, ow, outputs)))

    def pool(self, node, layer_type):
        """`MaxPool` / `AveragePool` of `layer_type`, with ceil mode and count_include_pad."""
        tensor = self.act(node)
        self.spatial(node, tensor)
        a = _attributes(node)
        kernel = tuple(a["kernel_shape"])
        padding, stride, dilation, (oh, ow), ceil = self.window(node, tensor, kernel, pooling=True)
        options = dict(kernel=kernel, stride=stride, padding=padding, dilation=dilation, ceilMode=ceil)
        if layer_type == "AveragePooling":
            options["countIncludesPadding"] = bool(a.get("count_include_pad", 0))
        name = self.add(node, layer_type, [tensor.name], **options)
        self.set(node, Act(name, (oh, ow, tensor.shape[2])))

    def op_MaxPool(self, node, index):
        """`MaxPool` (row-major storage only): MaxPooling."""
        if _attributes(node).get("storage_order", 0):
            self.fail(node, "storage_order 1 is not supported")
        self.pool(node, "MaxPooling")

    def op_AveragePool(self, node, index):
        """`AveragePool`: AveragePooling."""
        self.pool(node, "AveragePooling")

    def global_pool(self, node, layer_type):
        """A global pooling of `layer_type`; the output is 1x1xC."""
        tensor = self.act(node)
        self.spatial(node, tensor)
        name = self.add(node, layer_type, [tensor.name])
        self.set(node, Act(name, (1, 1, tensor.shape[2])))

    def op_GlobalAveragePool(self, node, index):
        """`GlobalAveragePool`: GlobalAveragePooling."""
        self.global_pool(node, "GlobalAveragePooling")

    def op_GlobalMaxPool(self, node, index):
        """`GlobalMaxPool`: GlobalMaxPooling."""
        self.global_pool(node, "GlobalMaxPooling")

    def op_BatchNormalization(self, node, index):
        """`BatchNormalization` in inference mode: BatchNormalization."""
        tensor = self.act(node)
        if _attributes(node).get("training_mode", 0):
            self.fail(node, "training_mode 1 is not supported (export the model in eval mode)")
        gamma, beta, mean, variance = (self.const(node, i) for i in range(1, 5))
        name = self.add(node, "BatchNormalization", [tensor.name],
                        {"gamma": gamma, "beta": beta, "mean": mean, "variance": variance},
                        epsilon=float(_attributes(node).get("epsilon", 1e-5)))
        self.set(node, Act(name, tensor.shape))

    def flatten_source(self, node, value):
        """A Gemm/MatMul input: (Anvil tensor name, element count)."""
        if isinstance(value, Flat):
            if value.source.open:
                self.fail(node, "its flattened input's size depends on the open input height/width, so the weight "
                                "count cannot match every size; pass --input-shape C,H,W")
            return value.source.name, int(np.prod(value.source.shape))
        if isinstance(value, Act) and not value.spatial:
            return value.name, value.shape[0]
        if isinstance(value, Act) and value.shape[:2] == (1, 1):
            return value.name, value.shape[2]
        self.fail(node, "its input must be 2-D ([N, features]); flatten the image first")

    def dense(self, node, index, weights, bias):
        """Writes a Dense layer; a sole-consumer Add of a constant vector becomes its bias."""
        source, inputs = self.flatten_source(node, self.value(node, 0))
        outputs = weights.shape[0]
        if weights.shape[1] != inputs:
            self.fail(node, f"weights {list(weights.shape)} do not match {inputs} input features")
        output_name = node.output[0]
        users = self.consumers.get(output_name, [])
        if bias is None and len(users) == 1 and users[0] > index:
            follower = self.graph.node[users[0]]
            if follower.op_type == "Add":
                other = follower.input[1] if follower.input[0] == output_name else follower.input[0]
                constant = self.values.get(other)
                if isinstance(constant, np.ndarray) and constant.size in (1, outputs) and constant.ndim <= 2:
                    bias = np.broadcast_to(constant.reshape(-1), (outputs,)).copy()
                    self.skip.add(users[0])
                    output_name = follower.output[0]
        parameters = {"W": weights}
        if bias is not None:
            parameters["b"] = bias
        name = self.add(node, "Dense", [source], parameters, neurons=outputs, bias=bias is not None)
        self.values[output_name] = Act(name, (outputs,))

    def op_Gemm(self, node, index):
        """`Gemm` (transB, alpha, beta, C): Dense, alpha and beta folded into the weights and bias."""
        a = _attributes(node)
        if a.get("transA", 0):
            self.fail(node, "transA=1 is not supported")
        weights = self.const(node, 1)
        if weights.ndim != 2:
            self.fail(node, f"B must be a 2-D constant, got shape {list(weights.shape)}")
        if not a.get("transB", 0):
            weights = weights.T
        weights = weights * float(a.get("alpha", 1.0))
        bias = self.const(node, 2, required=False)
        if bias is not None:
            if bias.size not in (1, weights.shape[0]):
                self.fail(node, f"C of shape {list(bias.shape)} is not a per-output bias")
            bias = np.broadcast_to(bias.reshape(-1) * float(a.get("beta", 1.0)), (weights.shape[0],)).copy()
        self.dense(node, index, weights, bias)

    def op_MatMul(self, node, index):
        """`MatMul` by a constant matrix: Dense (a following Add of a constant vector becomes its bias)."""
        if isinstance(self.value(node, 0), np.ndarray):
            self.fail(node, "the first input must be a computed tensor")
        weights = self.value(node, 1)
        if not isinstance(weights, np.ndarray):
            self.fail(node, "only MatMul by a constant weight matrix is supported")
        if weights.ndim != 2:
            self.fail(node, f"the weight matrix must be 2-D, got shape {list(weights.shape)}")
        self.dense(node, index, weights.T, None)

    def op_Flatten(self, node, index):
        """`Flatten` from axis 1: a pending flatten (nothing when a Gemm/MatMul reads it); of a constant, a constant."""
        value = self.value(node, 0)
        axis = _attributes(node).get("axis", 1)
        if isinstance(value, np.ndarray):
            self.set(node, value.reshape(int(np.prod(value.shape[:axis])), -1))
            return
        if axis != 1:
            self.fail(node, f"axis {axis} is not supported (only 1)")
        self.set(node, Flat(value) if isinstance(value, Act) and value.spatial else value)

    def op_Reshape(self, node, index):
        """`Reshape`: of a constant, a constant; of a tensor, only to its own shape or flattening to [N, -1]."""
        value = self.value(node, 0)
        target = [int(v) for v in self.const(node, 1).reshape(-1)]
        if isinstance(value, np.ndarray):
            self.set(node, value.reshape([value.shape[i] if t == 0 else t for i, t in enumerate(target)]))
            return
        current = value.source.onnx_shape if isinstance(value, Flat) else value.onnx_shape
        if isinstance(value, Flat):
            current = [1, int(np.prod(current[1:]))]
        allow_zero = _attributes(node).get("allowzero", 0)
        resolved = [current[i] if (t == 0 and not allow_zero and i < len(current)) else t for i, t in enumerate(target)]
        total = int(np.prod(current))
        if resolved.count(-1) == 1:
            known = int(np.prod([v for v in resolved if v != -1]))
            resolved[resolved.index(-1)] = total // known if known else 0
        if int(np.prod(resolved)) != total:
            self.fail(node, f"cannot reshape {current} to {target}")
        if resolved == current:
            self.set(node, value)
        elif len(resolved) == 2 and resolved[0] == 1:
            source = value if isinstance(value, Flat) else (Flat(value) if value.spatial else value)
            self.set(node, source)
        else:
            self.fail(node, f"reshaping {current} to {resolved} is not supported (only flattening to [N, -1])")

    def activation(self, node, function):
        """An Activation applying `function` to the node's input."""
        tensor = self.act(node)
        name = self.add(node, "Activation", [tensor.name], function=function)
        self.set(node, Act(name, tensor.shape))

    def op_Relu(self, node, index):
        """`Relu`: relu."""
        self.activation(node, "relu")

    def op_Sigmoid(self, node, index):
        """`Sigmoid`: sigmoid."""
        self.activation(node, "sigmoid")

    def op_Tanh(self, node, index):
        """`Tanh`: tanh."""
        self.activation(node, "tanh")

    def op_HardSwish(self, node, index):
        """`HardSwish`: hardSwish."""
        self.activation(node, "hardSwish")

    def op_LeakyRelu(self, node, index):
        """`LeakyRelu`: leakyRelu with its alpha."""
        self.activation(node, activation_json("leakyRelu", alpha=float(_attributes(node).get("alpha", 0.01))))

    def op_Elu(self, node, index):
        """`Elu`: elu with its alpha."""
        self.activation(node, activation_json("elu", alpha=float(_attributes(node).get("alpha", 1.0))))

    def op_Selu(self, node, index):
        """`Selu` with ONNX's standard constants: selu."""
        a = _attributes(node)
        if abs(a.get("alpha", SELU_ALPHA) - SELU_ALPHA) > 1e-6 or abs(a.get("gamma", SELU_GAMMA) - SELU_GAMMA) > 1e-6:
            self.fail(node, "only the standard SELU constants are supported")
        self.activation(node, "selu")

    def op_HardSigmoid(self, node, index):
        """`HardSigmoid`: hardSigmoid with its alpha and beta."""
        a = _attributes(node)
        self.activation(node, activation_json("hardSigmoid", alpha=float(a.get("alpha", 0.2)), beta=float(a.get("beta", 0.5))))

    def op_Clip(self, node, index):
        """`Clip` (bounds from attributes before opset 11, constant inputs after): relu6, relu or clip."""
        if self.opset < 11:
            a = _attributes(node)
            low, high = a.get("min", -FLOAT_MAX), a.get("max", FLOAT_MAX)
        else:
            low_value, high_value = self.const(node, 1, required=False), self.const(node, 2, required=False)
            low = float(low_value.reshape(-1)[0]) if low_value is not None else -FLOAT_MAX
            high = float(high_value.reshape(-1)[0]) if high_value is not None else FLOAT_MAX
        if low == 0 and high == 6:
            self.activation(node, "relu6")
        elif low == 0 and high >= FLOAT_MAX:
            self.activation(node, "relu")
        else:
            self.activation(node, activation_json("clip", min=max(low, -FLOAT_MAX), max=min(high, FLOAT_MAX)))

    def op_PRelu(self, node, index):
        """`PRelu` with one slope or one per channel: PReLU."""
        tensor = self.act(node)
        slopes = self.const(node, 1)
        channels = tensor.shape[-1]
        flat = slopes.reshape(-1)
        if flat.size == 1:
            flat = np.full(channels, flat[0])
        elif flat.size != channels or np.squeeze(slopes).ndim > 1:
            self.fail(node, f"slope of shape {list(slopes.shape)} is not one per channel")
        name = self.add(node, "PReLU", [tensor.name], {"slopes": flat})
        self.set(node, Act(name, tensor.shape))

    def softmax(self, node, layer_type):
        """`Softmax` / `LogSoftmax` over the channels (axis 1; before opset 13 only when H·W is 1)."""
        tensor = self.act(node)
        default = -1 if self.opset >= 13 else 1
        axis = _attributes(node).get("axis", default)
        rank = 4 if tensor.spatial else 2
        axis = axis % rank
        if axis != 1:
            self.fail(node, f"axis {axis} is not supported; Anvil's {layer_type} works over the channels (axis 1)")
        if self.opset < 13 and tensor.spatial and tensor.shape[:2] != (1, 1):
            self.fail(node, f"before opset 13, {node.op_type} over axis 1 of an NCHW tensor spans C, H and W; "
                            "Anvil works over channels only")
        name = self.add(node, layer_type, [tensor.name])
        self.set(node, Act(name, tensor.shape))

    def op_Softmax(self, node, index):
        """`Softmax`: Softmax."""
        self.softmax(node, "Softmax")

    def op_LogSoftmax(self, node, index):
        """`LogSoftmax`: LogSoftmax."""
        self.softmax(node, "LogSoftmax")

    def elementwise_constant(self, node, op):
        """Add/Sub/Mul/Div where one side is a scalar constant: an Activation linear(a, b)."""
        first, second = self.value(node, 0), self.value(node, 1)
        if isinstance(first, np.ndarray) and isinstance(second, np.ndarray):
            self.set(node, {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}[op](first, second))
            return True
        constant = first if isinstance(first, np.ndarray) else second if isinstance(second, np.ndarray) else None
        if constant is None:
            return False
        if constant.size != 1:
            self.fail(node, f"{op} with a constant of shape {list(constant.shape)} is not supported "
                            "(only scalars, or a bias right after Gemm/MatMul)")
        k = float(constant.reshape(-1)[0])
        constant_first = constant is first
        if op == "Add":
            a, b = 1.0, k
        elif op == "Mul":
            a, b = k, 0.0
        elif op == "Sub":
            a, b = (-1.0, k) if constant_first else (1.0, -k)
        else:
            if constant_first:
                self.fail(node, "dividing a constant by a tensor is not supported")
            a, b = 1.0 / k, 0.0
        tensor = self.act(node, 1 if constant_first else 0)
        name = self.add(node, "Activation", [tensor.name], function=activation_json("linear", a=a, b=b))
        self.set(node, Act(name, tensor.shape))
        return True

    def op_Add(self, node, index):
        """`Add`: with a scalar constant, a linear activation (elementwise_constant); of tensors, as `Sum`."""
        if not self.elementwise_constant(node, "Add"):
            self.op_Sum(node, index)

    def op_Sub(self, node, index):
        """`Sub` with a scalar constant: a linear activation."""
        if not self.elementwise_constant(node, "Sub"):
            self.fail(node, "subtracting two computed tensors is not supported")

    def op_Mul(self, node, index):
        """`Mul` with a scalar constant: a linear activation."""
        if not self.elementwise_constant(node, "Mul"):
            self.fail(node, "multiplying two computed tensors is not supported")

    def op_Div(self, node, index):
        """`Div` by a scalar constant: a linear activation."""
        if not self.elementwise_constant(node, "Div"):
            self.fail(node, "dividing two computed tensors is not supported")

    def op_Sum(self, node, index):
        """`Sum` of tensors of one shape: Add (one input: that input)."""
        tensors = [self.act(node, i) for i in range(len(node.input))]
        if len(tensors) == 1:
            self.set(node, tensors[0])
            return
        if len({t.shape for t in tensors}) != 1:
            self.fail(node, f"inputs of different shapes {[t.onnx_shape for t in tensors]}; Anvil's Add does not broadcast")
        name = self.add(node, "Add", [t.name for t in tensors])
        self.set(node, Act(name, tensors[0].shape))

    def op_Concat(self, node, index):
        """`Concat`: of constants, a constant; of tensors, Concatenate along the channels."""
        values = [self.value(node, i) for i in range(len(node.input))]
        axis = _attributes(node).get("axis", 1)
        if all(isinstance(v, np.ndarray) for v in values):
            self.set(node, np.concatenate(values, axis=axis))
            return
        tensors = [self.act(node, i) for i in range(len(node.input))]
        rank = 4 if tensors[0].spatial else 2
        if axis % rank != 1:
            self.fail(node, f"axis {axis} is not supported (only 1, the channels)")
        if len({t.shape[:-1] for t in tensors}) != 1 or len({t.spatial for t in tensors}) != 1:
            self.fail(node, f"inputs differ in height/width: {[t.onnx_shape for t in tensors]}")
        name = self.add(node, "Concatenate", [t.name for t in tensors])
        self.set(node, Act(name, tensors[0].shape[:-1] + (sum(t.shape[-1] for t in tensors),)))

    def resize(self, node, mode, coordinates, scales, sizes):
        """A bilinear Resize from `scales` or `sizes` with the Anvil name of the coordinate transform."""
        tensor = self.act(node)
        self.spatial(node, tensor)
        if mode not in ("linear", "bilinear"):
            self.fail(node, f"mode '{mode}' is not supported; Anvil resizes bilinearly only")
        modes = {"half_pixel": "halfPixel", "pytorch_half_pixel": "pytorchHalfPixel", "align_corners": "alignCorners",
                 "asymmetric": "asymmetric"}
        if coordinates not in modes:
            self.fail(node, f"coordinate_transformation_mode '{coordinates}' is not supported")
        h, w, c = tensor.shape
        if sizes is not None and sizes.size:
            sizes = [int(v) for v in sizes.reshape(-1)]
            if len(sizes) != 4 or sizes[0] != 1 or sizes[1] != c:
                self.fail(node, f"sizes {sizes} must keep N and C")
            name = self.add(node, "Resize", [tensor.name], size=sizes[2:], coordinates=modes[coordinates])
            self.set(node, Act(name, (sizes[2], sizes[3], c)))
            return
        if scales is None or scales.size != 4:
            self.fail(node, "needs 4 scales or 4 sizes")
        scales = [float(v) for v in scales.reshape(-1)]
        if scales[0] != 1 or scales[1] != 1:
            self.fail(node, f"scales {scales} must keep N and C")
        oh = None if h is None else int(np.floor(h * np.float32(scales[2])))
        ow = None if w is None else int(np.floor(w * np.float32(scales[3])))
        name = self.add(node, "Resize", [tensor.name], scale=scales[2:], coordinates=modes[coordinates])
        self.set(node, Act(name, (oh, ow, c)))

    def op_Resize(self, node, index):
        """`Resize` in linear mode (no roi, no antialias, stretch): Resize."""
        a = _attributes(node)
        if a.get("antialias", 0):
            self.fail(node, "antialias=1 is not supported")
        if a.get("axes") is not None and list(a["axes"]) not in ([0, 1, 2, 3], [2, 3], [-2, -1]):
            self.fail(node, f"axes {list(a['axes'])} are not supported")
        if self.opset < 11:
            scales = self.const(node, 1)
            self.resize(node, a.get("mode", "nearest"), "asymmetric", scales, None)
            return
        scales = self.const(node, 2, required=False)
        sizes = self.const(node, 3, required=False)
        if a.get("axes") is not None and len(a["axes"]) == 2:
            scales = None if scales is None else np.concatenate([[1, 1], scales.reshape(-1)])
            sizes = None if sizes is None else np.concatenate([[1, self.act(node).shape[2]], sizes.reshape(-1)])
        if a.get("keep_aspect_ratio_policy", "stretch") != "stretch":
            self.fail(node, "keep_aspect_ratio_policy other than 'stretch' is not supported")
        self.resize(node, a.get("mode", "nearest"), a.get("coordinate_transformation_mode", "half_pixel"), scales, sizes)

    def op_Upsample(self, node, index):
        """`Upsample` (opset < 10) in linear mode: Resize with asymmetric coordinates."""
        a = _attributes(node)
        scales = np.array(a["scales"]) if "scales" in a else self.const(node, 1)
        self.resize(node, a.get("mode", "nearest"), "asymmetric", scales, None)


def convert_file(path, output_directory, name=None, input_shape=None):
    """Loads an .onnx file and converts it into `output_directory`; returns the ModelWriter."""
    import onnx
    model = cli.load("ONNX", path, lambda: onnx.load(path))
    writer = OnnxConverter(model, name=name, input_shape=input_shape).convert()
    writer.write(output_directory)
    return writer


def main(argv=None):
    """The `convert_onnx` command line; returns the exit status."""
    return cli.file_main("onnx", __doc__.split("\n")[0], [("model", "an .onnx file")],
                         "an .onnx file and an output directory",
                         ("CHW", "C,H,W for inputs with open dimensions"), convert_file, argv)


if __name__ == "__main__":
    sys.exit(main())
