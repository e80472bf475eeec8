"""Tests of anvil_convert.from_pytorch and torch_zoo: the module mapping on small models, the
errors, and the committed zoo fixtures' model.json rebuilt byte for byte (the graph and the
tensor index do not depend on the weights). Skipped when torch is not installed."""

import json
import os

import pytest

from helpers import committed_fixture, conversion_error, framework

torch = framework("torch")
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from anvil_convert.from_pytorch import Converter, convert  # noqa: E402
from anvil_convert.torch_zoo import ZOO, build_network, scaled  # noqa: E402

# The reduced variants of Tests/AnvilTestSupport/Fixtures/zoo (Scripts/fixtures/zoo_reference.py).
REDUCED = {"resnet18": (1 / 8, 100, 72), "mobilenet_v1": (0.25, 100, 128), "squeezenet1_1": (0.25, 100, 100),
           "mobilenet_v2": (0.1, 10, 96), "fcn_resnet50": (1 / 32, 21, 48), "mobilenet_v3_small": (0.1, 10, 96),
           "shufflenet_v2_x1_0": (1 / 8, 10, 96), "efficientnet_b0": (0.1, 10, 96)}


class Small(nn.Module):
    """Padding before a convolution, PReLU, batch norm, a functional activation, scalar
    arithmetic, a depthwise convolution, pooling, a flatten into Linear and log-softmax."""

    def __init__(self):
        """The layers, with default (random) initialisation."""
        super().__init__()
        self.pad = nn.ZeroPad2d((1, 0, 1, 0))
        self.conv = nn.Conv2d(3, 6, 3, stride=2)
        self.prelu = nn.PReLU(6)
        self.bn = nn.BatchNorm2d(6)
        self.dw = nn.Conv2d(6, 12, 3, padding=1, groups=6)
        self.fc = nn.Linear(12 * 4 * 4, 5)
        self.fc2 = nn.Linear(5, 3)

    def forward(self, x):
        """(N, 3, 16, 16) -> (N, 3) log-probabilities."""
        x = self.prelu(self.conv(self.pad(x)))
        y = F.leaky_relu(self.bn(x), 0.1) * 0.5 + 1
        x = F.hardtanh(self.dw(y), -2, 3)
        x = torch.flatten(F.avg_pool2d(x, 2, ceil_mode=True), 1)
        return F.log_softmax(self.fc2(torch.relu(self.fc(x))), dim=1)


def layers_by_name(writer):
    """The writer's layers keyed by name."""
    return {layer["name"]: layer for layer in writer.layers}


def test_small_model_mapping():
    """Padding folds into the convolution, a flatten before Linear disappears, activations
    after Linear fuse, scalar arithmetic becomes a linear activation, groups = channels is
    depthwise."""
    torch.manual_seed(0)
    writer = Converter(Small(), (16, 16, 3)).convert()
    layers = layers_by_name(writer)
    assert layers["conv"]["padding"] == [1, 1, 0, 0] and layers["conv"]["type"] == "Convolution"
    assert layers["dw"]["type"] == "DepthwiseConvolution" and layers["dw"]["multiplier"] == 2
    assert layers["fc"]["inputs"] == ["avgpool"] and layers["fc"]["activation"] == "relu"
    assert not any(layer["type"] == "Flatten" for layer in writer.layers)
    linear = [layer for layer in writer.layers if layer.get("function", {}) == {"type": "linear", "a": 0.5, "b": 0.0}]
    assert len(linear) == 1
    assert writer.layers[-1]["type"] == "LogSoftmax" and writer.outputs == [writer.layers[-1]["name"]]
    assert writer.tensors["prelu_slopes"].size == 6 and writer.tensors["fc_W"].size == 5 * 192


def test_module_applied_twice_shares_parameters():
    """A module called twice becomes two layers; the second names the first in
    sharesParametersWith and brings no tensors of its own."""
    class Twice(nn.Module):
        """One convolution applied twice."""

        def __init__(self):
            """The shared convolution."""
            super().__init__()
            self.conv = nn.Conv2d(4, 4, 3, padding=1)

        def forward(self, x):
            """conv(conv(x))."""
            return self.conv(self.conv(x))

    writer = Converter(Twice(), (8, 8, 4)).convert()
    assert [layer["name"] for layer in writer.layers] == ["conv", "conv_2"]
    assert writer.layers[1]["sharesParametersWith"] == "conv"
    assert sorted(writer.tensors) == ["conv_W", "conv_b"]


