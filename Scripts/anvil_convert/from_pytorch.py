"""Converts a PyTorch model into an Anvil model file (docs/model-format.md).

The model is traced with torch.fx; every module call, function and method becomes an Anvil
layer named after its module path with '.' replaced by '_' (`layer1.0.conv1` ->
`layer1_0_conv1`), so a converted model and a zoo definition in Sources/AnvilModels/Zoo
read the same tensors. Weights are written unchanged in PyTorch's layout into one float32
blob (`"layout": "pytorch"`), named `<layer>_<suffix>` (W, b, gamma, beta, mean, variance,
slopes).

Supported: Conv2d (any groups; depthwise becomes DepthwiseConvolution), Conv1d, MaxPool1d and
AvgPool1d on (N, C, L) sequences (a height-1 window; input_shape (length, channels)),
ChannelShuffle, PixelShuffle / PixelUnshuffle (DepthToSpace / SpaceToDepth, CRD), BatchNorm1d/2d,
Linear, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d/AdaptiveMaxPool2d (to 1x1, or to a size that
divides the input), ZeroPad2d / F.pad(constant 0) before a convolution (folded into its
padding; a Pad layer before anything else), ConstantPad2d / ReflectionPad2d /
ReplicationPad2d / F.pad (constant, reflect, replicate), ConvTranspose2d and ConvTranspose1d, Upsample /
UpsamplingNearest2d / UpsamplingBilinear2d / F.interpolate (nearest, nearest-exact,
bilinear, bicubic; bilinear and bicubic with antialias=True), InstanceNorm2d (affine or not; with running statistics it is a
BatchNormalization), GroupNorm, LocalResponseNorm (odd sizes), LPPool2d (p = 2), ReLU, ReLU6, Hardtanh, LeakyReLU, ELU, SELU, Sigmoid, Tanh, Hardswish,
Hardsigmoid, SiLU, GELU (both approximations), Mish, Softplus (beta 1), Softsign, CELU, PReLU, Softmax, LogSoftmax, Flatten / torch.flatten / view / reshape to
(N, -1), Dropout (identity at inference), Identity, torch.add / + / += (tensor + tensor;
tensor + or * a number), tensor * / - / / tensor and + of other shapes with broadcasting
(Elementwise: a squeeze-and-excitation gate), torch.cat on any dim but the batch (one tensor:
nothing), x.permute(...) with the batch dim first (a Transpose; x.permute(0, 3, 2, 1).flatten(1)
before a Linear works), x.mean((2, 3)), F.interpolate
(Resize; `x.shape` may give its size), torchvision's stochastic depth (identity at
inference), x.chunk(n, dim=1) (Slice layers), ShuffleNet's channel shuffle (view to
(N, g, C/g, H, W), transpose(1, 2), view back: ChannelShuffle), and their
torch.nn.functional and Tensor-method forms. Anything else is an error naming every unsupported node.

A flatten that only feeds Linear layers is dropped: Anvil's Dense reads a spatial input
and, with the pytorch layout, takes its weights as PyTorch's C,H,W-flattened ones. An
activation right after a convolution, Linear or addition (its only consumer) is written
as that layer's `activation`.

Usage:
    .venv/bin/python Scripts/convert_pytorch.py --torchvision resnet18 [--weights state_dict.pth]
        [--classes 1000] [--width 1.0] [--input-size 224] [--softmax] --out DIR
    .venv/bin/python Scripts/convert_pytorch.py --model whole_model.pt --input-size 224 --out DIR
    .venv/bin/python Scripts/convert_pytorch.py --model fcn.pt --input-size 64 --open-size --out DIR

`--torchvision` accepts the zoo networks: vgg16, mobilenet_v1 (not in torchvision: the
definition in torch_zoo.py, named as Keras names its layers), inception_v3 (without the
auxiliary classifier), squeezenet1_1, resnet18, resnet50, googlenet (without the auxiliary
classifiers), fcn_resnet50 (without the auxiliary head; 21 classes by default), and
torchvision's own classes for mobilenet_v2, mobilenet_v3_large, mobilenet_v3_small,
efficientnet_b0 (their `width_mult`), densenet121 (growth rate and stem scaled) and
shufflenet_v2_x1_0 (stage channels scaled). `--width` below 1 builds the reduced variants
defined in torch_zoo.py, which equal torchvision's at width 1
(Scripts/fixtures/zoo_reference.py checks that). From Python:
`anvil_convert.from_pytorch.convert(module, (H, W, C), out_dir)`.
"""

import operator
import sys

import numpy as np
import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.passes.shape_prop import ShapeProp

from . import cli
from .torch_zoo import DEFAULT_INPUT_SIZE, ZOO, build_network, import_torchvision
from .writer import ConversionError, ModelWriter


# ---------------------------------------------------------------------------------------
# The converter
# ---------------------------------------------------------------------------------------

# Where PyTorch's dims of (N, C, H, W) / (N, C, L) / (N, F) sit in Anvil's channels-last layout.
_STANDARD = {4: (0, 3, 1, 2), 3: (0, 2, 1), 2: (0, 1)}


class _Tensor:
    """An Anvil tensor: its name and the PyTorch shape (N, C, H, W) or (N, F)."""

    def __init__(self, name, shape):
        """`shape` is PyTorch's (N, C, H, W) or (N, F)."""
        self.name, self.shape = name, tuple(shape)

    @property
    def spatial(self):
        """Whether the tensor is an image larger than 1x1 (a 1x1 map is already flat in Anvil)."""
        return len(self.shape) == 4 and (self.shape[2] != 1 or self.shape[3] != 1)


class _Pad:
    """Zero padding waiting for the convolution it folds into: pads (top, left, bottom, right)."""

    def __init__(self, source, pads, node):
        """`pads` are (top, left, bottom, right); `node` is where the padding was made."""
        self.source, self.pads, self.node = source, pads, node
        self.written = None


class _Flatten:
    """A C,H,W flatten of a spatial tensor: dropped before Linear, written otherwise."""

    def __init__(self, source, base_name):
        """`base_name` names the Flatten layer if one has to be written."""
        self.source, self.base_name, self.written = source, base_name, None


class _Chunks:
    """`x.chunk(n, dim=1)`: channel ranges [start, end) that indexing turns into Slice layers."""

    def __init__(self, source, ranges):
        """`ranges` are the (start, end) channel ranges of the parts."""
        self.source, self.ranges = source, ranges


class _Grouped:
    """`x.view(N, g, C/g, H, W)` (and then `transpose(1, 2)`): half of a channel shuffle, which
    the view back to (N, C, H, W) completes as a ChannelShuffle layer."""

    def __init__(self, source, groups, transposed=False):
        """`source` viewed as `groups` groups of channels; `transposed` after transpose(1, 2)."""
        self.source, self.groups, self.transposed = source, groups, transposed


class _Scalar:
    """A Python number computed in the graph (x.size(0)); only view/reshape may use it."""


_ACTIVATION_MODULES = {
    nn.ReLU: lambda m: "relu",
    nn.ReLU6: lambda m: "relu6",
    nn.Sigmoid: lambda m: "sigmoid",
    nn.Tanh: lambda m: "tanh",
    nn.SELU: lambda m: "selu",
    nn.Hardswish: lambda m: "hardSwish",
    nn.Hardsigmoid: lambda m: {"type": "hardSigmoid", "alpha": 1.0 / 6.0, "beta": 0.5},
    nn.LeakyReLU: lambda m: {"type": "leakyRelu", "alpha": float(m.negative_slope)},
    nn.ELU: lambda m: {"type": "elu", "alpha": float(m.alpha)},
    nn.Hardtanh: lambda m: _clip(m.min_val, m.max_val),
    nn.SiLU: lambda m: "silu",
    nn.GELU: lambda m: _gelu(m.approximate),
    nn.Mish: lambda m: "mish",
    nn.Softplus: lambda m: _softplus(m.beta),
    nn.Softsign: lambda m: "softsign",
    nn.CELU: lambda m: {"type": "celu", "alpha": float(m.alpha)},
}


