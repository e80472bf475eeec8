"""Converts an ONNX model to an Anvil model file.

    python3 Scripts/convert_onnx.py model.onnx out/ [--name NAME] [--input-shape C,H,W]

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
from .onnx_ops.layers import LayersOps
from .onnx_ops.layout import LayoutOps
from .onnx_ops.elementwise import ElementwiseOps
from .onnx_ops.tensors import FLOAT_MAX, Act, Flat, Placeholder, standard_perm  # noqa: F401 (re-exported)
from .onnx_ops.tensors import attributes as _attributes
from .writer import ConversionError, ModelWriter, activation_json

SELU_ALPHA = 1.67326319217681884765625
SELU_GAMMA = 1.05070102214813232421875
FLOAT_TYPES = (1, 10, 11, 16)  # TensorProto FLOAT, FLOAT16, DOUBLE, BFLOAT16 (read as float32)


BLOCKED = object()  # a value no later node can be checked against (no inferred shape)

# ONNX operator -> the input positions that must be constants (weights, statistics, shapes,
# bounds): a graph input read only there is a weight fed as a graph input.
CONSTANT_INPUTS = {
    "Conv": (1, 2), "ConvTranspose": (1, 2), "Gemm": (1, 2), "MatMul": (1,),
    "BatchNormalization": (1, 2, 3, 4), "InstanceNormalization": (1, 2), "LayerNormalization": (1, 2),
    "GroupNormalization": (1, 2), "PRelu": (1,), "Clip": (1, 2), "Resize": (1, 2, 3), "Upsample": (1,),
    "Reshape": (1,), "Pad": (1, 2, 3), "Slice": (1, 2, 3, 4), "Split": (1,), "Squeeze": (1,),
    "Unsqueeze": (1,), "Expand": (1,), "Tile": (1,),
}


def blocker_error(blockers, unchecked=0):
    """One ConversionError listing every blocker (its `blockers` attribute holds them): the
    blocker itself when there is one, else a count and one indented line per blocker."""
    later = (f"{unchecked} later node{'s' if unchecked != 1 else ''} read only what "
             f"{'this' if len(blockers) == 1 else 'these'} could not produce and {'was' if unchecked == 1 else 'were'} not checked")
    if len(blockers) == 1:
        error = ConversionError(blockers[0] + (f" ({later})" if unchecked else ""))
    else:
        lines = [f"{len(blockers)} blocker{'s' if len(blockers) != 1 else ''} (every one this run found):"]
        lines += [f"  {b}" for b in blockers]
        if unchecked:
            lines.append(f"  ({later})")
        error = ConversionError("\n".join(lines))
    error.blockers = list(blockers)
    return error


class OnnxConverter(LayersOps, LayoutOps, ElementwiseOps):
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
        self.pending_pads = {}  # node index -> pads of a Pad folded into it (onnx_ops/layers.py)
        self.blockers = []   # every error met, one line each (raised together at the end)
        self.unchecked = 0   # nodes not checked because they read only blocked values
        self._inferred = None
        self.output_tensors = {}  # ONNX graph output name -> the Act written as that Anvil output

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

    def act(self, node, index=0, allow_flat=False, any_layout=False):
        """Input `index` as a computed tensor; a pending flatten is written unless `allow_flat`.
        Unless `any_layout`, a tensor held in another layout than the standard one (after an
        ONNX Transpose) is first moved there by an Anvil Transpose (see `to_standard`)."""
        value = self.value(node, index)
        if isinstance(value, Flat):
            return value if allow_flat else self.write_flatten(value, node)
        if not isinstance(value, Act):
            self.fail(node, f"input {index} ('{node.input[index]}') must be a computed tensor, not a constant")
        return value if any_layout else self.to_standard(node, value)

    def exact(self, node, tensor):
        """`tensor` with the Anvil tensor of ONNX's rank (a Reshape when a global pooling left a
        vector where ONNX has [N, C, 1, 1]): what a layer with axis options needs."""
        if tensor.anvil_rank == tensor.rank:
            return tensor
        name = self.add(node, "Reshape", [tensor.name], suffix="_rank", shape=list(tensor.shape))
        return Act(name, tensor.shape, tensor.perm)

    def transpose_to(self, node, tensor, target):
        """`tensor` moved so that ONNX axis i sits at Anvil axis target[i] (an Anvil Transpose, or
        nothing when only axes of extent 1 move); returns the new Act."""
        inverse = [0] * len(target)
        for onnx_axis, anvil_axis in enumerate(target):
            inverse[anvil_axis] = onnx_axis
        permutation = [tensor.perm[inverse[j]] for j in range(len(target))]
        full = (1,) + tensor.shape
        shape = tuple(full[a] for a in permutation[1:])
        if permutation[0] != 0:
            self.fail(node, f"its input would need the batch axis moved (layout {tensor.perm})")
        moved = [a for a in permutation if full[a] != 1]
        # (A Reshape needs every extent: with an open one, the relabelling is an Anvil Transpose.)
        if moved == sorted(moved) and (shape == tensor.shape or None not in shape):
            if shape == tensor.shape:
                return Act(tensor.name, shape, target, tensor.anvil_rank)
            name = self.add(node, "Reshape", [tensor.name], suffix="_layout", shape=list(shape))
            return Act(name, shape, target)
        tensor = self.exact(node, tensor)
        name = self.add(node, "Transpose", [tensor.name], suffix="_layout", permutation=permutation)
        return Act(name, shape, target)

    def to_standard(self, node, tensor):
        """`tensor` in the standard layout (channels last), moved there if it is not."""
        return tensor if tensor.standard else self.transpose_to(node, tensor, standard_perm(tensor.rank))

    def to_onnx_order(self, node, tensor):
        """`tensor` held in ONNX's own axis order (perm identity), moved there if needed."""
        identity = tuple(range(tensor.rank))
        return tensor if tensor.perm == identity else self.transpose_to(node, tensor, identity)

    def write_flatten(self, flat, node):
        """Writes the Flatten a pending flatten stands for, once; returns its tensor: order chw
        from a standard image, otherwise a plain flatten of the tensor moved to ONNX's order."""
        if flat.written is None:
            source = flat.source
            if source.spatial:
                name = self.add(node, "Flatten", [source.name], suffix="_flatten", order="chw")
            else:
                source = self.to_onnx_order(node, source)
                name = self.add(node, "Flatten", [source.name], suffix="_flatten")
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

    def windowed(self, node, tensor):
        """An error unless `tensor` is a 4-D NCHW image or a 3-D NCL sequence (a 1-D window); for
        a sequence, returns True (its window runs as a height-1 2-D one)."""
        if isinstance(tensor, Act) and tensor.standard and tensor.rank in (3, 4):
            return tensor.rank == 3
        self.fail(node, f"needs a 4-D NCHW or 3-D NCL input, got shape {tensor.onnx_shape}")

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
        """Converts every node in graph order; returns the ModelWriter, outputs set and pruned.

        A node that cannot be converted does not stop the conversion: its error is kept, its
        outputs become placeholders of the shape ONNX's shape inference gives them (or are marked
        blocked when it gives none), and the nodes after it are still checked. At the end one
        ConversionError lists every blocker (its `blockers` attribute holds them, one line each);
        nodes that read only blocked values cannot be checked and are counted, not reported."""
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
                continue  # an initializer also listed as an input (IR < 4 style): its stored value is used
            try:
                weight = self.weight_use(graph_input.name)
                if weight is not None:
                    raise ConversionError(weight)
                self.add_input(graph_input)
            except ConversionError as error:
                self.blockers.append(str(error))
                self.values[graph_input.name] = BLOCKED
        for index, node in enumerate(self.graph.node):
            if index in self.skip:
                continue
            if any(self.values.get(name) is BLOCKED for name in node.input if name):
                self.unchecked += 1
                self.block(node)
                continue
            try:
                if node.domain not in ("", "ai.onnx"):
                    self.fail(node, f"operators of domain '{node.domain}' are not supported")
                handler = getattr(self, f"op_{node.op_type}", None)
                if handler is None:
                    self.fail(node, "this operator is not supported by the Anvil converter (see docs/converters.md)")
                handler(node, index)
            except ConversionError as error:
                self.blockers.append(str(error))
                self.block(node)
            except (ValueError, TypeError, KeyError, IndexError, ZeroDivisionError) as error:
                if any(isinstance(self.values.get(name), (Act, Flat)) and None in self.values[name].shape
                       for name in node.input):
                    # Shape arithmetic on an open height/width (None): this operator needs the size.
                    self.blockers.append(f"{self.describe(node)}: cannot take an open input size (its output "
                                         "depends on the height/width); pass --input-shape C,H,W")
                else:
                    self.blockers.append(f"{self.describe(node)}: cannot be converted ({type(error).__name__}: {error})")
                self.block(node)
        outputs = []
        for output in self.graph.output:
            value = self.values.get(output.name)
            if value is BLOCKED or isinstance(value, Placeholder):
                continue
            if isinstance(value, Flat):
                value = value.written or self.write_flatten(value, self.graph.node[-1])
            if isinstance(value, Act) and not value.standard:
                # Anvil's outputs are channels-last: a tensor left in another layout is moved back.
                value = self.to_standard(self.graph.node[-1], value)
            if not isinstance(value, Act):
                self.blockers.append(f"graph output '{output.name}' is a constant or was never computed")
                continue
            self.output_tensors[output.name] = value
            outputs.append(value.name)
        if self.blockers:
            raise blocker_error(self.blockers, self.unchecked)
        self.writer.set_outputs(outputs)
        self.writer.prune()
        return self.writer

    def block(self, node):
        """After `node` failed: each output becomes a Placeholder of its inferred ONNX shape, so
        the nodes reading it are still checked, or BLOCKED when no shape is known."""
        for output in node.output:
            if not output:
                continue
            dims = self.inferred_shape(output)
            self.values[output] = BLOCKED if dims is None else self.placeholder(output, dims)

    def inferred_shape(self, name):
        """The ONNX shape of tensor `name` from onnx's shape inference (run once, lazily), or None
        when unknown or not fully static."""
        if self._inferred is None:
            self._inferred = {}
            import onnx
            model = self.model
            for attempt in range(2):
                try:
                    inferred = onnx.shape_inference.infer_shapes(model)
                    break
                except Exception:  # noqa: BLE001 - shape inference only helps the report
                    # onnx gives up on the whole graph for one node of an unknown domain: retry without those
                    model = onnx.ModelProto()
                    model.CopyFrom(self.model)
                    kept = [n for n in model.graph.node if n.domain in ("", "ai.onnx")]
                    del model.graph.node[:]
                    model.graph.node.extend(kept)
            else:
                return None
            for info in list(inferred.graph.value_info) + list(inferred.graph.output):
                tensor_type = info.type.tensor_type
                dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor_type.shape.dim]
                if tensor_type.HasField("shape") and None not in dims:
                    self._inferred[info.name] = dims
        return self._inferred.get(name)

    def placeholder(self, name, dims):
        """A stand-in for a tensor a failed node would have produced, in the standard layout
        ([N, C, H, W] as (h, w, c), [N, C, L] as (l, c), [N, F] as (f,), [N] as ()): a
        Placeholder, or BLOCKED for ranks above 4."""
        if not 1 <= len(dims) <= 4:
            return BLOCKED
        shape = tuple(dims[2:]) + tuple(dims[1:2])
        if 0 in shape:
            return BLOCKED
        label = self.writer.unique_name(name)
        self.writer._names.add(label)  # known to the writer, so later layers may read it (never written)
        return Placeholder(label, shape)

    def weight_use(self, name):
        """The error for a graph input `name` (not an initializer) that nodes read only where ONNX
        takes a constant (Conv's W, Gemm's B, BatchNormalization's statistics, ...), else None."""
        uses = []
        for index in sorted(set(self.consumers.get(name, []))):
            if index < 0:
                return None  # also a graph output: data
            node = self.graph.node[index]
            slots = [position for position, value in enumerate(node.input) if value == name]
            if not all(position in CONSTANT_INPUTS.get(node.op_type, ()) for position in slots):
                return None
            uses.append(f"input {slots[0]} of {self.describe(node)}")
        if not uses:
            return None
        return (f"input '{name}' is a weight fed as a graph input (read as {', '.join(uses)}, which must be "
                "a constant): export with the parameters stored in the file (torch.onnx.export(..., "
                "export_params=True)), or make it an initializer: append numpy_helper.from_array(value, "
                f"'{name}') to graph.initializer and remove '{name}' from graph.input")

    def add_input(self, graph_input):
        """Adds a graph input: [N, C, H, W], [N, C, L] or [N, F]. An open height/width or length
        (dim_param or no dim_value) stays open (null in the model file) unless --input-shape gives
        the sizes; the channels must be known."""
        if not graph_input.type.HasField("tensor_type"):
            raise ConversionError(f"input '{graph_input.name}' is not a tensor (a sequence, map or optional)")
        tensor_type = graph_input.type.tensor_type
        if tensor_type.elem_type not in FLOAT_TYPES:
            from onnx import TensorProto
            kind = TensorProto.DataType.Name(tensor_type.elem_type).lower()
            raise ConversionError(f"input '{graph_input.name}' holds {kind} values; Anvil's inputs are floating point")
        dims = []
        for d in tensor_type.shape.dim:
            dims.append(d.dim_value if d.HasField("dim_value") else None)
        if 0 in dims[1:]:
            raise ConversionError(f"input '{graph_input.name}' has shape {dims}, an empty tensor (an axis of extent 0); "
                                  "Anvil's tensors hold at least one value")
        name = self.writer.unique_name(graph_input.name)
        if len(dims) == 4:
            c, h, w = dims[1:]
            if self.input_shape is not None:
                c, h, w = self.input_shape
            if c is None:
                raise ConversionError(f"input '{graph_input.name}' has open channels {dims}; pass --input-shape C,H,W")
            self.writer.add_input(name, (h, w, c))
            self.values[graph_input.name] = Act(name, (h, w, c))
        elif len(dims) == 3 and dims[1] is not None:
            c, length = dims[1:]
            self.writer.add_input(name, (length, c))
            self.values[graph_input.name] = Act(name, (length, c))
        elif len(dims) == 2 and dims[1] is not None:
            self.writer.add_input(name, (dims[1],))
            self.values[graph_input.name] = Act(name, (dims[1],))
        else:
            raise ConversionError(f"input '{graph_input.name}' has shape {dims}; Anvil takes NCHW images, NCL sequences "
                                  f"or [N, F] vectors (if '{graph_input.name}' is a weight, store it as an initializer)")

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
            shape = np.array(value.onnx_shape if hasattr(value, "onnx_shape") else [1, value.shape[0]], np.int64)
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

    def cast(self, node, to):
        """A cast to ONNX data type `to`: a constant converted; a computed tensor (float32 in
        Anvil) passes unchanged when `to` is FLOAT, else an error naming the type."""
        from onnx import TensorProto, helper
        value = self.value(node, 0)
        if isinstance(value, np.ndarray):
            self.set(node, value.astype(helper.tensor_dtype_to_np_dtype(to)))
        elif to == TensorProto.FLOAT:
            self.set(node, value)
        else:
            self.fail(node, f"casts a computed tensor to {TensorProto.DataType.Name(to).lower()}; Anvil computes "
                            "float32 only (a cast to float is the identity)")

    def op_Cast(self, node, index):
        """`Cast` of a constant to the target type; a computed tensor only to float32 (unchanged)."""
        self.cast(node, _attributes(node)["to"])

    def op_CastLike(self, node, index):
        """`CastLike`: `Cast` to the type of its second input (a constant's dtype; a computed
        tensor is float32)."""
        from onnx import TensorProto, helper
        target = self.value(node, 1)
        if target is None:
            self.fail(node, "input 1 (the target type) is missing")
        if isinstance(target, np.ndarray):
            to = helper.np_dtype_to_tensor_dtype(target.dtype)
        else:
            to = TensorProto.FLOAT
        self.cast(node, to)

    def op_Identity(self, node, index):
        """`Identity`: its input."""
        self.set(node, self.value(node, 0))

    def op_Dropout(self, node, index):
        """`Dropout` at inference: its input."""
        self.set(node, self.value(node, 0))

    # -- layers -----------------------------------------------------------------------------

    def window(self, node, tensor, kernel, pooling, a=None):
        """Padding, stride, dilation, output size and ceil mode of a Conv or pooling window (auto_pad resolved)."""
        a = _attributes(node) if a is None else a
        stride = tuple(a.get("strides", [1, 1]))
        dilation = tuple(a.get("dilations", [1, 1]))
        if len(kernel) != 2 or len(stride) != 2 or len(dilation) != 2:
            self.fail(node, "only 2-D windows are supported")
        auto_pad = a.get("auto_pad", "NOTSET")
        h, w = (1, tensor.shape[0]) if len(tensor.shape) == 2 else tensor.shape[:2]
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
        extra = self.window_extra_pads(node)
        if extra is not None:
            pads = [p + e for p, e in zip(pads, extra)]
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

    @staticmethod
    def window_1d(a):
        """A 1-D window's attributes as the height-1 2-D window Anvil runs."""
        a = dict(a)
        for key in ("strides", "dilations", "kernel_shape"):
            if key in a:
                a[key] = [1] + list(a[key])
        if "pads" in a:
            a["pads"] = [0, a["pads"][0], 0, a["pads"][1]]
        return a

    def op_Conv(self, node, index):
        """`Conv` (2-D, or 1-D on a sequence): Convolution, or DepthwiseConvolution when group equals the input channels."""
        tensor = self.act(node)
        one_d = self.windowed(node, tensor)
        weights = self.const(node, 1)
        bias = self.const(node, 2, required=False)
        a = _attributes(node)
        if one_d and weights.ndim == 3:
            weights = weights.reshape(weights.shape[0], weights.shape[1], 1, weights.shape[2])
            a = self.window_1d(a)
        if weights.ndim != 4:
            self.fail(node, f"weights of rank {weights.ndim} on an input of rank {tensor.rank}; only 1-D and 2-D convolutions are supported")
        outputs, per_group, kh, kw = weights.shape
        kernel = tuple(a.get("kernel_shape", [kh, kw]))
        groups = int(a.get("group", 1))
        channels = tensor.shape[-1]
        if per_group * groups != channels:
            self.fail(node, f"weights {list(weights.shape)} with group {groups} do not match {channels} input channels")
        padding, stride, dilation, (oh, ow), _ = self.window(node, tensor, kernel, pooling=False, a=a)
        parameters = {"W": weights}
        if bias is not None:
            parameters["b"] = bias
        common = dict(kernel=kernel, stride=stride, padding=padding, dilation=dilation, bias=bias is not None)
        if groups > 1 and groups == channels and per_group == 1:
            name = self.add(node, "DepthwiseConvolution", [tensor.name], parameters, multiplier=outputs // channels, **common)
        else:
            name = self.add(node, "Convolution", [tensor.name], parameters, channels=outputs, groups=groups, **common)
        self.set(node, Act(name, (ow, outputs) if one_d else (oh, ow, outputs)))

    def pool(self, node, layer_type):
        """`MaxPool` / `AveragePool` of `layer_type`, with ceil mode and count_include_pad."""
        tensor = self.act(node)
        one_d = self.windowed(node, tensor)
        a = _attributes(node)
        if one_d:
            a = self.window_1d(a)
        kernel = tuple(a["kernel_shape"])
        folded = self.has_folded_pads(node)  # a zero Pad folded in counts as cells (onnx_ops/layers.py)
        padding, stride, dilation, (oh, ow), ceil = self.window(node, tensor, kernel, pooling=True, a=a)
        options = dict(kernel=kernel, stride=stride, padding=padding, dilation=dilation, ceilMode=ceil)
        if layer_type == "AveragePooling":
            options["countIncludesPadding"] = bool(a.get("count_include_pad", 0)) or folded
        name = self.add(node, layer_type, [tensor.name], **options)
        self.set(node, Act(name, (ow, tensor.shape[-1]) if one_d else (oh, ow, tensor.shape[-1])))

    def op_MaxPool(self, node, index):
        """`MaxPool` (row-major storage only): MaxPooling."""
        if _attributes(node).get("storage_order", 0):
            self.fail(node, "storage_order 1 is not supported")
        self.pool(node, "MaxPooling")

    def op_AveragePool(self, node, index):
        """`AveragePool`: AveragePooling."""
        self.pool(node, "AveragePooling")

    def global_pool(self, node, layer_type):
        """A global pooling of `layer_type`: ONNX's [N, C, 1, 1] (or [N, C, 1]) is Anvil's vector of C."""
        tensor = self.act(node)
        one_d = self.windowed(node, tensor)
        name = self.add(node, layer_type, [tensor.name])
        c = tensor.shape[-1]
        self.set(node, Act(name, (1, c) if one_d else (1, 1, c), anvil_rank=2))

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

    def flatten_source(self, node, value, weights):
        """A Gemm/MatMul input and its `weights` [out][in]: (Anvil tensor name, element count, weights
        reordered for that tensor). A pending flatten of an image is read directly: its ONNX-ordered
        weights are reordered to the C, H, W order of Anvil's axes that the "pytorch" layout reads
        (nothing to do for a standard NCHW image); of another tensor it is written first."""
        if isinstance(value, Flat) and value.source.open:
            self.fail(node, "its flattened input's size depends on the open input height/width, so the weight "
                            "count cannot match every size; pass --input-shape C,H,W")
        if isinstance(value, Flat) and value.source.rank == 4 and value.source.anvil_rank == 4:
            source = value.source
            count = int(np.prod(source.shape))
            if weights.shape[1] == count and not source.standard:
                onnx_dims = source.onnx_shape[1:]
                anvil_axes = [source.perm.index(j) for j in range(1, 4)]  # ONNX axis held by Anvil axis j
                w = weights.reshape([weights.shape[0]] + onnx_dims)
                w = np.transpose(w, [0] + anvil_axes)        # [out][h][w][c] of Anvil's axes
                weights = np.ascontiguousarray(np.transpose(w, (0, 3, 1, 2))).reshape(weights.shape[0], -1)
            return source.name, count, weights
        if isinstance(value, Flat):
            value = self.write_flatten(value, node)
        if isinstance(value, Act) and value.open:
            self.fail(node, f"its input's size {value.onnx_shape} depends on the open input size, so the weight "
                            "count cannot match every size; pass --input-shape C,H,W")
        if isinstance(value, Act) and (value.rank == 2 or value.anvil_rank == 2
                                       or (value.rank == 4 and value.shape[:2] == (1, 1) and value.standard)):
            return value.name, value.shape[-1] if value.rank != 1 else 1, weights
        self.fail(node, "its input must be 2-D ([N, features]); flatten the image first")

    def following_bias(self, node, index, outputs, rank):
        """A bias added right after `node` (of rank `rank`, `outputs` values on its last axis): when
        its only reader is an Add of a constant that varies along that last axis only (a scalar or
        [..., 1, outputs]), (that constant as `outputs` float32 values, the Add's output) with the
        Add skipped; otherwise (None, the node's output)."""
        output_name = node.output[0]
        users = self.consumers.get(output_name, [])
        if len(users) != 1 or users[0] <= index or self.graph.node[users[0]].op_type != "Add":
            return None, output_name
        follower = self.graph.node[users[0]]
        other = follower.input[1] if follower.input[0] == output_name else follower.input[0]
        constant = self.values.get(other)
        if not isinstance(constant, np.ndarray) or constant.ndim > rank or constant.size not in (1, outputs):
            return None, output_name
        if constant.ndim and constant.shape[-1] != constant.size:  # it varies along another axis too
            return None, output_name
        self.skip.add(users[0])
        return np.broadcast_to(constant.reshape(-1), (outputs,)).astype(np.float32), follower.output[0]

    def dense(self, node, index, weights, bias):
        """Writes a Dense layer; a sole-consumer Add of a constant vector becomes its bias."""
        source, inputs, weights = self.flatten_source(node, self.value(node, 0), weights)
        outputs = weights.shape[0]
        if weights.shape[1] != inputs:
            self.fail(node, f"weights {list(weights.shape)} do not match {inputs} input features")
        output_name = node.output[0]
        if bias is None:
            bias, output_name = self.following_bias(node, index, outputs, rank=2)
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
        tensor = self.value(node, 0)
        if isinstance(tensor, Act) and tensor.rank >= 3:
            self.channel_matmul(node, index, tensor, weights)
            return
        self.dense(node, index, weights.T, None)

    def channel_matmul(self, node, index, tensor, weights):
        """`MatMul` of a tensor of rank 3 or 4 by a constant [K, M] on its last ONNX axis: where
        that axis is Anvil's channels (a channels-last region such as ConvNeXt's, or [N, L, C]
        after a Transpose) a PointwiseConvolution (a following Add of a constant vector becomes
        its bias), keeping the layout; otherwise the tensor is moved first."""
        if not tensor.channel_axis(-1):
            target = list(range(tensor.rank))
            tensor = self.transpose_to(node, tensor, tuple(target))
        tensor = self.exact(node, tensor)
        if weights.shape[0] != tensor.shape[-1]:
            self.fail(node, f"weights {list(weights.shape)} do not match {tensor.shape[-1]} features on the last axis")
        outputs = weights.shape[1]
        bias, output_name = self.following_bias(node, index, outputs, rank=tensor.rank)
        parameters = {"W": np.ascontiguousarray(weights.T)}
        if bias is not None:
            parameters["b"] = bias
        name = self.add(node, "PointwiseConvolution", [tensor.name], parameters, channels=outputs, bias=bias is not None)
        self.values[output_name] = Act(name, tensor.shape[:-1] + (outputs,), tensor.perm)

    def activation(self, node, function):
        """An Activation applying `function` to the node's input, in whatever layout it is held."""
        tensor = self.act(node, any_layout=True)
        name = self.add(node, "Activation", [tensor.name], function=function)
        self.set(node, tensor.like(name))

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
        """`Softmax` / `LogSoftmax` over the axis Anvil holds as channels (ONNX axis 1 of a standard
        tensor, the last axis in a channels-last region; before opset 13 only when the axes after
        it have extent 1)."""
        tensor = self.act(node, any_layout=True)
        default = -1 if self.opset >= 13 else 1
        axis = _attributes(node).get("axis", default) % tensor.rank
        if not tensor.channel_axis(axis):
            self.fail(node, f"axis {axis} is not supported; Anvil's {layer_type} works over the channels "
                            f"(axis 1 of an NCHW tensor; this tensor's layout is {list(tensor.perm)})")
        if self.opset < 13 and any(d != 1 for d in tensor.onnx_shape[axis + 1:]):
            self.fail(node, f"before opset 13, {node.op_type} over axis {axis} of a {tensor.rank}-D tensor spans the "
                            "axes after it too; Anvil works over channels only")
        name = self.add(node, layer_type, [tensor.name])
        self.set(node, tensor.like(name))

    def op_Softmax(self, node, index):
        """`Softmax`: Softmax."""
        self.softmax(node, "Softmax")

    def op_LogSoftmax(self, node, index):
        """`LogSoftmax`: LogSoftmax."""
        self.softmax(node, "LogSoftmax")



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