def test_unsupported_nodes_are_all_named():
    """Every unsupported node is named in one error."""
    class Odd(nn.Module):
        """A 3-D transposed convolution and a sort: neither is an Anvil layer."""

        def __init__(self):
            """The unsupported module."""
            super().__init__()
            self.up = nn.ConvTranspose3d(3, 3, 2)

        def forward(self, x):
            """Two unsupported operations in a row."""
            return torch.sort(self.up(x.unsqueeze(2)), dim=1)[0]

    conversion_error(lambda: Converter(Odd(), (4, 4, 3)).convert(), "unsupported", "'up'", "ConvTranspose3d", "sort")


def test_convert_writes_layer_lines_and_softmax(tmp_path):
    """convert() appends the optional Softmax and writes one line per layer."""
    writer = convert(nn.Sequential(nn.Conv2d(3, 2, 1), nn.Flatten()), (2, 2, 3), str(tmp_path), name="m", softmax=True)
    text = (tmp_path / "model.json").read_text()
    assert json.loads(text) == writer.document()[0] and writer.outputs == ["softmax"]
    assert '    {"name": "softmax", "type": "Softmax", "inputs": ["1"]}' in text.splitlines()


def test_zoo_knows_its_networks():
    """build_network rejects unknown names; the width rule matches the Swift zoo's."""
    assert set(ZOO) >= set(REDUCED)
    assert scaled(64, 1 / 8) == 8 and scaled(3, 0.25) == 1
    conversion_error(lambda: build_network("alexnet"), "unknown zoo network 'alexnet'")


@pytest.mark.parametrize("name", sorted(REDUCED))
def test_committed_zoo_model_json_is_rebuilt_byte_for_byte(tmp_path, name):
    """The reduced zoo network converts to exactly the committed model.json."""
    width, classes, size = REDUCED[name]
    module = build_network(name, classes=classes, width=width, input_size=size, use_torchvision=False)
    convert(module, (size, size, 3), str(tmp_path), name=f"{name}-reduced")
    with open(os.path.join(committed_fixture("zoo", name), "model.json")) as handle:
        assert (tmp_path / "model.json").read_text() == handle.read()
    assert os.path.getsize(tmp_path / "weights.bin") == os.path.getsize(
        os.path.join(committed_fixture("zoo", name), "weights.bin"))


class AnySize(nn.Module):
    """Convolutions, pooling and a skip connection, then global pooling and a classifier: any size."""

    def __init__(self):
        """The layers, with default (random) initialisation."""
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        """(N, 3, H, W) -> (N, 4)."""
        x = F.max_pool2d(torch.relu(self.conv(x)), 2)
        x = torch.relu(self.conv2(x) + x)
        return self.fc(torch.flatten(self.pool(x), 1))


def test_open_size_leaves_height_and_width_open(tmp_path):
    """--open-size: traced at two sizes, the same layers; the input is written as [null, null, 3]."""
    writer = convert(AnySize(), (16, 12, 3), str(tmp_path), open_size=True)
    assert writer.inputs[0]["shape"] == [None, None, 3]
    with open(tmp_path / "model.json") as f:
        assert json.load(f)["inputs"][0]["shape"] == [None, None, 3]
    assert convert(AnySize(), (16, 12, 3), str(tmp_path)).inputs[0]["shape"] == [16, 12, 3]


def test_open_size_refuses_a_size_dependent_model(tmp_path):
    """A Linear after a flatten of the image depends on the size: an error naming the layer."""
    message = conversion_error(lambda: convert(Small(), (16, 16, 3), str(tmp_path), open_size=True),
                               "open input size", "fc")
    assert "--input-size" in message