def _gelu(approximate):
    """GELU's Anvil activation: gelu (exact, erf) or geluTanh (approximate='tanh')."""
    if approximate not in ("none", "tanh"):
        raise ConversionError(f"GELU with approximate='{approximate}' is not supported (only 'none' and 'tanh')")
    return "gelu" if approximate == "none" else "geluTanh"


def _softplus(beta):
    """Softplus's Anvil activation; only beta 1 (log(1 + e^x)) exists in Anvil."""
    if float(beta) != 1:
        raise ConversionError(f"Softplus with beta {beta} is not supported (only beta 1)")
    return "softplus"


_LAYER_MODULES = (nn.ConvTranspose2d, nn.ConvTranspose1d, nn.Upsample, nn.UpsamplingNearest2d, nn.UpsamplingBilinear2d, nn.InstanceNorm2d,
                  nn.GroupNorm, nn.LocalResponseNorm, nn.LPPool2d)

_IDENTITY_MODULES = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.AlphaDropout, nn.FeatureAlphaDropout, nn.Identity)


def _clip(low, high):
    """A Hardtanh's bounds as Anvil's relu6 or clip activation."""
    return "relu6" if (low, high) == (0.0, 6.0) else {"type": "clip", "min": float(low), "max": float(high)}


def _argument(node, index, keyword, default=None):
    """Positional argument `index` of an fx node, else keyword `keyword`, else `default`."""
    if len(node.args) > index:
        return node.args[index]
    return node.kwargs.get(keyword, default)


def _is_inference_stochastic_depth(node):
    """torchvision.ops.stochastic_depth(x, p, mode, training=False): the identity at inference."""
    return (node.op == "call_function" and getattr(node.target, "__name__", "") == "stochastic_depth"
            and getattr(node.target, "__module__", "").startswith("torchvision.")
            and _argument(node, 3, "training", True) is False)


def _activation_function(node):
    """The Anvil activation of a functional/method activation node, or None."""
    target = node.target
    if target in (F.relu, torch.relu, "relu", "relu_"):
        return "relu"
    if target in (F.relu6, "relu6"):
        return "relu6"
    if target in (torch.sigmoid, F.sigmoid, "sigmoid", "sigmoid_"):
        return "sigmoid"
    if target in (torch.tanh, F.tanh, "tanh", "tanh_"):
        return "tanh"
    if target in (F.selu, torch.selu, "selu"):
        return "selu"
    if target is F.hardswish:
        return "hardSwish"
    if target is F.hardsigmoid:
        return {"type": "hardSigmoid", "alpha": 1.0 / 6.0, "beta": 0.5}
    if target in (F.leaky_relu, "leaky_relu"):
        return {"type": "leakyRelu", "alpha": float(_argument(node, 1, "negative_slope", 0.01))}
    if target in (F.elu, "elu"):
        return {"type": "elu", "alpha": float(_argument(node, 1, "alpha", 1.0))}
    if target in (F.hardtanh, "hardtanh"):
        return _clip(float(_argument(node, 1, "min_val", -1.0)), float(_argument(node, 2, "max_val", 1.0)))
    if target in (F.silu, "silu"):
        return "silu"
    if target in (F.gelu, "gelu"):
        return _gelu(node.kwargs.get("approximate", "none"))
    if target in (F.mish, "mish"):
        return "mish"
    if target in (F.softplus, "softplus"):
        return _softplus(_argument(node, 1, "beta", 1))
    if target in (F.softsign, "softsign"):
        return "softsign"
    if target in (F.celu, "celu"):
        return {"type": "celu", "alpha": float(_argument(node, 1, "alpha", 1.0))}
    return None


_SHORT_NAMES = {"iadd": "add", "add_": "add", "truediv": "div", "avg_pool2d": "avgpool", "max_pool2d": "maxpool",
                "adaptive_avg_pool2d": "avgpool", "adaptive_max_pool2d": "maxpool", "relu_": "relu"}

_IDENTITY_FUNCTIONS = (F.dropout, F.dropout2d, F.alpha_dropout, torch.dropout)
_FLATTEN_TARGETS = (torch.flatten, "flatten", "view", "reshape", torch.reshape)
_SCALAR_TARGETS = ("size", "dim")
_ADD_TARGETS = (operator.add, operator.iadd, torch.add, "add", "add_")
_SCALE_TARGETS = (operator.mul, operator.imul, torch.mul, "mul", "mul_", operator.truediv, torch.div, "div",
                  operator.sub, torch.sub, "sub")


