#!/usr/bin/env python3
"""Import ONNX's operator conformance tests (the "node" tests) as Anvil fixtures.

The onnx 1.22.0 wheel ships onnx/backend/test/data/node/<test>/ with a one-node
model.onnx and test_data_set_0/{input,output}_<i>.pb. For every test whose single
node is an operator Anvil implements, with float32 data and shapes that map onto
Anvil's N x H x W x C activations, this script writes

    Tests/AnvilTests/Fixtures/onnx/<test name without "test_">/
        model.json      an Anvil model file (docs/model-format.md): inputs, the layer, outputs
        weights.bin     the layer's parameters (only if it has any), "pytorch" layout
        input_<i>.f32   raw little-endian float32 data inputs, NHWC
        output_0.f32    the expected output (ONNX's stored output_0.pb), NHWC
        case.json       {"onnx", "op", "inputs": [{file, shape, name}], "outputs": [...]}

and Tests/AnvilTests/Fixtures/onnx/INDEX.md: what was imported per op and why every
other test of those operators' families was left out.

Constant operands (Conv W/B, Gemm/MatMul B/C, BatchNormalization statistics, PRelu
slope, Clip min/max, Resize scales/sizes) are graph *inputs* in the node tests; they
are folded into the model here (parameters or layer options). Tensors of other ranks
are permuted/reshaped onto N x H x W x C (the operation's axis becomes the channel
axis); inputs and expected outputs always go through the same mapping.

Run:
    pip install onnx==1.22.0 && python3 Scripts/import_onnx_tests.py
    python3 Scripts/import_onnx_tests.py --verify     # re-check the committed fixtures

--verify recomputes every expected output with onnx.reference.ReferenceEvaluator from
the original model and inputs, maps it to NHWC and compares with output_0.f32; checks
that the committed inputs are the mapped ONNX inputs; validates model.json (required
fields, names, blob tensors inside weights.bin); and runs an independent NHWC numpy
interpreter of model.json on the fixture files, which must reproduce output_0.f32.
"""
import argparse
import json
import math
import os
import re
import shutil
import sys

import numpy as np

try:
    import onnx
    from onnx import helper, numpy_helper
except ImportError:  # pragma: no cover
    sys.exit("onnx is missing: pip install onnx==1.22.0")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "Tests", "AnvilTests", "Fixtures", "onnx")
FLT_MAX = float(np.finfo(np.float32).max)  # 3.4028234663852886e+38, exact in float32

# In-scope ONNX operator -> the prefixes of the node-test names of its family.
FAMILIES = {
    "Conv": ["conv", "basic_conv"],
    "MaxPool": ["maxpool"],
    "AveragePool": ["averagepool"],
    "GlobalAveragePool": ["globalaveragepool"],
    "GlobalMaxPool": ["globalmaxpool"],
    "Gemm": ["gemm"],
    "MatMul": ["matmul"],
    "Flatten": ["flatten"],
    "Relu": ["relu"],
    "Clip": ["clip"],
    "LeakyRelu": ["leakyrelu"],
    "Sigmoid": ["sigmoid"],
    "Tanh": ["tanh"],
    "Elu": ["elu"],
    "Selu": ["selu"],
    "HardSigmoid": ["hardsigmoid"],
    "HardSwish": ["hardswish"],
    "PRelu": ["prelu"],
    "Softmax": ["softmax"],
    "LogSoftmax": ["logsoftmax"],
    "BatchNormalization": ["batchnorm"],
    "Add": ["add"],
    "Sum": ["sum"],
    "Concat": ["concat"],
    "Resize": ["resize"],
    "Identity": ["identity"],
}
IN_SCOPE = set(FAMILIES)


class Skip(Exception):
    """A test that cannot be expressed as an Anvil model; the message says why."""


# ----------------------------------------------------------------------------- helpers

def node_test_root():
    root = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    if not os.path.isdir(root):
        sys.exit(f"{root} not found: this onnx ({onnx.__version__}) does not ship the node tests; "
                 "pip install onnx==1.22.0")
    return root


def family_of(test_name):
    """The in-scope op whose family a test name belongs to (longest matching prefix), or None."""
    best = None
    for op, prefixes in FAMILIES.items():
        for p in prefixes:
            if re.match(rf"^test_{p}(_|$)", test_name) and (best is None or len(p) > best[1]):
                best = (op, len(p))
    return best[0] if best else None


def f32(v):
    """A Python float that prints as the shortest decimal of the float32 value v."""
    return float(np.format_float_scientific(np.float32(v), unique=True))


def attrs_of(node):
    out = {}
    for a in node.attribute:
        v = helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


def to4d(leading, channels):
    """N, H, W for a tensor whose non-channel axes are `leading` (row-major order kept)."""
    leading = [int(d) for d in leading]
    if len(leading) == 0:
        return [1, 1, 1, channels]
    if len(leading) == 1:
        return [leading[0], 1, 1, channels]
    if len(leading) == 2:
        return [1, leading[0], leading[1], channels]
    return [int(np.prod(leading[:-2])), leading[-2], leading[-1], channels]


def channel_last(a, axis):
    """Moves `axis` to the end and reshapes the rest onto N, H, W (see to4d)."""
    a = np.asarray(a)
    if a.ndim == 0:
        a = a.reshape(1)
    axis = axis % a.ndim
    moved = np.moveaxis(a, axis, -1)
    return np.ascontiguousarray(moved.reshape(to4d(moved.shape[:-1], moved.shape[-1])))


def nchw_to_nhwc(a):
    if a.ndim != 4:
        raise Skip(f"needs a 4-D NCHW tensor, got rank {a.ndim} ({_dims(a.shape)})")
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


def _dims(shape):
    return "x".join(str(int(d)) for d in shape) if len(shape) else "scalar"