class Decoder(nn.Module):
    """Every layer of the converter's `layers` part: transposed convolution, upsampling, the paddings, the normalisations, LRN, LPPool."""

    def __init__(self):
        """The layers."""
        super().__init__()
        self.up = nn.ConvTranspose2d(3, 6, 3, stride=2, padding=1, output_padding=1, groups=3)
        self.inorm = nn.InstanceNorm2d(6, affine=True)
        self.reflect = nn.ReflectionPad2d((1, 2, 0, 1))
        self.gnorm = nn.GroupNorm(2, 6)
        self.edge = nn.ReplicationPad2d(1)
        self.lrn = nn.LocalResponseNorm(3, alpha=0.01, beta=0.75, k=2.0)
        self.nearest = nn.Upsample(scale_factor=2, mode="nearest")
        self.zero = nn.ZeroPad2d((1, 0, 1, 0))
        self.pool = nn.LPPool2d(2, 2)
        self.plain = nn.InstanceNorm2d(6)
        self.bilinear = nn.UpsamplingBilinear2d(size=(9, 7))

    def forward(self, x):
        """(N, 3, H, W) -> (N, 6, 9, 7)."""
        x = torch.relu(self.up(x))
        x = self.gnorm(self.reflect(self.inorm(x)))
        x = self.lrn(self.edge(x))
        x = F.pad(self.nearest(x), (0, 1, 1, 0), mode="constant", value=0.5)
        x = self.pool(self.zero(x))
        x = F.interpolate(self.plain(x), scale_factor=0.5, mode="bicubic", align_corners=False)
        return self.bilinear(x)


def test_layers_part_mapping():
    """Each new module maps to its layer with its options; a zero pad before a non-convolution is a Pad layer."""
    torch.manual_seed(0)
    writer = Converter(Decoder(), (4, 5, 3)).convert()
    layers = layers_by_name(writer)
    up = layers["up"]
    assert up["type"] == "TransposedConvolution" and up["padding"] == [1, 1, 1, 1] and up["outputPadding"] == [1, 1]
    assert up["groups"] == 3 and up["channels"] == 6 and up["activation"] == "relu"
    assert writer.tensors["up_W"].size == 3 * 2 * 3 * 3
    assert layers["inorm"]["type"] == "InstanceNormalization" and layers["inorm"]["affine"]
    assert layers["plain"]["type"] == "InstanceNormalization" and not layers["plain"]["affine"]
    assert layers["reflect"]["type"] == "Pad" and layers["reflect"]["pads"] == [0, 1, 1, 2] and layers["reflect"]["mode"] == "reflect"
    assert layers["edge"]["mode"] == "edge" and layers["gnorm"]["groups"] == 2
    assert layers["lrn"]["size"] == 3 and layers["lrn"]["bias"] == 2.0
    assert layers["nearest"]["mode"] == "nearest" and layers["nearest"]["nearestRounding"] == "floor"
    pads = [layer for layer in writer.layers if layer["type"] == "Pad"]
    assert any(layer.get("value") == 0.5 for layer in pads) and any(layer["pads"] == [1, 1, 0, 0] and "value" not in layer for layer in pads)
    assert layers["pool"]["type"] == "LpPooling" and layers["pool"]["p"] == 2.0
    cubic = [layer for layer in writer.layers if layer.get("mode") == "cubic"]
    assert len(cubic) == 1 and cubic[0]["scale"] == [0.5, 0.5] and cubic[0]["coordinates"] == "halfPixel"
    assert layers["bilinear"]["coordinates"] == "alignCorners" and layers["bilinear"]["size"] == [9, 7]


def test_layers_part_refusals():
    """Even-sized LocalResponseNorm, LPPool2d with p != 2 and circular padding are refused with the reason."""
    conversion_error(lambda: Converter(nn.Sequential(nn.LocalResponseNorm(4)), (4, 4, 3)).convert(), "even size")
    conversion_error(lambda: Converter(nn.Sequential(nn.LPPool2d(3, 2)), (4, 4, 3)).convert(), "norm_type 3.0")
    conversion_error(lambda: Converter(nn.Sequential(nn.CircularPad2d(1)), (4, 4, 3)).convert(), "unsupported")