class Converter:
    """Traces `module` and fills a ModelWriter (layout "pytorch") with its graph and weights."""

    def __init__(self, module, input_shape, name=None, input_name="input"):
        """`input_shape` is (height, width, channels) of one image, or (length, channels) of one
        sequence (PyTorch's (N, C, L): Conv1d, MaxPool1d, AvgPool1d)."""
        self.module = module.eval()
        self.sequence = len(input_shape) == 2
        if self.sequence:
            self.height, (self.width, self.channels) = 1, (int(v) for v in input_shape)
        else:
            self.height, self.width, self.channels = (int(v) for v in input_shape)
        self.name = name or type(module).__name__
        self.input_name = input_name
        self.writer = ModelWriter(self.name, layout="pytorch")
        self.writer.add_input(input_name, (self.width, self.channels) if self.sequence
                              else (self.height, self.width, self.channels))
        self.names = {input_name}  # names taken or reserved (a module's name before its layer is written)
        self.applications = {}    # module path -> times applied
        self.shared = set()       # layers whose parameters another layer uses

    # -- naming ---------------------------------------------------------------------------

    def unique(self, base):
        """`base`, or `base_2`, `base_3`, ... when taken; reserves the name."""
        name, k = base, 2
        while name in self.names:
            name, k = f"{base}_{k}", k + 1
        self.names.add(name)
        return name

    @staticmethod
    def scope(node):
        """The module path (with '_' for '.') a function node was called in, or ""."""
        stack = node.meta.get("nn_module_stack") or {}
        if not stack:
            return ""
        path = list(stack.items())[-1]
        path = path[1][0] if isinstance(path[1], tuple) else path[0]
        return path.replace(".", "_")

    def function_name(self, node, op):
        """A unique layer name for a function node: its module scope and a short op name."""
        op = _SHORT_NAMES.get(op, op)
        scope = self.scope(node)
        return self.unique(f"{scope}_{op}" if scope else op)

    # -- emitting -------------------------------------------------------------------------

    def emit(self, name, kind, inputs, node, **options):
        """Writes one layer (options as model-file fields) and returns its output tensor."""
        shape = node.meta["tensor_meta"].shape
        self.writer.add_layer(name, kind, [t.name for t in inputs], **options)
        return _Tensor(name, shape)

    def add_tensor(self, name, values):
        """Writes a parameter tensor (any torch tensor, as float32)."""
        self.writer.add_tensor(name, values.detach().to(torch.float32).cpu().numpy())

    # -- conversion -----------------------------------------------------------------------

    def trace(self):
        """Traces the module with torch.fx and propagates shapes on a zero image; errors name every unsupported node."""
        if getattr(self.module, "transform_input", False):
            raise ConversionError("the model has transform_input=True (torchvision Inception3 with pretrained weights): "
                                  "build it with transform_input=False and feed images normalised with mean 0.5 and "
                                  "std 0.5 per channel, which is what transform_input computes")
        try:
            graph_module = torch.fx.symbolic_trace(self.module)
        except Exception as error:  # noqa: BLE001 - tracing raises many kinds
            raise ConversionError(f"torch.fx cannot trace the model: {error}") from error
        modules = dict(graph_module.named_modules())
        unsupported = [self.describe(node, modules) for node in graph_module.graph.nodes
                       if not self.supported(node, modules)]
        if unsupported:
            raise ConversionError("unsupported: " + "; ".join(unsupported))
        example = (torch.zeros(1, self.channels, self.width) if self.sequence
                   else torch.zeros(1, self.channels, self.height, self.width))
        try:
            with torch.no_grad():
                ShapeProp(graph_module).propagate(example)
        except Exception as error:  # noqa: BLE001
            raise ConversionError(f"the model fails on an input of shape (1, {self.channels}, {self.height}, "
                                  f"{self.width}): {str(error).splitlines()[0]}") from error
        return graph_module

    def convert(self):
        """Converts every traced node; returns the ModelWriter with its outputs set and activations fused."""
        graph_module = self.trace()
        modules = dict(graph_module.named_modules())
        values, outputs = {}, []
        placeholders = [n for n in graph_module.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != 1:
            raise ConversionError(f"the model takes {len(placeholders)} inputs; only single-input models convert")
        for node in graph_module.graph.nodes:
            if node.op == "placeholder":
                values[node] = _Tensor(self.input_name, node.meta["tensor_meta"].shape)
            elif node.op == "output":
                results = node.args[0]
                results = list(results) if isinstance(results, (tuple, list)) else [results]
                outputs = [self.materialize(values[r], r) for r in results]
            elif node.op == "call_module":
                values[node] = self.convert_module(node, modules[node.target], values)
            else:
                values[node] = self.convert_function(node, values)
        self.fuse_activations(outputs)
        self.writer.set_outputs([t.name for t in outputs])
        return self.writer

    def describe(self, node, modules):
        """A node for an error message: the module and its class, or the function/method and the node."""
        if node.op == "call_module":
            return f"module '{node.target}' ({type(modules[node.target]).__name__})"
        if node.op == "call_method":
            return f"method '.{node.target}()' at node '{node.name}'"
        target = getattr(node.target, "__name__", str(node.target))
        return f"{node.op} '{target}' at node '{node.name}'"

    def supported(self, node, modules):
        """Whether the node is something this converter maps."""
        if node.op in ("placeholder", "output"):
            return True
        if node.op == "get_attr":
            return False
        if node.op == "call_module":
            module = modules[node.target]
            return isinstance(module, (nn.Conv2d, nn.BatchNorm1d, nn.BatchNorm2d, nn.Linear, nn.MaxPool2d, nn.AvgPool2d,
                                       nn.AdaptiveAvgPool2d, nn.AdaptiveMaxPool2d, nn.ZeroPad2d, nn.ConstantPad2d,
                                       nn.ReflectionPad2d, nn.ReplicationPad2d,
                                       nn.Flatten, nn.Softmax, nn.LogSoftmax, nn.PReLU, *_IDENTITY_MODULES,
                                       nn.Conv1d, nn.MaxPool1d, nn.AvgPool1d, nn.ChannelShuffle, nn.PixelShuffle,
                                       nn.PixelUnshuffle,
                                       *_ACTIVATION_MODULES, *_LAYER_MODULES))
        target = node.target
        return (_activation_function(node) is not None or target in _IDENTITY_FUNCTIONS or target in _FLATTEN_TARGETS
                or _is_inference_stochastic_depth(node)
                or target in _SCALAR_TARGETS or target in _ADD_TARGETS or target in _SCALE_TARGETS
                or target in (torch.cat, F.avg_pool2d, F.max_pool2d, F.adaptive_avg_pool2d, F.adaptive_max_pool2d,
                              F.pad, F.softmax, torch.softmax, "softmax", F.log_softmax, torch.log_softmax,
                              "log_softmax", torch.mean, "mean", "contiguous", operator.getitem, F.interpolate,
                              torch.chunk, "chunk", torch.transpose, "transpose", operator.floordiv,
                              torch.permute, "permute")
                or (target is getattr and node.args[1:] == ("shape",)))

    def tensor(self, value, node):
        """`value` as a written tensor (pending flattens are written, pads are errors)."""
        if isinstance(value, _Tensor):
            return value
        if isinstance(value, _Flatten):
            return self.materialize(value, node)
        if isinstance(value, _Pad):
            # Zero padding not folded into a convolution: a Pad layer of its own (written once).
            if value.written is None:
                top, left, bottom, right = value.pads
                value.written = self.emit(self.function_name(value.node, "pad"), "Pad", [self.tensor(value.source, node)],
                                          value.node, pads=[top, left, bottom, right])
            return value.written
        raise ConversionError(f"node '{node.name}' uses a non-tensor value where a tensor is needed")

    def materialize(self, value, node):
        """A pending flatten written as a Flatten layer (once); other values as tensors."""
        if isinstance(value, _Flatten):
            if value.written is None:
                source = value.source
                name = self.writer.add_layer(self.unique(value.base_name), "Flatten", [source.name], order="chw")
                value.written = _Tensor(name, (source.shape[0], source.shape[1] * source.shape[2] * source.shape[3]))
            return value.written
        return self.tensor(value, node)

    def convert_module(self, node, module, values):
        """A call of a module: its layer (or a shared-parameter layer when the module is applied again)."""
        path = node.target.replace(".", "_")
        count = self.applications.get(node.target, 0) + 1
        self.applications[node.target] = count
        has_parameters = any(True for _ in module.parameters()) or isinstance(module, (nn.BatchNorm1d, nn.BatchNorm2d))
        source = values[node.args[0]]
        if isinstance(module, _IDENTITY_MODULES):
            return source
        if isinstance(module, (nn.ZeroPad2d, nn.ConstantPad2d, nn.ReflectionPad2d, nn.ReplicationPad2d)):
            mode = {nn.ReflectionPad2d: "reflect", nn.ReplicationPad2d: "edge"}.get(type(module), "constant")
            return self.pad_layer(self.unique(path), self.tensor(source, node), list(module.padding), mode,
                                  float(getattr(module, "value", 0.0)), node)
        if isinstance(module, nn.Flatten):
            if module.start_dim != 1 or module.end_dim not in (-1, len(node.args[0].meta["tensor_meta"].shape) - 1):
                raise ConversionError(f"module '{node.target}' flattens dims {module.start_dim}..{module.end_dim}; only 1..-1")
            return self.flatten(source, node, path)
        if count > 1:
            name = self.unique(f"{path}_{count}")
        else:
            name = self.unique(path)
        if count > 1 and has_parameters:
            first = path
            self.shared.add(first)
            kind = next(layer["type"] for layer in self.writer.layers if layer["name"] == first)
            inputs = [self.tensor(source, node)] if not isinstance(source, _Pad) else None
            if inputs is None:
                raise ConversionError(f"module '{node.target}' is applied twice, once after padding; not supported")
            result = self.emit(name, kind, inputs, node, sharesParametersWith=first)
            return result
        if isinstance(module, nn.Conv2d):
            return self.convolution(name, module, source, node)
        if isinstance(module, _LAYER_MODULES):
            return self.layer_module(name, module, self.tensor(source, node), node)
        if isinstance(module, nn.Conv1d):
            return self.convolution_1d(name, module, self.tensor(source, node), node)
        if isinstance(module, (nn.MaxPool1d, nn.AvgPool1d)):
            return self.pooling_1d(name, module, self.tensor(source, node), node)
        if isinstance(module, nn.ChannelShuffle):
            return self.emit(name, "ChannelShuffle", [self.tensor(source, node)], node, groups=int(module.groups))
        if isinstance(module, (nn.PixelShuffle, nn.PixelUnshuffle)):
            shuffle = isinstance(module, nn.PixelShuffle)
            factor = module.upscale_factor if shuffle else module.downscale_factor
            return self.emit(name, "DepthToSpace" if shuffle else "SpaceToDepth", [self.tensor(source, node)], node,
                             blockSize=int(factor), mode="CRD")
        if isinstance(module, (nn.BatchNorm1d, nn.BatchNorm2d)):
            return self.batch_norm(name, module, self.tensor(source, node), node)
        if isinstance(module, nn.Linear):
            return self.dense(name, module, source, node)
        if isinstance(module, nn.MaxPool2d):
            if module.return_indices:
                raise ConversionError(f"module '{node.target}' returns indices; not supported")
            return self.pooling(name, "MaxPooling", self.tensor(source, node), node, module.kernel_size, module.stride,
                                module.padding, module.dilation, module.ceil_mode)
        if isinstance(module, nn.AvgPool2d):
            if module.divisor_override is not None:
                raise ConversionError(f"module '{node.target}' has divisor_override; not supported")
            return self.pooling(name, "AveragePooling", self.tensor(source, node), node, module.kernel_size,
                                module.stride, module.padding, 1, module.ceil_mode, module.count_include_pad)
        if isinstance(module, (nn.AdaptiveAvgPool2d, nn.AdaptiveMaxPool2d)):
            return self.adaptive(name, isinstance(module, nn.AdaptiveAvgPool2d), self.tensor(source, node),
                                 module.output_size, node)
        if isinstance(module, (nn.Softmax, nn.LogSoftmax)):
            return self.softmax(name, "Softmax" if isinstance(module, nn.Softmax) else "LogSoftmax",
                                self.tensor(source, node), module.dim, node)
        if isinstance(module, nn.PReLU):
            tensor = self.tensor(source, node)
            channels = tensor.shape[1]
            slopes = module.weight.detach().reshape(-1)
            if slopes.numel() == 1:
                slopes = slopes.expand(channels)
            if slopes.numel() != channels:
                raise ConversionError(f"module '{node.target}' has {slopes.numel()} slopes for {channels} channels")
            self.add_tensor(f"{name}_slopes", slopes)
            return self.emit(name, "PReLU", [tensor], node)
        function = _ACTIVATION_MODULES[type(module)](module)
        return self.emit(name, "Activation", [self.tensor(source, node)], node, function=function)

    def convert_function(self, node, values):
        """A call of a function or method: its layer, or the value it passes on (identity, scalar, flatten, padding)."""
        target = node.target
        op = target if isinstance(target, str) else getattr(target, "__name__", "op")
        if target is getattr:  # x.shape: only its values (read from the traced shapes) are used
            return _Scalar()
        if target is operator.getitem and isinstance(values.get(node.args[0]), _Chunks):
            chunks = values[node.args[0]]
            start, end = chunks.ranges[node.args[1]]
            return self.emit(self.function_name(node, "slice"), "Slice", [chunks.source], node, axis=-1, start=start,
                             end=end)
        if target is operator.floordiv:  # arithmetic on sizes (x.size(1) // groups)
            if not all(isinstance(values.get(a), _Scalar) or isinstance(a, int) for a in node.args):
                raise ConversionError(f"floor division at node '{node.name}' is only supported between sizes")
            return _Scalar()
        if target in _SCALAR_TARGETS or target is operator.getitem:
            if target is operator.getitem and not isinstance(values.get(node.args[0]), _Scalar):
                raise ConversionError(f"indexing at node '{node.name}' is not supported")
            return _Scalar()
        first = node.args[0] if node.args else next(iter(node.kwargs.values()))
        if target in _IDENTITY_FUNCTIONS or target == "contiguous" or _is_inference_stochastic_depth(node):
            return values[first]
        function = _activation_function(node)
        if function is not None:
            return self.emit(self.function_name(node, op), "Activation", [self.tensor(values[first], node)], node,
                             function=function)
        if target in _FLATTEN_TARGETS:
            return self.flatten_function(node, values, op)
        if target in (torch.chunk, "chunk"):
            return self.chunk(node, values)
        if target in (torch.transpose, "transpose"):
            grouped = values[first]
            dims = sorted(d % 5 for d in (_argument(node, 1, "dim0"), _argument(node, 2, "dim1")))
            if not isinstance(grouped, _Grouped) or grouped.transposed or dims != [1, 2]:
                raise ConversionError(f"transpose at node '{node.name}' is only supported as the middle of a channel "
                                      "shuffle: view (N, g, C/g, H, W), transpose(1, 2), view (N, C, H, W)")
            return _Grouped(grouped.source, grouped.groups, transposed=True)
        if target is F.pad:
            mode = {"replicate": "edge"}.get(_argument(node, 2, "mode", "constant"), _argument(node, 2, "mode", "constant"))
            return self.pad_layer(self.function_name(node, "pad"), self.tensor(values[first], node),
                                  list(_argument(node, 1, "pad")), mode, float(_argument(node, 3, "value", None) or 0.0),
                                  node)
        if target is F.interpolate:
            return self.interpolate(node, self.tensor(values[first], node))
        if target in _ADD_TARGETS:
            return self.add(node, values, op)
        if target in _SCALE_TARGETS:
            return self.scale(node, values, op)
        if target is torch.cat:
            tensors = _argument(node, 0, "tensors")
            dim = _argument(node, 1, "dim", 0)
            rank = len(node.meta["tensor_meta"].shape)
            inputs = [self.tensor(values[t], node) for t in tensors]
            if len(inputs) == 1:
                return inputs[0]
            dim %= rank
            if dim == 0 or rank not in (2, 3, 4):
                raise ConversionError(f"torch.cat at node '{node.name}' joins dim {dim} of a {rank}-D tensor; "
                                      "the batch dim cannot be joined")
            if dim == 1:
                return self.emit(self.function_name(node, "cat"), "Concatenate", inputs, node)
            # PyTorch's dim d of (N, C, ...) is Anvil's channels-last axis _STANDARD[rank][d].
            return self.emit(self.function_name(node, "cat"), "Concatenate", inputs, node, axis=_STANDARD[rank][dim])
        source = self.tensor(values[first], node)
        if target in (F.avg_pool2d, F.max_pool2d):
            kernel = _argument(node, 1, "kernel_size")
            stride = _argument(node, 2, "stride", None) or kernel
            padding = _argument(node, 3, "padding", 0)
            if target is F.max_pool2d:
                dilation = _argument(node, 4, "dilation", 1)
                if _argument(node, 6, "return_indices", False):
                    raise ConversionError(f"max_pool2d at node '{node.name}' returns indices; not supported")
                return self.pooling(self.function_name(node, op), "MaxPooling", source, node, kernel, stride, padding,
                                    dilation, _argument(node, 5, "ceil_mode", False))
            if _argument(node, 6, "divisor_override", None) is not None:
                raise ConversionError(f"avg_pool2d at node '{node.name}' has divisor_override; not supported")
            return self.pooling(self.function_name(node, op), "AveragePooling", source, node, kernel, stride, padding,
                                1, _argument(node, 4, "ceil_mode", False), _argument(node, 5, "count_include_pad", True))
        if target in (F.adaptive_avg_pool2d, F.adaptive_max_pool2d):
            return self.adaptive(self.function_name(node, op), target is F.adaptive_avg_pool2d, source,
                                 _argument(node, 1, "output_size"), node)
        if target in (F.softmax, torch.softmax, "softmax", F.log_softmax, torch.log_softmax, "log_softmax"):
            kind = "Softmax" if target in (F.softmax, torch.softmax, "softmax") else "LogSoftmax"
            return self.softmax(self.function_name(node, op), kind, source, _argument(node, 1, "dim"), node)
        if target in (torch.permute, "permute"):
            dims = node.args[1:] if len(node.args) > 2 else _argument(node, 1, "dims")
            dims = [int(d) % len(source.shape) for d in dims]
            rank = len(source.shape)
            if rank not in (3, 4) or dims[0] != 0:
                raise ConversionError(f"permute at node '{node.name}' of a {rank}-D tensor by {dims}: only 3-D and 4-D "
                                      "tensors, batch dim first")
            # The result is held channels-last like any (N, C, ...) tensor: new Anvil axis j takes
            # PyTorch's new dim inv[j], which is old dim dims[inv[j]], at old Anvil axis standard[...].
            standard = _STANDARD[rank]
            inverse = [standard.index(j) for j in range(rank)]
            permutation = [standard[dims[inverse[j]]] for j in range(rank)]
            if permutation == list(range(rank)):
                return source
            return self.emit(self.function_name(node, "permute"), "Transpose", [source], node, permutation=permutation)
        if target in (torch.mean, "mean"):
            dims = _argument(node, 1, "dim")
            dims = sorted(d % 4 for d in (dims if isinstance(dims, (tuple, list)) else [dims]))
            if len(source.shape) != 4 or dims != [2, 3]:
                raise ConversionError(f"mean at node '{node.name}' must average dims (2, 3) of an NCHW tensor")
            return self.emit(self.function_name(node, "mean"), "GlobalAveragePooling", [source], node)
        raise ConversionError(f"unsupported {node.op} '{op}' at node '{node.name}'")

    # -- layers ---------------------------------------------------------------------------

    def pad(self, source, pads, node):
        """Zero padding waiting for the next convolution to fold it; negative padding is an error."""
        if min(pads) < 0:
            raise ConversionError(f"negative padding at node '{node.name}' is not supported")
        return _Pad(source, pads, node)

    def pad_layer(self, name, source, pad, mode, value, node):
        """F.pad / the padding modules: `pad` is PyTorch's (left, right[, top, bottom[, front, back]]).
        Zero padding of height and width waits to be folded into the next convolution; anything
        else is a Pad layer."""
        if len(pad) not in (2, 4, 6) or mode not in ("constant", "reflect", "edge"):
            raise ConversionError(f"padding at node '{node.name}' must pad 1 to 3 trailing dims in mode constant, "
                                  f"reflect or replicate (got {len(pad)} values, mode '{mode}')")
        left, right, top, bottom, front, back = (list(pad) + [0] * 6)[:6]
        if min(pad) < 0:
            raise ConversionError(f"negative padding at node '{node.name}' is not supported")
        if mode == "constant" and value == 0.0 and not front and not back:
            self.names.discard(name)
            return self.pad(source, (top, left, bottom, right), node)
        options = {"pads": [top, left, bottom, right], "mode": mode}
        if front or back:
            options["channelPads"] = [front, back]
        if mode == "constant":
            options["value"] = value
        return self.emit(name, "Pad", [source], node, **options)

    def upsample(self, name, source, node, size, scale_factor, mode, align_corners, antialias=False):
        """nn.Upsample / F.interpolate: Resize (nearest: asymmetric + floor as PyTorch; nearest-exact;
        bilinear and bicubic with align_corners or half-pixel centres; bilinear and bicubic with
        antialias: the filter widened by 1 / scale when downsampling, taps outside the image dropped
        and the rest renormalised, bicubic with a = -0.5, as PyTorch's antialiased kernels do)."""
        if len(source.shape) != 4:
            raise ConversionError(f"interpolation at node '{node.name}' needs an NCHW tensor")
        modes = {"nearest": ("nearest", "asymmetric"), "nearest-exact": ("nearest", "halfPixel"),
                 "bilinear": ("linear", "pytorchHalfPixel"), "bicubic": ("cubic", "halfPixel")}
        if mode not in modes:
            raise ConversionError(f"interpolate at node '{node.name}' is mode '{mode}'; supported: nearest, "
                                  "nearest-exact, bilinear, bicubic")
        kind, coordinates = modes[mode]
        if antialias and (kind == "nearest" or align_corners):
            raise ConversionError(f"interpolate at node '{node.name}': antialias needs mode bilinear or bicubic "
                                  "without align_corners")
        if align_corners and kind != "nearest":
            coordinates = "alignCorners"
        if antialias:
            coordinates = "halfPixel"  # PyTorch's antialiased kernels sample pixel centres, one output or many
        options = {}
        if size is not None or coordinates == "alignCorners":
            # align_corners maps corner to corner of the rounded output size (ONNX and Anvil's scale
            # form use the unrounded in × scale), so it is written as the traced output size.
            options["size"] = list(_pair(size)) if size is not None else [int(v) for v in node.meta["tensor_meta"].shape[2:]]
        elif scale_factor is not None:
            options["scale"] = [float(v) for v in (scale_factor if isinstance(scale_factor, (tuple, list))
                                                   else (scale_factor, scale_factor))]
        else:
            raise ConversionError(f"interpolation at node '{node.name}' has neither size nor scale_factor")
        options["coordinates"] = coordinates
        if kind != "linear":  # linear is Resize's default mode
            options["mode"] = kind
        if kind == "nearest":
            options["nearestRounding"] = "floor" if mode == "nearest" else "roundPreferCeil"
        if kind == "cubic":
            options["cubicCoefficient"] = -0.5 if antialias else -0.75
        if antialias:
            options["antialias"] = True
            options["excludeOutside"] = True
        return self.emit(name, "Resize", [source], node, **options)

    def layer_module(self, name, module, source, node):
        """ConvTranspose2d (ConvTranspose1d on (N, C, L) as height 1), Upsample*, InstanceNorm2d,
        GroupNorm, LocalResponseNorm and LPPool2d."""
        if isinstance(module, (nn.ConvTranspose2d, nn.ConvTranspose1d)):
            if module.padding_mode != "zeros" or len(node.args) > 1 or node.kwargs:
                raise ConversionError(f"module '{node.target}' needs zero padding and no output_size argument")
            one_d = isinstance(module, nn.ConvTranspose1d)
            # A 1-D one is a height-1 2-D one: weights [in][out/groups][k] are [in][out/groups][1][k].
            lead, zero = ([1], [0]) if one_d else ([], [])
            kernel, stride = lead + list(module.kernel_size), lead + list(module.stride)
            dilation, output_padding = lead + list(module.dilation), zero + list(module.output_padding)
            pad = (0, module.padding[0]) if one_d else _pair(module.padding)
            self.add_tensor(f"{name}_W", module.weight.unsqueeze(2) if one_d else module.weight)
            if module.bias is not None:
                self.add_tensor(f"{name}_b", module.bias)
            return self.emit(name, "TransposedConvolution", [source], node, kernel=kernel, channels=module.out_channels,
                             stride=stride, padding=[pad[0], pad[1], pad[0], pad[1]], outputPadding=output_padding,
                             dilation=dilation, groups=module.groups, bias=module.bias is not None)
        if isinstance(module, (nn.Upsample, nn.UpsamplingNearest2d, nn.UpsamplingBilinear2d)):
            align = True if isinstance(module, nn.UpsamplingBilinear2d) else module.align_corners
            return self.upsample(name, source, node, module.size, module.scale_factor, module.mode, align)
        if isinstance(module, nn.InstanceNorm2d):
            channels = source.shape[1]
            if module.track_running_stats and module.running_mean is not None:
                # Evaluation with running statistics: a batch normalisation.
                gamma = module.weight if module.affine else torch.ones(channels)
                beta = module.bias if module.affine else torch.zeros(channels)
                for suffix, values in (("gamma", gamma), ("beta", beta), ("mean", module.running_mean),
                                       ("variance", module.running_var)):
                    self.add_tensor(f"{name}_{suffix}", values)
                return self.emit(name, "BatchNormalization", [source], node, epsilon=float(module.eps))
            if module.affine:
                self.add_tensor(f"{name}_gamma", module.weight)
                self.add_tensor(f"{name}_beta", module.bias)
            return self.emit(name, "InstanceNormalization", [source], node, epsilon=float(module.eps),
                             affine=bool(module.affine))
        if isinstance(module, nn.GroupNorm):
            if module.affine:
                self.add_tensor(f"{name}_gamma", module.weight)
                self.add_tensor(f"{name}_beta", module.bias)
            return self.emit(name, "GroupNormalization", [source], node, groups=module.num_groups,
                             epsilon=float(module.eps), affine=bool(module.affine))
        if isinstance(module, nn.LocalResponseNorm):
            if module.size % 2 == 0:
                raise ConversionError(f"module '{node.target}' has an even size {module.size}: PyTorch centres its "
                                      "window differently from ONNX/Caffe LRN, which Anvil implements")
            return self.emit(name, "LocalResponseNormalization", [source], node, size=module.size,
                             alpha=float(module.alpha), beta=float(module.beta), bias=float(module.k))
        norm = float(module.norm_type)
        if module.ceil_mode:
            raise ConversionError(f"module '{node.target}' has ceil_mode: PyTorch rescales clipped windows")
        if norm != 2.0:
            raise ConversionError(f"module '{node.target}' has norm_type {norm}: PyTorch sums x^p (not |x|^p), "
                                  "which only equals Lp pooling for p = 2")
        kernel = _pair(module.kernel_size)
        stride = _pair(module.stride if module.stride is not None else module.kernel_size)
        return self.emit(name, "LpPooling", [source], node, p=2.0, kernel=list(kernel), stride=list(stride),
                         padding="valid", ceilMode=bool(module.ceil_mode))

    def convolution(self, name, module, source, node):
        """`Conv2d`: Convolution with explicit padding (a pending pad folded), or DepthwiseConvolution."""
        folded = (0, 0, 0, 0)
        if isinstance(source, _Pad):
            folded, source = source.pads, source.source
        return self.convolution_layer(name, module, source, node, tuple(module.kernel_size), tuple(module.stride),
                                      tuple(module.dilation), module.padding, folded)

    def convolution_1d(self, name, module, source, node):
        """`Conv1d` on (N, C, L): Convolution (DepthwiseConvolution) with a (1, k) window; its weights
        [out][in][k] are [out][in][1][k]."""
        padding = module.padding if isinstance(module.padding, str) else (0, module.padding[0])
        return self.convolution_layer(name, module, source, node, (1, *module.kernel_size), (1, *module.stride),
                                      (1, *module.dilation), padding)

    def convolution_layer(self, name, module, source, node, kernel, stride, dilation, padding, folded=(0, 0, 0, 0)):
        """A 2-D window of `module` (Conv2d, or Conv1d as height 1): Convolution with explicit pads, or
        DepthwiseConvolution when every group is one input channel. `padding` is PyTorch's ('valid',
        'same' or (h, w)); `folded` (top, left, bottom, right) are a pending pad's, added to it."""
        if module.padding_mode != "zeros":
            raise ConversionError(f"module '{node.target}' pads with mode '{module.padding_mode}'; only zeros")
        if isinstance(padding, str):
            if padding == "valid":
                pads = (0, 0, 0, 0)
            else:  # PyTorch 'same' (stride 1): the smaller half before
                total = [d * (k - 1) for d, k in zip(dilation, kernel)]
                pads = (total[0] // 2, total[1] // 2, total[0] - total[0] // 2, total[1] - total[1] // 2)
        else:
            pads = (padding[0], padding[1], padding[0], padding[1])
        pads = tuple(a + b for a, b in zip(pads, folded))
        source = self.tensor(source, node)
        inputs, outputs, groups = module.in_channels, module.out_channels, module.groups
        options = {"kernel": list(kernel), "stride": list(stride), "padding": list(pads), "dilation": list(dilation),
                   "bias": module.bias is not None}
        self.add_tensor(f"{name}_W", module.weight)
        if module.bias is not None:
            self.add_tensor(f"{name}_b", module.bias)
        if groups > 1 and groups == inputs and outputs % inputs == 0:
            return self.emit(name, "DepthwiseConvolution", [source], node, multiplier=outputs // inputs, **options)
        return self.emit(name, "Convolution", [source], node, channels=outputs, groups=groups, **options)

    def pooling_1d(self, name, module, source, node):
        """`MaxPool1d` / `AvgPool1d` on (N, C, L): pooling with a (1, k) window."""
        average = isinstance(module, nn.AvgPool1d)
        if not average and module.return_indices:
            raise ConversionError(f"module '{node.target}' returns indices; not supported")
        one = lambda v: int(v[0] if isinstance(v, (tuple, list)) else v)  # noqa: E731
        k = one(module.kernel_size)
        s = one(module.stride) if module.stride not in (None, ()) else k
        p = one(module.padding)
        options = {"kernel": [1, k], "stride": [1, s], "padding": [0, p, 0, p],
                   "dilation": [1, 1 if average else one(module.dilation)], "ceilMode": bool(module.ceil_mode)}
        if average:
            options["countIncludesPadding"] = bool(module.count_include_pad)
        return self.emit(name, "AveragePooling" if average else "MaxPooling", [source], node, **options)

    def batch_norm(self, name, module, source, node):
        """`BatchNorm1d/2d` with running statistics: BatchNormalization (γ = 1, β = 0 when not affine)."""
        if module.running_mean is None or module.running_var is None:
            raise ConversionError(f"module '{node.target}' does not track running statistics; cannot run at inference")
        channels = module.num_features
        self.add_tensor(f"{name}_gamma", module.weight if module.affine else torch.ones(channels))
        self.add_tensor(f"{name}_beta", module.bias if module.affine else torch.zeros(channels))
        self.add_tensor(f"{name}_mean", module.running_mean)
        self.add_tensor(f"{name}_variance", module.running_var)
        return self.emit(name, "BatchNormalization", [source], node, epsilon=float(module.eps))

    def dense(self, name, module, source, node):
        """`Linear`: Dense, reading the image directly when a flatten precedes it."""
        if isinstance(source, _Flatten):
            source = source.source  # Dense flattens; the pytorch layout reads C,H,W-ordered weights
        else:
            source = self.tensor(source, node)
            if len(source.shape) != 2:
                raise ConversionError(f"Linear '{node.target}' is applied to a {len(source.shape)}-D tensor; "
                                      "only to (N, features) or a flattened feature map")
        self.add_tensor(f"{name}_W", module.weight)
        if module.bias is not None:
            self.add_tensor(f"{name}_b", module.bias)
        return self.emit(name, "Dense", [source], node, neurons=module.out_features, bias=module.bias is not None)

    def pooling(self, name, kind, source, node, kernel, stride, padding, dilation, ceil_mode, count_include_pad=None):
        """A max or average pooling layer of `kind` with explicit padding."""
        kernel, stride = _pair(kernel), _pair(stride if stride not in (None, ()) else kernel)
        padding, dilation = _pair(padding), _pair(dilation)
        options = {"kernel": list(kernel), "stride": list(stride),
                   "padding": [padding[0], padding[1], padding[0], padding[1]], "dilation": list(dilation),
                   "ceilMode": bool(ceil_mode)}
        if count_include_pad is not None:
            options["countIncludesPadding"] = bool(count_include_pad)
        return self.emit(name, kind, [source], node, **options)

    def adaptive(self, name, average, source, output_size, node):
        """Adaptive pooling to 1x1 (global), to the input size (nothing), or to a size that divides the input."""
        if len(source.shape) != 4:
            raise ConversionError(f"adaptive pooling at node '{node.name}' needs an NCHW tensor")
        height, width = source.shape[2], source.shape[3]
        size = _pair(output_size) if not isinstance(output_size, (tuple, list)) else tuple(output_size)
        size = (size[0] or height, size[1] or width)
        if size == (1, 1):
            return self.emit(name, "GlobalAveragePooling" if average else "GlobalMaxPooling", [source], node)
        if size == (height, width):
            self.names.discard(name)
            return source
        if height % size[0] or width % size[1]:
            raise ConversionError(f"adaptive pooling at node '{node.name}' maps {height}x{width} to {size[0]}x{size[1]}; "
                                  "only to 1x1 or to a size that divides the input")
        kernel = [height // size[0], width // size[1]]
        return self.emit(name, "AveragePooling" if average else "MaxPooling", [source], node,
                         kernel=kernel, stride=kernel, padding="valid")

    def interpolate(self, node, source):
        """F.interpolate: Resize to the traced output size (`size=`, which may be read from x.shape) or by
        the factors (`scale_factor=`, used as given in the coordinate mapping as PyTorch does); see `upsample`."""
        scale = _argument(node, 2, "scale_factor", None)
        if len(source.shape) != 4 or (scale is not None and _argument(node, 5, "recompute_scale_factor", None)):
            raise ConversionError(f"interpolate at node '{node.name}': only an NCHW tensor without a "
                                  "recomputed scale factor is supported")
        size = None if scale is not None else [int(v) for v in node.meta["tensor_meta"].shape[2:]]
        return self.upsample(self.function_name(node, "resize"), source, node, size, scale,
                             _argument(node, 3, "mode", "nearest"), _argument(node, 4, "align_corners", None),
                             antialias=bool(_argument(node, 6, "antialias", False)))

    def softmax(self, name, kind, source, dim, node):
        """`kind` (Softmax or LogSoftmax) over dim 1, the channels; other dims are errors."""
        rank = len(source.shape)
        if dim is None or dim not in (1, 1 - rank):
            raise ConversionError(f"{kind} at node '{node.name}' runs over dim {dim}; only over channels (dim 1)")
        return self.emit(name, kind, [source], node)

    def flatten(self, source, node, base_name):
        """A flatten of `source` to (N, -1): pending (dropped before Linear) for an image, nothing for a vector."""
        if isinstance(source, (_Flatten, _Pad, _Scalar)):
            return source if isinstance(source, _Flatten) else self.tensor(source, node)
        if len(source.shape) == 2:
            return source
        if not source.spatial:  # N x C x 1 x 1: Anvil's 1 x 1 x C is already flat
            return _Tensor(source.name, (source.shape[0], source.shape[1]))
        return _Flatten(source, base_name)

    def chunk(self, node, values):
        """`x.chunk(n, dim=1)`: parts of ceil(C / n) channels (the last may be smaller), as PyTorch splits."""
        source = self.tensor(values[node.args[0]], node)
        parts, dim = _argument(node, 1, "chunks"), _argument(node, 2, "dim", 0)
        if len(source.shape) != 4 or dim not in (1, -3):
            raise ConversionError(f"chunk at node '{node.name}' splits dim {dim}; only the channels of an NCHW tensor")
        channels = source.shape[1]
        size = -(-channels // parts)
        return _Chunks(source, [(start, min(start + size, channels)) for start in range(0, channels, size)])

    def flatten_function(self, node, values, op):
        """torch.flatten / view / reshape, which must flatten to (N, -1), or view a channel shuffle's groups."""
        first = node.args[0]
        source = values[first]
        shape = node.meta["tensor_meta"].shape
        input_shape = first.meta["tensor_meta"].shape
        if (len(shape) == 5 and len(input_shape) == 4 and isinstance(source, _Tensor) and shape[0] == input_shape[0]
                and shape[1] * shape[2] == input_shape[1] and tuple(shape[3:]) == tuple(input_shape[2:])):
            return _Grouped(source, int(shape[1]))
        if isinstance(source, _Grouped):
            if not source.transposed or tuple(shape) != tuple(source.source.shape):
                raise ConversionError(f"{op} at node '{node.name}' reshapes grouped channels other than as a "
                                      "channel shuffle (view (N, g, C/g, H, W), transpose(1, 2), view (N, C, H, W))")
            return self.emit(self.function_name(node, "shuffle"), "ChannelShuffle", [source.source], node,
                             groups=source.groups)
        if len(shape) != 2 or shape[0] != input_shape[0]:
            raise ConversionError(f"{op} at node '{node.name}' gives shape {tuple(shape)}; only flattening to (N, -1)")
        scope = self.scope(node)
        return self.flatten(source, node, f"{scope}_flatten" if scope else "flatten")

    def add(self, node, values, op):
        """torch.add / + / +=: Add of two tensors of one shape, or a linear activation with a number."""
        a, b = node.args[0], node.args[1] if len(node.args) > 1 else node.kwargs.get("other")
        alpha = node.kwargs.get("alpha", 1)
        if isinstance(a, torch.fx.Node) and isinstance(b, torch.fx.Node):
            if alpha != 1:
                raise ConversionError(f"add at node '{node.name}' has alpha {alpha}; only 1")
            x, y = self.tensor(values[a], node), self.tensor(values[b], node)
            if x.shape != y.shape:
                return self.elementwise(node, values, op, "add")
            return self.emit(self.function_name(node, op), "Add", [x, y], node)
        return self.scale(node, values, op)

    def scale(self, node, values, op):
        """Arithmetic between a tensor and a number (+, -, *, /): a linear activation a·x + b."""
        a, b = node.args[0], node.args[1] if len(node.args) > 1 else node.kwargs.get("other")
        tensor_first = isinstance(a, torch.fx.Node)
        tensor, number = (a, b) if tensor_first else (b, a)
        if isinstance(a, torch.fx.Node) and isinstance(b, torch.fx.Node):
            operation = {operator.sub: "subtract", torch.sub: "subtract", "sub": "subtract", operator.truediv: "divide",
                         torch.div: "divide", "div": "divide"}.get(node.target, "multiply")
            return self.elementwise(node, values, op, operation)
        if not isinstance(tensor, torch.fx.Node) or not isinstance(number, (int, float)) or isinstance(number, bool):
            raise ConversionError(f"{op} at node '{node.name}' combines two tensors or non-numbers; "
                                  "only tensor + tensor (same shape) and tensor with a number are supported")
        kind = {operator.add: "add", operator.iadd: "add", torch.add: "add", "add": "add", "add_": "add",
                operator.sub: "sub", torch.sub: "sub", "sub": "sub", operator.truediv: "div", torch.div: "div",
                "div": "div"}.get(node.target, "mul")
        number = float(number)
        if kind == "add":
            a_, b_ = 1.0, number * float(node.kwargs.get("alpha", 1))
        elif kind == "sub":
            a_, b_ = (1.0, -number) if tensor_first else (-1.0, number)
        elif kind == "div":
            if not tensor_first:
                raise ConversionError(f"division of a number by a tensor at node '{node.name}' is not supported")
            a_, b_ = 1.0 / number, 0.0
        else:
            a_, b_ = number, 0.0
        return self.emit(self.function_name(node, kind), "Activation", [self.tensor(values[tensor], node)], node,
                         function={"type": "linear", "a": a_, "b": b_})

    @staticmethod
    def _anvil_shape(shape):
        """A PyTorch shape (N, C, H, W) or (N, F) as Anvil's (h, w, c)."""
        return (shape[2], shape[3], shape[1]) if len(shape) == 4 else (1, 1, shape[1])

    def elementwise(self, node, values, op, operation):
        """Two tensors combined with broadcasting (x * gate, x - y, x / y, x + y of other shapes): Elementwise."""
        a, b = node.args[0], node.args[1] if len(node.args) > 1 else node.kwargs.get("other")
        if node.kwargs.get("alpha", 1) != 1:
            raise ConversionError(f"{op} at node '{node.name}' has alpha {node.kwargs['alpha']}; only 1")
        x, y = self.tensor(values[a], node), self.tensor(values[b], node)
        if len(x.shape) != len(y.shape) or x.shape[0] != y.shape[0]:
            raise ConversionError(f"{op} at node '{node.name}' broadcasts {tuple(x.shape)} and {tuple(y.shape)}; "
                                  "Anvil broadcasts tensors of one rank and batch")
        for p, q in zip(self._anvil_shape(x.shape), self._anvil_shape(y.shape)):
            if p != q and p != 1 and q != 1:
                raise ConversionError(f"{op} at node '{node.name}': shapes {tuple(x.shape)} and {tuple(y.shape)} "
                                      "do not broadcast (each axis equal or 1)")
        return self.emit(self.function_name(node, op), "Elementwise", [x, y], node, operation=operation)

    # -- finishing ------------------------------------------------------------------------

    def fuse_activations(self, outputs):
        """Writes an activation as the `activation` of the convolution, Dense or Add before
        it when it is that layer's only consumer (what Anvil would fuse at compile time)."""
        fusable = {"Convolution", "DepthwiseConvolution", "PointwiseConvolution", "Dense", "Add", "Elementwise",
                   "TransposedConvolution"}
        output_names = {t.name for t in outputs}
        layers = self.writer.layers
        by_name = {layer["name"]: layer for layer in layers}
        consumers = {}
        for layer in layers:
            for source in layer["inputs"]:
                consumers[source] = consumers.get(source, 0) + 1
        sharing = {layer["sharesParametersWith"] for layer in layers if "sharesParametersWith" in layer}
        renamed, kept = {}, []
        for layer in layers:
            layer["inputs"] = [renamed.get(s, s) for s in layer["inputs"]]
            producer = by_name.get(layer["inputs"][0]) if layer["type"] == "Activation" else None
            if (producer is not None and producer["type"] in fusable and producer.get("activation", "none") == "none"
                    and consumers.get(producer["name"]) == 1 and producer["name"] not in output_names
                    and producer["name"] not in sharing and "sharesParametersWith" not in producer):
                producer["activation"] = layer["function"]
                renamed[layer["name"]] = producer["name"]
                continue
            kept.append(layer)
        self.writer.layers = kept
        for tensor in outputs:
            tensor.name = renamed.get(tensor.name, tensor.name)

def _pair(value):
    """An int or a sequence as a (height, width) pair of ints."""
    if isinstance(value, (tuple, list)):
        return (int(value[0]), int(value[1])) if len(value) == 2 else (int(value[0]), int(value[0]))
    return int(value), int(value)


def convert(module, input_shape, out_dir, name=None, softmax=False, open_size=False):
    """Converts `module` for inputs of `input_shape` (height, width, channels) into
    `out_dir/model.json` and `out_dir/weights.bin`; returns the ModelWriter.

    With `open_size`, the input's height and width are written as open (null: any size at
    predict): the module is traced at `input_shape` and at twice its height and width, and
    every layer and parameter tensor must come out the same (an adaptive pooling to a fixed
    grid, or a Linear after a flatten of the image, does not: an error naming them)."""
    converter = Converter(module, input_shape, name=name)
    writer = converter.convert()
    if open_size:
        height, width, channels = input_shape
        try:
            other = Converter(module, (2 * height, 2 * width, channels), name=name).convert()
        except ConversionError as error:
            raise ConversionError(f"the model cannot take an open input size: at {2 * height}x{2 * width}: {error}; "
                                  "convert at a fixed --input-size") from error
        differing = [a["name"] for a, b in zip(writer.layers, other.layers) if a != b]
        differing += [key for key in writer.tensors
                      if key not in other.tensors or np.shape(writer.tensors[key]) != np.shape(other.tensors[key])]
        if differing or len(writer.layers) != len(other.layers):
            listed = ", ".join(f"'{n}'" for n in differing[:5]) or "the layer list"
            raise ConversionError(f"the model cannot take an open input size: {listed} depend(s) on the input size "
                                  f"(converted at {height}x{width} and {2 * height}x{2 * width}); convert at a fixed --input-size")
        writer.inputs[0]["shape"] = [None, None, int(channels)]
    if softmax:
        if len(writer.outputs) != 1:
            raise ConversionError("--softmax needs a single-output model")
        name = writer.add_layer(converter.unique("softmax"), "Softmax", writer.outputs)
        writer.set_outputs([name])
    writer.write(out_dir, json_style="layer_lines")
    return writer


def _final_classes(state):
    """The number of classes of a zoo network's state_dict (its last layer's rows), or None."""
    for key in ("fc.weight", "classifier.6.weight", "classifier.1.weight", "conv_preds.weight"):
        if key in state:
            return int(state[key].shape[0])
    return None


def load_module(parser, args):
    """The module and input shape (height, width, channels) the command line names."""
    if args.torchvision:
        state = None
        if args.weights:
            state = torch.load(args.weights, map_location="cpu", weights_only=True)
            state = state.get("state_dict", state) if isinstance(state, dict) else state
            state = {k.removeprefix("module."): v for k, v in state.items() if not k.startswith("AuxLogits.")}
        classes = args.classes or (state and _final_classes(state)) or 1000
        module = build_network(args.torchvision, classes=classes, width=args.width, input_size=args.input_size)
        if state is not None:
            module.load_state_dict(state, strict=True)
        size = args.input_size or DEFAULT_INPUT_SIZE[args.torchvision]
        return module, (size, size, 3)
    if not args.input_size:
        parser.error("--model needs --input-size")
    try:
        import_torchvision()  # so that pickled torchvision models find their classes
    except ImportError:
        pass
    module = torch.load(args.model, map_location="cpu", weights_only=False)
    return module, (args.input_size, args.input_size, args.channels)


def main(argv=None):
    """The `convert_pytorch` command line; returns the exit status."""
    parser = cli.parser_for("pytorch", __doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--torchvision", choices=ZOO, help="a zoo network (torchvision's definition where it has one)")
    source.add_argument("--model", help="a whole model saved with torch.save(model) (unpickled: trust the file)")
    parser.add_argument("--weights", help="a state_dict (.pth) for --torchvision; random weights otherwise")
    parser.add_argument("--classes", type=int, help="output classes (default: from --weights, else 1000)")
    parser.add_argument("--width", type=float, default=1.0, help="width factor for reduced variants (alpha for MobileNet)")
    parser.add_argument("--input-size", type=int, help="input height and width (default: the network's)")
    parser.add_argument("--channels", type=int, default=3, help="input channels for --model")
    parser.add_argument("--softmax", action="store_true", help="append a Softmax to the output")
    parser.add_argument("--open-size", action="store_true",
                        help="leave the input height and width open (any size at predict); checked by tracing at "
                             "--input-size and twice it")
    parser.add_argument("--out", help="output directory (model.json + weights.bin)")
    args = parser.parse_args(argv)
    if not args.self_test and not (args.torchvision or args.model):
        parser.error("one of the arguments --torchvision --model is required")
    cli.require(parser, args, ("out",), "an output directory (--out)")

    def run(args):
        """Loads the module the arguments name, converts it and reports its input."""
        module, shape = load_module(parser, args)
        name = args.name or args.torchvision
        writer = convert(module, shape, args.out, name=name, softmax=args.softmax, open_size=args.open_size)
        print(f"input {writer.inputs[0]['shape']}, pytorch layout")
        return writer

    status = cli.run("pytorch", parser, args, run)
    if status == 0 and args.torchvision == "inception_v3" and args.weights:
        print("note: torchvision's pretrained Inception-v3 expects transform_input=True; feed this model images "
              "normalised with mean 0.5 and std 0.5 per channel instead")
    return status


if __name__ == "__main__":
    sys.exit(main())