def window_pads(in_hw, kernel, strides, dilations, auto_pad, pads):
    """Explicit [top, left, bottom, right] for ONNX auto_pad/pads on a fixed input size."""
    if auto_pad in ("", "NOTSET"):
        p = list(pads) if pads else [0, 0, 0, 0]
        return [int(p[0]), int(p[1]), int(p[2]), int(p[3])]
    if auto_pad == "VALID":
        return [0, 0, 0, 0]
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for size, k, s, d in zip(in_hw, kernel, strides, dilations):
            out = -(-size // s)
            total = max((out - 1) * s + (k - 1) * d + 1 - size, 0)
            small, big = total // 2, total - total // 2
            if auto_pad == "SAME_UPPER":
                begin.append(small); end.append(big)
            else:
                begin.append(big); end.append(small)
        return [begin[0], begin[1], end[0], end[1]]
    raise Skip(f"auto_pad {auto_pad}")


def padding_value(p):
    return "valid" if not any(p) else p


# ----------------------------------------------------------------------------- one test

class Test:
    """One ONNX node test: its model, node, attributes, and named input/output arrays."""

    def __init__(self, root, name):
        self.name = name
        self.dir = os.path.join(root, name)
        self.model = onnx.load(os.path.join(self.dir, "model.onnx"))
        g = self.model.graph
        self.nodes = list(g.node)
        self.opset = {o.domain: o.version for o in self.model.opset_import}
        init = {t.name for t in g.initializer}
        self.graph_inputs = [i for i in g.input if i.name not in init]
        self.graph_outputs = list(g.output)
        self.initializers = {t.name: numpy_helper.to_array(t) for t in g.initializer}

    def value_kinds(self):
        """(name, elem_type or None for non-tensors) for graph inputs and outputs."""
        out = []
        for v in list(self.graph_inputs) + list(self.graph_outputs):
            t = v.type
            out.append((v.name, t.tensor_type.elem_type if t.HasField("tensor_type") else None))
        return out

    def load_data(self):
        ds = os.path.join(self.dir, "test_data_set_0")
        ins, outs = {}, {}
        for i, v in enumerate(self.graph_inputs):
            ins[v.name] = _read_pb(os.path.join(ds, f"input_{i}.pb"))
        for i, v in enumerate(self.graph_outputs):
            outs[v.name] = _read_pb(os.path.join(ds, f"output_{i}.pb"))
        return ins, outs


def _read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


class Fixture:
    """What one test becomes: the Anvil model plus NHWC data."""

    def __init__(self, test, op):
        self.test = test.name
        self.op = op
        self.inputs = []      # (anvil input name, NHWC float32 array)
        self.layers = []
        self.outputs = []     # layer names
        self.weights = []     # (tensor name, float32 array in the declared layout)
        self.expected = []    # NHWC float32 arrays, one per output
        self.notes = []

    def add_input(self, name, arr):
        name = re.sub(r"[^A-Za-z0-9_]", "_", name) or "input"
        taken = {n for n, _ in self.inputs}
        while name in taken:
            name += "_"
        self.inputs.append((name, np.ascontiguousarray(arr, dtype=np.float32)))
        return name

    def model_json(self):
        m = {
            "format": "anvil.model",
            "version": 1,
            "name": self.test,
            "inputs": [{"name": n, "shape": [int(d) for d in a.shape[1:]]} for n, a in self.inputs],
            "layers": self.layers,
            "outputs": self.outputs,
        }
        if self.weights:
            tensors, offset = {}, 0
            for n, a in self.weights:
                tensors[n] = {"offset": offset, "count": int(a.size)}
                offset += 4 * int(a.size)
            m["parameters"] = {"layout": "pytorch",
                               "source": {"type": "blob", "path": "weights.bin", "tensors": tensors}}
        return m

    def blob(self):
        return b"".join(np.ascontiguousarray(a, dtype="<f4").tobytes() for _, a in self.weights)

    def case_json(self):
        return {
            "onnx": self.test,
            "op": self.op,
            "inputs": [{"file": f"input_{i}.f32", "shape": [int(d) for d in a.shape], "name": n}
                       for i, (n, a) in enumerate(self.inputs)],
            "outputs": [{"file": f"output_{i}.f32", "shape": [int(d) for d in a.shape], "name": n}
                        for i, (n, a) in enumerate(zip(self.outputs, self.expected))],
        }


# ----------------------------------------------------------------------------- converters
# Each converter gets the test, its node, attributes, the arrays of the node's inputs
# (None for absent optional ones) and outputs; it fills and returns a Fixture. The
# data operand(s) stay graph inputs; every other operand is folded into the model.

ACTIVATIONS = {"Relu", "Clip", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Selu", "HardSigmoid", "HardSwish"}
SELU_ALPHA = 1.67326319217681884765625   # ONNX's defaults (float32)
SELU_GAMMA = 1.05070102214813232421875


def convert(test, node, ins, outs):
    op = node.op_type
    a = attrs_of(node)
    fx = Fixture(test, op)
    y = outs[0]
    if op == "Conv":
        conv(fx, node, a, ins, y)
    elif op in ("MaxPool", "AveragePool"):
        pool(fx, node, a, ins, y, outs)
    elif op in ("GlobalAveragePool", "GlobalMaxPool"):
        x = nchw_to_nhwc(ins[0])
        name = fx.add_input(node.input[0], x)
        kind = "GlobalAveragePooling" if op == "GlobalAveragePool" else "GlobalMaxPooling"
        single(fx, {"name": op.lower(), "type": kind, "inputs": [name]}, nchw_to_nhwc(y))
    elif op == "Gemm":
        gemm(fx, node, a, ins, y)
    elif op == "MatMul":
        matmul(fx, node, ins, y)
    elif op == "Flatten":
        flatten(fx, node, a, ins, y)
    elif op in ACTIVATIONS:
        activation(fx, node, a, ins, y)
    elif op == "PRelu":
        prelu(fx, node, ins, y)
    elif op in ("Softmax", "LogSoftmax"):
        if test.opset.get("", test.opset.get("ai.onnx", 0)) < 13:
            raise Skip("opset < 13 softmax (coerced to 2-D)")
        axis = a.get("axis", -1)
        name = fx.add_input(node.input[0], channel_last(ins[0], axis))
        single(fx, {"name": op.lower(), "type": op, "inputs": [name]}, channel_last(y, axis))
    elif op == "BatchNormalization":
        batchnorm(fx, node, a, ins, y, outs)
    elif op in ("Add", "Sum"):
        if len(ins) < 2:
            raise Skip("a one-input Sum is an identity; Add needs >= 2 inputs")
        shapes = {tuple(x.shape) for x in ins}
        if len(shapes) != 1:
            raise Skip("broadcasting (" + " + ".join(_dims(x.shape) for x in ins) + ")")
        names = [fx.add_input(nm, channel_last(x, -1)) for nm, x in zip(node.input, ins)]
        single(fx, {"name": op.lower(), "type": "Add", "inputs": names}, channel_last(y, -1))
    elif op == "Concat":
        axis = a["axis"]
        names = [fx.add_input(nm, channel_last(x, axis)) for nm, x in zip(node.input, ins)]
        single(fx, {"name": "concat", "type": "Concatenate", "inputs": names}, channel_last(y, axis))
    elif op == "Resize":
        resize(fx, node, a, ins, y)
    elif op == "Identity":
        raise Skip("Identity: no Anvil layer (skipped by design)")
    else:
        raise Skip(f"{op} is not in scope")
    return fx


def single(fx, layer, expected):
    fx.layers.append(layer)
    fx.outputs.append(layer["name"])
    fx.expected.append(np.ascontiguousarray(expected, dtype=np.float32))


def conv(fx, node, a, ins, y):
    x, w = ins[0], ins[1]
    b = ins[2] if len(ins) > 2 else None
    if x.ndim != 4:
        raise Skip(f"{x.ndim - 2}-D convolution")
    o, cig, kh, kw = w.shape
    group = a.get("group", 1)
    strides = a.get("strides", [1, 1])
    dil = a.get("dilations", [1, 1])
    pads = window_pads(x.shape[2:], [kh, kw], strides, dil, a.get("auto_pad", "NOTSET"), a.get("pads"))
    name = fx.add_input(node.input[0], nchw_to_nhwc(x))
    layer = {"name": "conv", "type": "Convolution", "inputs": [name], "kernel": [kh, kw],
             "channels": int(o), "stride": list(strides), "padding": padding_value(pads),
             "dilation": list(dil), "groups": int(group), "bias": b is not None}
    fx.weights.append(("conv_W", w.astype(np.float32)))  # OIHW = Anvil "pytorch" layout
    if b is not None:
        fx.weights.append(("conv_b", b.astype(np.float32)))
    single(fx, layer, nchw_to_nhwc(y))


def pool(fx, node, a, ins, y, outs):
    x = ins[0]
    if len(outs) != 1:
        raise Skip("second output (argmax indices)")
    if x.ndim != 4:
        raise Skip(f"{x.ndim - 2}-D pooling")
    k = a["kernel_shape"]
    strides = a.get("strides", [1, 1])
    dil = a.get("dilations", [1, 1])
    pads = window_pads(x.shape[2:], k, strides, dil, a.get("auto_pad", "NOTSET"), a.get("pads"))
    name = fx.add_input(node.input[0], nchw_to_nhwc(x))
    maxp = node.op_type == "MaxPool"
    layer = {"name": node.op_type.lower(), "type": "MaxPooling" if maxp else "AveragePooling",
             "inputs": [name], "kernel": list(k), "stride": list(strides),
             "padding": padding_value(pads), "dilation": list(dil),
             "ceilMode": bool(a.get("ceil_mode", 0))}
    if not maxp:
        layer["countIncludesPadding"] = bool(a.get("count_include_pad", 0))
    single(fx, layer, nchw_to_nhwc(y))


def gemm(fx, node, a, ins, y):
    A, B = ins[0], ins[1]
    C = ins[2] if len(ins) > 2 else None
    if a.get("transA", 0):
        A = A.T
        fx.notes.append("transA folded: the input data is stored transposed")
    if a.get("transB", 0):
        B = B.T
    alpha, beta = np.float32(a.get("alpha", 1.0)), np.float32(a.get("beta", 1.0))
    n = B.shape[1]
    name = fx.add_input(node.input[0], A.reshape(A.shape[0], 1, 1, A.shape[1]))
    layer = {"name": "dense", "type": "Dense", "inputs": [name], "neurons": int(n), "bias": C is not None}
    fx.weights.append(("dense_W", (alpha * B.T).astype(np.float32)))  # [out][in]
    if alpha != 1:
        fx.notes.append(f"alpha {f32(alpha)} folded into the weights")
    if C is not None:
        if C.shape not in [(), (1,), (n,), (1, 1), (1, n)]:
            raise Skip(f"C of shape {_dims(C.shape)} is not one value per output column")
        bias = np.broadcast_to(C.reshape(-1), (n,)) if C.size == 1 else C.reshape(n)
        fx.weights.append(("dense_b", (beta * bias).astype(np.float32)))
        if beta != 1:
            fx.notes.append(f"beta {f32(beta)} folded into the bias")
        if C.size == 1 and n > 1:
            fx.notes.append("a single C value expanded to one bias per output")
    single(fx, layer, y.reshape(y.shape[0], 1, 1, y.shape[1]))


def matmul(fx, node, ins, y):
    A, B = ins
    if B.ndim > 2:
        raise Skip(f"batched second operand {_dims(B.shape)} (a different matrix per batch)")
    if B.ndim == 1:
        B2 = B.reshape(-1, 1)
    else:
        B2 = B
    A2 = A.reshape(-1, A.shape[-1])  # leading axes are independent rows
    if A.ndim != 2 or B.ndim != 2:
        fx.notes.append(f"{_dims(A.shape)} @ {_dims(B.shape)} reshaped to the 2-D product "
                        f"{_dims(A2.shape)} @ {_dims(B2.shape)}")
    name = fx.add_input(node.input[0], A2.reshape(A2.shape[0], 1, 1, A2.shape[1]))
    n = B2.shape[1]
    layer = {"name": "dense", "type": "Dense", "inputs": [name], "neurons": int(n), "bias": False}
    fx.weights.append(("dense_W", B2.T.astype(np.float32)))
    single(fx, layer, y.reshape(A2.shape[0], 1, 1, n))


def flatten(fx, node, a, ins, y):
    x = ins[0]
    axis = a.get("axis", 1)
    axis = axis + x.ndim if axis < 0 else axis
    lead, inner = x.shape[:axis], list(x.shape[axis:])
    n = int(np.prod(lead)) if lead else 1
    # The flattened block, read row-major, is Anvil's "chw" order of an NCHW image whose
    # C, H, W are consecutive groups of the inner axes.
    if len(inner) == 0:
        c, h, w = 1, 1, 1
    elif len(inner) == 1:
        c, h, w = inner[0], 1, 1
    elif len(inner) == 2:
        c, h, w = inner[0], 1, inner[1]
    else:
        c, h, w = inner[0], inner[1], int(np.prod(inner[2:]))
    if (n, c, h, w) != tuple(x.shape):
        fx.notes.append(f"{_dims(x.shape)} (axis {a.get('axis', 1)}) read as NCHW {n}x{c}x{h}x{w}")
    name = fx.add_input(node.input[0], nchw_to_nhwc(x.reshape(n, c, h, w)))
    layer = {"name": "flatten", "type": "Flatten", "inputs": [name], "order": "chw"}
    single(fx, layer, y.reshape(n, 1, 1, c * h * w))


def activation(fx, node, a, ins, y):
    op = node.op_type
    x = ins[0]
    name = fx.add_input(node.input[0], channel_last(x, -1))
    chain = None
    if op == "Relu":
        fn = "relu"
    elif op == "Sigmoid":
        fn = "sigmoid"
    elif op == "Tanh":
        fn = "tanh"
    elif op == "HardSwish":
        fn = "hardSwish"
    elif op == "LeakyRelu":
        fn = {"type": "leakyRelu", "alpha": f32(a.get("alpha", 0.01))}
    elif op == "Elu":
        fn = {"type": "elu", "alpha": f32(a.get("alpha", 1.0))}
    elif op == "HardSigmoid":
        fn = {"type": "hardSigmoid", "alpha": f32(a.get("alpha", 0.2)), "beta": f32(a.get("beta", 0.5))}
    elif op == "Selu":
        alpha, gamma = a.get("alpha", SELU_ALPHA), a.get("gamma", SELU_GAMMA)
        if np.float32(alpha) == np.float32(SELU_ALPHA) and np.float32(gamma) == np.float32(SELU_GAMMA):
            fn = "selu"
        else:
            # selu(x; a, g) = g * elu(x; a): an Elu activation followed by linear(g, 0).
            fn = {"type": "elu", "alpha": f32(alpha)}
            chain = {"type": "linear", "a": f32(gamma), "b": 0}
            fx.notes.append(f"non-default Selu as elu(alpha {f32(alpha)}) -> linear(a {f32(gamma)}, b 0)")
    elif op == "Clip":
        lo = ins[1] if len(ins) > 1 and ins[1] is not None else None
        hi = ins[2] if len(ins) > 2 and ins[2] is not None else None
        fn = {"type": "clip",
              "min": f32(lo) if lo is not None else -FLT_MAX,
              "max": f32(hi) if hi is not None else FLT_MAX}
        if lo is None or hi is None:
            fx.notes.append("absent min/max written as -/+ FLT_MAX")
    else:
        raise Skip(op)
    if chain is None:
        single(fx, {"name": op.lower(), "type": "Activation", "inputs": [name], "function": fn},
               channel_last(y, -1))
    else:
        first = op.lower() + "_elu"
        fx.layers.append({"name": first, "type": "Activation", "inputs": [name], "function": fn})
        single(fx, {"name": op.lower(), "type": "Activation", "inputs": [first], "function": chain},
               channel_last(y, -1))


def prelu(fx, node, ins, y):
    x, slope = ins
    r = x.ndim
    if slope.ndim > r:
        raise Skip("slope of higher rank than x")
    t = (1,) * (r - slope.ndim) + tuple(slope.shape)
    varying = [i for i in range(r) if t[i] != 1]
    for i in varying:
        if t[i] != x.shape[i]:
            raise Skip(f"slope {_dims(slope.shape)} does not broadcast onto {_dims(x.shape)} per channel")
    if not varying:
        span = [r - 1]
        slopes = np.full(x.shape[-1], slope.reshape(-1)[0], np.float32)
        fx.notes.append("a single slope expanded to one per channel")
    else:
        span = list(range(varying[0], varying[-1] + 1))
        if any(t[i] != x.shape[i] for i in span):
            raise Skip(f"slope {_dims(slope.shape)} varies along non-adjacent axes of {_dims(x.shape)}")
        slopes = slope.reshape(t)
        slopes = slopes.reshape([t[i] for i in span]).reshape(-1).astype(np.float32)
    others = [i for i in range(r) if i not in span]

    def mapped(v):
        v = np.transpose(v, others + span)
        lead = [x.shape[i] for i in others]
        c = int(np.prod([x.shape[i] for i in span]))
        return np.ascontiguousarray(v.reshape(to4d(lead, c)))

    if span != [r - 1]:
        fx.notes.append(f"slope {_dims(slope.shape)} varies over axes {span} of {_dims(x.shape)}: "
                        "those axes become the channel axis")
    name = fx.add_input(node.input[0], mapped(x))
    fx.weights.append(("prelu_slopes", slopes))
    single(fx, {"name": "prelu", "type": "PReLU", "inputs": [name]}, mapped(y))


def batchnorm(fx, node, a, ins, y, outs):
    if a.get("training_mode", 0) or len(outs) != 1:
        raise Skip("training_mode (running statistics outputs)")
    x, scale, bias, mean, var = ins[:5]
    name = fx.add_input(node.input[0], channel_last(x, 1))
    layer = {"name": "bn", "type": "BatchNormalization", "inputs": [name],
             "epsilon": f32(a.get("epsilon", 1e-5))}
    for suffix, v in (("gamma", scale), ("beta", bias), ("mean", mean), ("variance", var)):
        fx.weights.append((f"bn_{suffix}", v.astype(np.float32).reshape(-1)))
    single(fx, layer, channel_last(y, 1))


RESIZE_COORDS = {"half_pixel": "halfPixel", "align_corners": "alignCorners",
                 "asymmetric": "asymmetric", "pytorch_half_pixel": "pytorchHalfPixel"}


def resize(fx, node, a, ins, y):
    x = ins[0]
    roi = ins[1] if len(ins) > 1 else None
    scales = ins[2] if len(ins) > 2 else None
    sizes = ins[3] if len(ins) > 3 else None
    mode = a.get("mode", "nearest")
    if mode != "linear":
        raise Skip(f"mode {mode} (Anvil's Resize is bilinear)")
    if a.get("antialias", 0):
        raise Skip("antialias")
    ctm = a.get("coordinate_transformation_mode", "half_pixel")
    if ctm not in RESIZE_COORDS:
        raise Skip(f"coordinate_transformation_mode {ctm}")
    if roi is not None and roi.size:
        raise Skip("roi")
    if a.get("exclude_outside", 0):
        raise Skip("exclude_outside")
    if a.get("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise Skip(f"keep_aspect_ratio_policy {a['keep_aspect_ratio_policy']}")
    if x.ndim != 4:
        raise Skip(f"rank-{x.ndim} resize")
    axes = [ax % 4 for ax in a.get("axes", [0, 1, 2, 3])]
    layer = {"name": "resize", "type": "Resize", "inputs": [], "coordinates": RESIZE_COORDS[ctm]}
    if scales is not None and scales.size:
        full = [1.0] * 4
        for ax, s in zip(axes, scales):
            full[ax] = float(s)
        if full[0] != 1 or full[1] != 1:
            raise Skip("resize of the batch or channel axis")
        layer["scale"] = [f32(full[2]), f32(full[3])]
    elif sizes is not None and sizes.size:
        full = list(x.shape)
        for ax, s in zip(axes, sizes):
            full[ax] = int(s)
        if full[0] != x.shape[0] or full[1] != x.shape[1]:
            raise Skip("resize of the batch or channel axis")
        layer["size"] = [int(full[2]), int(full[3])]
    else:
        raise Skip("neither scales nor sizes")
    layer["inputs"] = [fx.add_input(node.input[0], nchw_to_nhwc(x))]
    single(fx, layer, nchw_to_nhwc(y))


# ----------------------------------------------------------------------------- selection

def classify(test):
    """Skip with the reason a test is out, or return (node, ins, outs) arrays to convert."""
    if len(test.nodes) != 1:
        ops = sorted({n.op_type for n in test.nodes})
        kind = "expanded function body" if "expanded" in test.name else "several nodes"
        raise Skip(f"{kind}: {len(test.nodes)} nodes ({', '.join(ops)})")
    node = test.nodes[0]
    if node.op_type not in IN_SCOPE:
        raise Skip(f"single {node.op_type} node (not in scope)")
    if node.op_type == "Identity":
        raise Skip("Identity: no Anvil layer (skipped by design)")
    for name, et in test.value_kinds():
        if et is None:
            raise Skip(f"non-tensor value {name!r} (optional/sequence)")
    if len([o for o in node.output if o]) > 1:
        if node.op_type == "MaxPool":
            raise Skip("second output (argmax indices)")
        if node.op_type == "BatchNormalization":
            raise Skip("training_mode (running statistics outputs)")
        raise Skip("several outputs")
    data_in = node.input[0]
    for v in list(test.graph_inputs) + list(test.graph_outputs):
        et = v.type.tensor_type.elem_type
        is_sizes = node.op_type == "Resize" and v.name in node.input[1:]
        if et != onnx.TensorProto.FLOAT and not (is_sizes and et == onnx.TensorProto.INT64):
            raise Skip(f"{onnx.TensorProto.DataType.Name(et).lower()} data")
    gin, gout = test.load_data()
    values = dict(test.initializers)
    values.update(gin)
    ins = [values[n] if n else None for n in node.input]
    outs = [gout[n] for n in node.output if n]
    if data_in not in gin:
        raise Skip("the data operand is an initializer")
    return node, ins, outs


def build(root, name, outputs=None):
    """The Fixture of one test. `outputs` replaces ONNX's stored outputs (for --verify)."""
    test = Test(root, name)
    node, ins, outs = classify(test)
    if outputs is not None:
        outs = outputs
    return convert(test, node, ins, outs)


def write_fixture(fx):
    d = os.path.join(FIXTURES, fx.test[len("test_"):])
    os.makedirs(d, exist_ok=True)
    dump_json(fx.model_json(), os.path.join(d, "model.json"))
    dump_json(fx.case_json(), os.path.join(d, "case.json"))
    if fx.weights:
        with open(os.path.join(d, "weights.bin"), "wb") as f:
            f.write(fx.blob())
    for i, (_, a) in enumerate(fx.inputs):
        a.astype("<f4").tofile(os.path.join(d, f"input_{i}.f32"))
    for i, a in enumerate(fx.expected):
        a.astype("<f4").tofile(os.path.join(d, f"output_{i}.f32"))
    return d


def dir_size(d):
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))


def import_all():
    root = node_test_root()
    if os.path.isdir(FIXTURES):
        shutil.rmtree(FIXTURES)
    os.makedirs(FIXTURES)
    imported, excluded = {}, []
    for name in sorted(os.listdir(root)):
        fam = family_of(name)
        try:
            test = Test(root, name)
        except Exception as e:  # noqa: BLE001 - report, do not stop
            if fam:
                excluded.append((fam, name, f"unreadable: {e}"))
            continue
        single_op = test.nodes[0].op_type if len(test.nodes) == 1 else None
        if fam is None and single_op not in IN_SCOPE:
            continue  # another operator's test
        fam = fam or single_op
        try:
            fx = build(root, name)
        except Skip as s:
            excluded.append((fam, name, str(s)))
            continue
        d = write_fixture(fx)
        imported.setdefault(fx.op, []).append((name, fx, dir_size(d)))
    write_index(imported, excluded)
    total = sum(s for v in imported.values() for _, _, s in v) + os.path.getsize(os.path.join(FIXTURES, "INDEX.md"))
    n = sum(len(v) for v in imported.values())
    print(f"imported {n} tests into {os.path.relpath(FIXTURES, REPO)} ({total / 1024:.1f} KiB), "
          f"excluded {len(excluded)}")
    for op in sorted(imported):
        print(f"  {op:20s} {len(imported[op])}")


def reason_category(why):
    """A short category for the summary line of INDEX.md."""
    if why.startswith(("expanded function body", "several nodes")):
        return why.split(":")[0]
    if re.match(r"^u?int\d+ data|^(double|float16|bfloat16|bool|string) data", why):
        return "not float32 data"
    if why.startswith("mode "):
        return "Resize mode nearest/cubic"
    if why.startswith("batched second operand"):
        return "MatMul with a batched second operand"
    if why.startswith("broadcasting"):
        return "broadcasting"
    return re.sub(r" \(.*\)$", "", why)


def dump_json(obj, path):
    """JSON with lists of numbers/strings kept on one line."""
    def enc(v, ind):
        pad = "  " * ind
        if isinstance(v, dict):
            if not v:
                return "{}"
            items = [f'{pad}  {json.dumps(k)}: {enc(x, ind + 1)}' for k, x in v.items()]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(v, list):
            if all(not isinstance(x, (dict, list)) for x in v):
                return "[" + ", ".join(json.dumps(x) for x in v) + "]"
            return "[\n" + ",\n".join(pad + "  " + enc(x, ind + 1) for x in v) + "\n" + pad + "]"
        return json.dumps(v)
    with open(path, "w") as f:
        f.write(enc(obj, 0) + "\n")


def write_index(imported, excluded):
    lines = [
        "# ONNX node tests imported as Anvil fixtures",
        "",
        f"Generated by `Scripts/import_onnx_tests.py` from the node tests shipped in the onnx "
        f"{onnx.__version__} wheel (`onnx/backend/test/data/node`). Do not edit by hand: "
        "`pip install onnx==1.22.0 && python3 Scripts/import_onnx_tests.py` regenerates this "
        "directory, `--verify` re-checks it.",
        "",
        "Each directory holds `model.json` (Anvil model format; one layer, two for a Selu with "
        "non-default constants), `weights.bin` "
        "(blob, `\"layout\": \"pytorch\"`, only for layers with parameters), `input_<i>.f32` "
        "and `output_0.f32` (raw little-endian float32, NHWC) and `case.json` (shapes `[N, H, W, C]`, "
        "in the order of the model's `inputs`). The expected output is ONNX's stored `output_0.pb`, "
        "permuted exactly like the inputs.",
        "",
        "Mapping conventions: 4-D NCHW tensors (Conv, pooling, BatchNormalization, Resize) are "
        "transposed to NHWC. Other tensors get the operation's axis (softmax axis, concat axis, "
        "the PReLU slope axes, the last axis for element-wise ops) as the channel axis; the remaining "
        "axes, in order, become N, H, W: none -> 1,1,1; one `a` -> a,1,1; two `a, b` -> 1,a,b; "
        "three -> N,H,W (more are folded into N). Constant operands that are graph inputs in the "
        "node tests (Conv W, Gemm/MatMul B and C, BatchNormalization statistics, PRelu slope, "
        "Clip min/max, Resize scales/sizes) are folded into parameters or layer options.",
        "",
        "## Imported",
        "",
        "| ONNX op | Anvil layer | count | tests (fixture directory = name without `test_`) |",
        "|---|---|---|---|",
    ]
    total = 0
    for op in sorted(imported):
        rows = imported[op]
        types = sorted({l["type"] for _, fx, _ in rows for l in fx.layers})
        names = ", ".join(f"`{n[5:]}`" for n, _, _ in rows)
        lines.append(f"| {op} | {', '.join(types)} | {len(rows)} | {names} |")
        total += len(rows)
    lines.append(f"| **total** | | **{total}** | |")
    notes = [(n, fx.notes) for op in sorted(imported) for n, fx, _ in imported[op] if fx.notes]
    if notes:
        lines += ["", "### Rewrites beyond the plain NCHW -> NHWC transpose", "",
                  "| test | what was done |", "|---|---|"]
        for n, ns in notes:
            lines.append(f"| `{n[5:]}` | {'; '.join(ns)} |")
    sizes = sorted(((s, n) for op in imported for n, _, s in imported[op]), reverse=True)
    total_size = sum(s for s, _ in sizes)
    lines += ["", "### Size", "",
              f"All fixtures together: {total_size / 1024:.1f} KiB. Largest: "
              + ", ".join(f"`{n[5:]}` {s / 1024:.1f} KiB" for s, n in sizes[:5]) + "."]
    edge = [n for op in imported for n, _, _ in imported[op]
            if n in ("test_clip_min_greater_than_max", "test_maxpool_2d_ceil_output_size_reduce_by_one",
                     "test_averagepool_2d_ceil_last_window_starts_on_pad", "test_softmax_large_number",
                     "test_logsoftmax_large_number")]
    if edge:
        lines += ["", "### Edge cases worth knowing", "",
                  "- `clip_min_greater_than_max`: ONNX sets every value to `max` when min > max "
                  "(`min(max(x, lo), hi)`).",
                  "- `maxpool_2d_ceil_output_size_reduce_by_one`, `averagepool_2d_ceil_last_window_starts_on_pad`: "
                  "in ceil mode a last window that would start in the trailing pad is dropped.",
                  "- `softmax_large_number`, `logsoftmax_large_number`: inputs up to ~10000; needs the "
                  "max-subtraction."]
    lines += ["", "### Comparing", "",
              "- Compare with a relative *and* a small absolute tolerance, e.g. "
              "`|got - expected| <= 1e-3 * |expected| + 1e-5`. A pure `rtol 1e-3` is too strict where "
              "an expected value is close to zero: `averagepool_2d_default`, `averagepool_2d_same_lower` "
              "and `averagepool_2d_same_upper` each hold an average of about -1.48e-5 whose float32 "
              "rounding depends on the summation order (1 ulp of the summands is 0.8% of it).",
              "- ONNX's stored outputs are not always exact: `averagepool_2d_ceil_last_window_starts_on_pad` "
              "was written rounded to 4 decimals (0.1511 for 0.151056); relative error 3e-4.",
              "- Resize with `scale`: the coordinate transform uses the given scale, and `alignCorners` "
              "(and the `pytorchHalfPixel` 1-pixel special case) uses the un-floored resized length "
              "`input x scale` as ONNX does: in `resize_downsample_scales_linear_align_corners` the width "
              "4 -> 2 at scale 0.6 maps output x = 1 to 1 x 3 / (2.4 - 1) = 2.142857, not to 3, giving "
              "3.142857. With `size`, the scale and length are output / input and the output size."]
    lines += ["", "## Excluded (tests of these operators' families)", "",
              "| family | test | reason |", "|---|---|---|"]
    for fam, name, why in sorted(excluded):
        lines.append(f"| {fam} | `{name}` | {why} |")
    reasons = {}
    for fam, name, why in excluded:
        reasons[reason_category(why)] = reasons.get(reason_category(why), 0) + 1
    lines += ["", "Excluded by reason: " + "; ".join(f"{k} ({v})" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])) + "."]
    with open(os.path.join(FIXTURES, "INDEX.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


# ----------------------------------------------------------------------------- verification

REQUIRED_OPTIONS = {
    "Convolution": ["kernel", "channels"], "DepthwiseConvolution": ["kernel"],
    "PointwiseConvolution": ["channels"], "MaxPooling": ["kernel"], "AveragePooling": ["kernel"],
    "GlobalAveragePooling": [], "GlobalMaxPooling": [], "Dense": ["neurons"], "Flatten": [],
    "Activation": ["function"], "PReLU": [], "Softmax": [], "LogSoftmax": [],
    "BatchNormalization": [], "Add": [], "Concatenate": [], "Resize": [],
}
ACT_STRINGS = {"none", "relu", "relu6", "sigmoid", "tanh", "selu", "hardSwish"}
ACT_OBJECTS = {"clip": {"min", "max"}, "leakyRelu": {"alpha"}, "elu": {"alpha"},
               "hardSigmoid": {"alpha", "beta"}, "linear": {"a", "b"}}


def check_model_json(d):
    """Validates model.json against docs/model-format.md; returns (model, blob tensors)."""
    with open(os.path.join(d, "model.json")) as f:
        m = json.load(f)
    errs = []

    def need(cond, msg):
        if not cond:
            errs.append(msg)

    need(m.get("format") == "anvil.model", "format")
    need(m.get("version") == 1, "version")
    need(isinstance(m.get("inputs"), list) and m["inputs"], "inputs")
    need(isinstance(m.get("layers"), list) and m["layers"], "layers")
    need(isinstance(m.get("outputs"), list) and m["outputs"], "outputs")
    names = []
    for i in m.get("inputs", []):
        need(isinstance(i.get("name"), str), "input name")
        need(isinstance(i.get("shape"), list) and len(i["shape"]) == 3
             and all(isinstance(v, int) and v > 0 for v in i["shape"]), f"input shape {i}")
        names.append(i.get("name"))
    for l in m.get("layers", []):
        need(isinstance(l.get("name"), str) and isinstance(l.get("type"), str), f"layer {l}")
        need(isinstance(l.get("inputs"), list), f"layer inputs {l.get('name')}")
        need(l.get("type") in REQUIRED_OPTIONS, f"layer type {l.get('type')}")
        for opt in REQUIRED_OPTIONS.get(l.get("type"), []):
            need(opt in l, f"{l['name']}: missing {opt}")
        if l.get("type") in ("Add", "Concatenate"):
            need(len(l["inputs"]) >= 2, f"{l['name']}: needs >= 2 inputs")
        elif l.get("type") in REQUIRED_OPTIONS:
            need(len(l["inputs"]) == 1, f"{l['name']}: needs 1 input")
        if l.get("type") == "Resize":
            need(("size" in l) != ("scale" in l), f"{l['name']}: exactly one of size/scale")
        for key in ("function", "activation"):
            if key in l:
                fn = l[key]
                if isinstance(fn, str):
                    need(fn in ACT_STRINGS, f"activation {fn}")
                else:
                    need(fn.get("type") in ACT_OBJECTS and set(fn) - {"type"} <= ACT_OBJECTS[fn["type"]],
                         f"activation {fn}")
                    need(all(isinstance(v, (int, float)) and math.isfinite(v)
                             for k, v in fn.items() if k != "type"), f"activation constants {fn}")
        p = l.get("padding")
        if p is not None:
            need(p in ("same", "valid") or (isinstance(p, list) and len(p) == 4
                                            and all(isinstance(v, int) and v >= 0 for v in p)), f"padding {p}")
        names.append(l.get("name"))
    need(len(names) == len(set(names)), f"duplicate names {names}")
    known = set(names)
    for l in m.get("layers", []):
        for i in l.get("inputs", []):
            need(i in known, f"{l['name']}: unknown input {i}")
    for o in m.get("outputs", []):
        need(o in known, f"unknown output {o}")
    tensors = {}
    if "parameters" in m:
        p = m["parameters"]
        need(p.get("layout", "forge") in ("forge", "pytorch", "tensorflow"), "layout")
        src = p.get("source", {})
        need(src.get("type") == "blob" and src.get("path") == "weights.bin", "source")
        blob = os.path.join(d, src.get("path", ""))
        need(os.path.isfile(blob), "weights.bin missing")
        size = os.path.getsize(blob) if os.path.isfile(blob) else 0
        data = np.fromfile(blob, dtype="<f4") if size else np.zeros(0, np.float32)
        for tn, t in src.get("tensors", {}).items():
            need(isinstance(t.get("offset"), int) and isinstance(t.get("count"), int), f"tensor {tn}")
            need(t["offset"] % 4 == 0 and t["offset"] >= 0 and t["count"] > 0, f"tensor {tn} offset/count")
            need(t["offset"] + 4 * t["count"] <= size, f"tensor {tn} overruns weights.bin ({size} bytes)")
            need(tn.rsplit("_", 1)[0] in names, f"tensor {tn} names no layer")
            tensors[tn] = data[t["offset"] // 4: t["offset"] // 4 + t["count"]]
        need(sum(4 * t["count"] for t in src.get("tensors", {}).values()) == size,
             "weights.bin has bytes no tensor uses")
    else:
        need(not os.path.exists(os.path.join(d, "weights.bin")), "weights.bin without parameters")
    if errs:
        raise AssertionError(f"{os.path.basename(d)}/model.json: " + "; ".join(errs))
    return m, tensors


# An independent NHWC interpreter of the model files written above (numpy, float64).

def _act(fn, x):
    if isinstance(fn, str):
        return {"none": lambda v: v, "relu": lambda v: np.maximum(v, 0),
                "relu6": lambda v: np.clip(v, 0, 6), "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
                "tanh": np.tanh, "hardSwish": lambda v: v * np.clip(v + 3, 0, 6) / 6,
                "selu": lambda v: SELU_GAMMA * np.where(v > 0, v, SELU_ALPHA * (np.exp(v) - 1)),
                }[fn](x)
    t = fn["type"]
    if t == "clip":
        return np.minimum(np.maximum(x, fn["min"]), fn["max"])
    if t == "leakyRelu":
        return np.where(x >= 0, x, fn["alpha"] * x)
    if t == "elu":
        return np.where(x > 0, x, fn["alpha"] * (np.exp(x) - 1))
    if t == "hardSigmoid":
        return np.clip(fn["alpha"] * x + fn["beta"], 0, 1)
    if t == "linear":
        return fn["a"] * x + fn["b"]
    raise ValueError(t)


def _geometry(size, k, s, d, pad, ceil):
    before, after = pad
    ext = (k - 1) * d + 1
    span = size + before + after - ext
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + before:
        out -= 1
    return out


def _pads(layer, h, w, k, s, d):
    p = layer.get("padding", "valid")
    if p == "valid":
        return (0, 0), (0, 0)
    if p == "same":
        res = []
        for size, kk, ss, dd in ((h, k[0], s[0], d[0]), (w, k[1], s[1], d[1])):
            out = -(-size // ss)
            tot = max((out - 1) * ss + (kk - 1) * dd + 1 - size, 0)
            res.append((tot // 2, tot - tot // 2))
        return res[0], res[1]
    return (p[0], p[2]), (p[1], p[3])


def _windows(x, layer, default_stride_is_kernel, fill):
    """x padded (with `fill`) plus the window taps: list of ((i, j), view [N, OH, OW, C]) and a mask view."""
    n, h, w, c = x.shape
    k = layer["kernel"]
    s = layer.get("stride", k if default_stride_is_kernel else [1, 1])
    d = layer.get("dilation", [1, 1])
    ceil = layer.get("ceilMode", False)
    ph, pw = _pads(layer, h, w, k, s, d)
    oh = _geometry(h, k[0], s[0], d[0], ph, ceil)
    ow = _geometry(w, k[1], s[1], d[1], pw, ceil)
    # extra trailing cells a ceil-mode window may reach beyond the explicit pad
    eh = max(0, (oh - 1) * s[0] + (k[0] - 1) * d[0] + 1 - (h + ph[0] + ph[1]))
    ew = max(0, (ow - 1) * s[1] + (k[1] - 1) * d[1] + 1 - (w + pw[0] + pw[1]))
    xp = np.full((n, h + ph[0] + ph[1] + eh, w + pw[0] + pw[1] + ew, c), fill, np.float64)
    xp[:, ph[0]:ph[0] + h, pw[0]:pw[0] + w, :] = x
    inside = np.zeros((1, xp.shape[1], xp.shape[2], 1))
    inside[:, ph[0]:ph[0] + h, pw[0]:pw[0] + w, :] = 1       # real input cells
    padded = np.zeros_like(inside)
    padded[:, :h + ph[0] + ph[1], :w + pw[0] + pw[1], :] = 1  # input plus explicit pads
    taps = []
    for i in range(k[0]):
        for j in range(k[1]):
            sl = (slice(None), slice(i * d[0], i * d[0] + (oh - 1) * s[0] + 1, s[0]),
                  slice(j * d[1], j * d[1] + (ow - 1) * s[1] + 1, s[1]), slice(None))
            taps.append(((i, j), xp[sl], inside[sl], padded[sl]))
    return taps, oh, ow


def _resize_coords(out, size, scale, mode, length):
    """Source coordinates as ONNX defines them; `length` is the resized length the transform
    uses: input x scale (not floored) when a scale is given, the output size otherwise."""
    x = np.arange(out, dtype=np.float64)
    if mode == "halfPixel":
        o = (x + 0.5) / scale - 0.5
    elif mode == "pytorchHalfPixel":
        o = (x + 0.5) / scale - 0.5 if length != 1 else np.zeros_like(x)
    elif mode == "alignCorners":
        o = x * (size - 1) / (length - 1) if length != 1 else np.zeros_like(x)
    elif mode == "asymmetric":
        o = x / scale
    else:
        raise ValueError(mode)
    o = np.clip(o, 0, size - 1)
    lo = np.floor(o).astype(int)
    hi = np.minimum(lo + 1, size - 1)
    return lo, hi, o - lo


def interpret(m, tensors, feeds):
    env = {k: v.astype(np.float64) for k, v in feeds.items()}
    layers = {l["name"]: l for l in m["layers"]}
    done = set(env)

    def run(l):
        x = [env[i] for i in l["inputs"]]
        t = l["type"]
        name = l["name"]
        if t == "Convolution":
            src = layers.get(l.get("sharesParametersWith"), l)["name"]
            W = tensors[f"{src}_W"]
            k, o, g = l["kernel"], l["channels"], l.get("groups", 1)
            cin = x[0].shape[3]
            W = W.reshape(o, cin // g, k[0], k[1]).astype(np.float64)  # pytorch layout
            taps, oh, ow = _windows(x[0], l, False, 0.0)
            y = np.zeros((x[0].shape[0], oh, ow, o))
            og, ig = o // g, cin // g
            for (i, j), v, _, _ in taps:
                for gi in range(g):
                    y[..., gi * og:(gi + 1) * og] += v[..., gi * ig:(gi + 1) * ig] @ W[gi * og:(gi + 1) * og, :, i, j].T
            if l.get("bias", True):
                y += tensors[f"{src}_b"]
            return _act(l.get("activation", "none"), y)
        if t in ("MaxPooling", "AveragePooling"):
            if t == "MaxPooling":
                taps, _, _ = _windows(x[0], l, True, -np.inf)
                return np.max(np.stack([v for _, v, _, _ in taps]), axis=0)
            taps, _, _ = _windows(x[0], l, True, 0.0)
            total = sum(v for _, v, _, _ in taps)
            if l.get("countIncludesPadding", False):
                count = sum(p for _, _, _, p in taps)
            else:
                count = sum(q for _, _, q, _ in taps)
            return total / count
        if t == "GlobalAveragePooling":
            return x[0].mean(axis=(1, 2), keepdims=True)
        if t == "GlobalMaxPooling":
            return x[0].max(axis=(1, 2), keepdims=True)
        if t == "Dense":
            n, h, w, c = x[0].shape
            W = tensors[f"{name}_W"].reshape(l["neurons"], c, h, w).astype(np.float64)  # pytorch: [out][c][h][w]
            flat = x[0].transpose(0, 3, 1, 2).reshape(n, -1)
            y = flat @ W.reshape(l["neurons"], -1).T
            if l.get("bias", True):
                y += tensors[f"{name}_b"]
            return _act(l.get("activation", "none"), y).reshape(n, 1, 1, -1)
        if t == "Flatten":
            v = x[0]
            if l.get("order", "hwc") == "chw":
                v = v.transpose(0, 3, 1, 2)
            return v.reshape(v.shape[0], 1, 1, -1)
        if t == "Activation":
            return _act(l["function"], x[0])
        if t == "PReLU":
            s = tensors[f"{name}_slopes"]
            return np.where(x[0] >= 0, x[0], s * x[0])
        if t in ("Softmax", "LogSoftmax"):
            z = x[0] - x[0].max(axis=-1, keepdims=True)
            lse = np.log(np.exp(z).sum(axis=-1, keepdims=True))
            return np.exp(z - lse) if t == "Softmax" else z - lse
        if t == "BatchNormalization":
            g, b = tensors[f"{name}_gamma"], tensors[f"{name}_beta"]
            mu, var = tensors[f"{name}_mean"], tensors[f"{name}_variance"]
            return (x[0] - mu) / np.sqrt(var + l.get("epsilon", 0.001)) * g + b
        if t == "Add":
            return _act(l.get("activation", "none"), sum(x))
        if t == "Concatenate":
            return np.concatenate(x, axis=3)
        if t == "Resize":
            n, h, w, c = x[0].shape
            if "size" in l:
                oh, ow = l["size"]
                sh, sw = oh / h, ow / w
                lh, lw = oh, ow
            else:
                sh, sw = (float(np.float32(v)) for v in l["scale"])
                oh, ow = int(math.floor(h * sh)), int(math.floor(w * sw))
                lh, lw = h * sh, w * sw
            mode = l.get("coordinates", "halfPixel")
            y0, y1, fy = _resize_coords(oh, h, sh, mode, lh)
            x0, x1, fx_ = _resize_coords(ow, w, sw, mode, lw)
            v = x[0]
            top = v[:, y0][:, :, x0] * (1 - fx_)[None, None, :, None] + v[:, y0][:, :, x1] * fx_[None, None, :, None]
            bot = v[:, y1][:, :, x0] * (1 - fx_)[None, None, :, None] + v[:, y1][:, :, x1] * fx_[None, None, :, None]
            return top * (1 - fy)[None, :, None, None] + bot * fy[None, :, None, None]
        raise ValueError(t)

    pending = list(m["layers"])
    while pending:
        progressed = False
        for l in list(pending):
            if all(i in done for i in l["inputs"]):
                env[l["name"]] = run(l)
                done.add(l["name"])
                pending.remove(l)
                progressed = True
        if not progressed:
            raise AssertionError("cycle or unknown input")
    return [env[o] for o in m["outputs"]]


def verify():
    from onnx.reference import ReferenceEvaluator

    root = node_test_root()
    dirs = sorted(e for e in os.listdir(FIXTURES) if os.path.isdir(os.path.join(FIXTURES, e)))
    if not dirs:
        sys.exit("no fixtures: run the import first")
    failures, worst_ref, worst_interp, pure_rtol, not_identical = [], (0.0, ""), (0.0, ""), [], []
    for e in dirs:
        d = os.path.join(FIXTURES, e)
        try:
            with open(os.path.join(d, "case.json")) as f:
                case = json.load(f)
            m, tensors = check_model_json(d)
            assert set(case) >= {"onnx", "op", "inputs", "outputs"}, "case.json keys"
            assert len(case["inputs"]) == len(m["inputs"]), "case inputs vs model inputs"
            feeds = {}
            for ci, mi in zip(case["inputs"], m["inputs"]):
                a = np.fromfile(os.path.join(d, ci["file"]), dtype="<f4")
                assert a.size == int(np.prod(ci["shape"])), f"{ci['file']} size"
                assert ci["shape"][1:] == mi["shape"], f"{ci['file']} shape vs model input {mi['name']}"
                feeds[mi["name"]] = a.reshape(ci["shape"])
            expected = [np.fromfile(os.path.join(d, co["file"]), dtype="<f4").reshape(co["shape"])
                        for co in case["outputs"]]
            test = Test(root, case["onnx"])
            # 1. the ONNX reference evaluator on the original model and inputs
            gin, gout = test.load_data()
            ref = ReferenceEvaluator(test.model).run(None, {k: v for k, v in gin.items()})
            ref_fx = build(root, case["onnx"], outputs=[np.asarray(r) for r in ref])
            stored_fx = build(root, case["onnx"])
            for i, (n, a) in enumerate(stored_fx.inputs):
                assert np.array_equal(a.view(np.uint32), feeds[n].view(np.uint32)), f"input_{i} differs from ONNX's"
            for i, (r, s, x) in enumerate(zip(ref_fx.expected, stored_fx.expected, expected)):
                assert r.shape == x.shape, f"reference output shape {r.shape} vs {x.shape}"
                assert np.array_equal(s.view(np.uint32), x.view(np.uint32)), f"output_{i} is not ONNX's stored output"
                diff = float(np.max(np.abs(r.astype(np.float64) - x) / (np.abs(x) + 1e-6))) if x.size else 0.0
                if diff > worst_ref[0]:
                    worst_ref = (diff, e)
                if not np.array_equal(r, x):
                    not_identical.append(f"{e} ({diff:.2g})")
                # ONNX's stored outputs are sometimes rounded by the test's author (e.g. to 4 digits)
                assert np.allclose(r, x, rtol=1e-3, atol=1e-6), f"reference evaluator differs by {diff:g}"
            # 2. the independent NHWC interpreter of model.json on the fixture files
            got = interpret(m, tensors, feeds)
            for g, x in zip(got, expected):
                assert g.shape == x.shape, f"interpreter shape {g.shape} vs {x.shape}"
                rel = float(np.max(np.abs(g - x) / (np.abs(x) + 1e-6))) if x.size else 0.0
                if rel > worst_interp[0]:
                    worst_interp = (rel, e)
                assert np.allclose(g, x, rtol=1e-3, atol=1e-5), f"interpreter differs (max rel {rel:g})"
                g32 = g.astype(np.float32)
                if not np.all(np.abs(g32 - x) <= 1e-3 * np.abs(x)):
                    pure_rtol.append(e)
        except Exception as ex:  # noqa: BLE001
            failures.append((e, f"{type(ex).__name__}: {ex}"))
    print(f"verified {len(dirs) - len(failures)}/{len(dirs)} fixtures")
    print(f"  ONNX reference evaluator vs output_0.f32: max relative difference {worst_ref[0]:.3g} ({worst_ref[1]})")
    print(f"  NHWC interpreter vs output_0.f32:        max relative difference {worst_interp[0]:.3g} ({worst_interp[1]})")
    print(f"  bit-identical to the reference evaluator: {len(dirs) - len(failures) - len(not_identical)}; "
          f"within rtol 1e-3 only: {', '.join(not_identical) or 'none'}")
    if pure_rtol:
        print(f"  a pure rtol 1e-3 check (no atol) would fail on: {', '.join(sorted(set(pure_rtol)))}")
    for e, why in failures:
        print(f"  FAIL {e}: {why}")
    return not failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--verify", action="store_true", help="check the fixtures instead of (re)writing them")
    args = ap.parse_args()
    if args.verify:
        sys.exit(0 if verify() else 1)
    import_all()


if __name__ == "__main__":
    main()
