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
REDUCED = {"resnet18": (1 / 8, 100, 72), "mobilenet_v1": (0.25, 100, 128), "squeezenet1_1": (0.25, 100, 100)}


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
