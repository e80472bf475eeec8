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
           "mobilenet_v2": (0.1, 10, 96), "fcn_resnet50": (1 / 32, 21, 48)}


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
        """Transposed convolution and a sort: neither is an Anvil layer."""

        def __init__(self):
            """The unsupported module."""
            super().__init__()
            self.up = nn.ConvTranspose2d(3, 3, 2)

        def forward(self, x):
            """Two unsupported operations in a row."""
            return torch.sort(self.up(x), dim=1)[0]

    conversion_error(lambda: Converter(Odd(), (4, 4, 3)).convert(), "unsupported", "'up'", "ConvTranspose2d", "sort")


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


def test_bilinear_interpolate_becomes_resize():
    """F.interpolate (bilinear) to the input's size (read through x.shape) or by a factor is a
    Resize with PyTorch's coordinates; nearest is refused."""

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
    conversion_error(lambda: Converter(Upsample("nearest"), (6, 8, 3)).convert(), "interpolate", "'nearest'")