def test_bilinear_interpolate_becomes_resize():
    """F.interpolate (bilinear) to the input's size (read through x.shape) or by a factor is a
    Resize with PyTorch's coordinates; area is refused."""

    class Upsample(nn.Module):
        """A strided convolution, upsampled back to the input size and by 2 with corners aligned."""

        def __init__(self, mode="bilinear"):
            """One convolution; `mode` of the first interpolation."""
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, stride=2, padding=1)
            self.mode = mode

        def forward(self, x):
            """(N, 3, H, W) -> (N, 4, 2H, 2W)."""
            size = x.shape[-2:]
            x = F.interpolate(self.conv(x), size=size, mode=self.mode, align_corners=False if self.mode == "bilinear" else None)
            return F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)

    writer = Converter(Upsample(), (6, 8, 3)).convert()
    resizes = [layer for layer in writer.layers if layer["type"] == "Resize"]
    assert [(r["size"], r["coordinates"]) for r in resizes] == [([6, 8], "pytorchHalfPixel"), ([12, 16], "alignCorners")]
    conversion_error(lambda: Converter(Upsample("area"), (6, 8, 3)).convert(), "interpolate", "'area'")


class Activations(nn.Module):
    """Every newly mapped activation module and function, a squeeze-and-excitation gate (a
    tensor times a broadcast tensor) and a subtraction and division of two tensors."""

    def __init__(self):
        """The activation modules."""
        super().__init__()
        self.silu, self.gelu, self.gelu_tanh = nn.SiLU(), nn.GELU(), nn.GELU(approximate="tanh")
        self.mish, self.softplus, self.softsign, self.celu = nn.Mish(), nn.Softplus(), nn.Softsign(), nn.CELU(0.6)
        self.hardswish, self.hardsigmoid = nn.Hardswish(), nn.Hardsigmoid()
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        """A chain that keeps values in a range every function handles."""
        a = self.silu(x) + self.gelu(x) + self.gelu_tanh(x) + self.mish(x)
        b = self.softplus(a) - self.softsign(x) * self.celu(x)
        c = self.hardswish(b) / (1 + self.hardsigmoid(x))
        gate = torch.sigmoid(self.pool(c))
        d = c * gate
        return F.silu(d) + F.gelu(d, approximate="tanh") + F.mish(d) + F.softplus(d) + F.softsign(d) + F.celu(d)


def test_new_activations_and_broadcast_arithmetic_match_pytorch():
    """The activations map to their Anvil names, x * gate to Elementwise multiply, and the
    converted graph (run by the NumPy interpreter) gives PyTorch's output."""
    import anvil_numpy
    import numpy as np
    torch.manual_seed(0)
    module = Activations().eval()
    writer = Converter(module, (5, 6, 4)).convert()
    functions = {f if isinstance(f, str) else f["type"]
                 for f in (layer.get("function", layer.get("activation", "none")) for layer in writer.layers)}
    assert {"silu", "gelu", "geluTanh", "mish", "softplus", "softsign", "celu", "hardSwish", "hardSigmoid"} <= functions
    operations = [layer["operation"] for layer in writer.layers if layer["type"] == "Elementwise"]
    assert sorted(operations) == ["divide", "multiply", "multiply", "subtract"]
    x = torch.randn(2, 4, 5, 6) * 2
    with torch.no_grad():
        expected = module(x).numpy()
    np.testing.assert_allclose(anvil_numpy.run(writer, x.numpy()), expected, rtol=1e-5, atol=1e-5)


def test_softplus_with_beta_is_an_error():
    """Softplus(beta=2) has no Anvil activation: an error naming it."""
    conversion_error(lambda: Converter(nn.Sequential(nn.Softplus(beta=2)), (4, 4, 3)).convert(), "Softplus", "beta 2")


def test_channel_shuffle_and_chunk_need_their_whole_pattern():
    """A transpose outside a channel shuffle, or a chunk of another dim, is an error naming the node."""

    class Transposed(nn.Module):
        """A plain transpose of height and width."""

        def forward(self, x):
            """(N, C, H, W) -> (N, C, W, H)."""
            return x.transpose(2, 3)

    class Chunked(nn.Module):
        """A chunk along the height."""

        def forward(self, x):
            """The first half of the rows."""
            return x.chunk(2, dim=2)[0]

    conversion_error(lambda: Converter(Transposed(), (4, 4, 3)).convert(), "transpose", "channel shuffle")
    conversion_error(lambda: Converter(Chunked(), (4, 4, 3)).convert(), "chunk", "dim 2")
