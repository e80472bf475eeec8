"""Tests of anvil_convert.writer.ModelWriter, the one writer of the Anvil model format."""

import json
import os

import numpy as np
import pytest

from anvil_convert.writer import (JSON_STYLES, ConversionError, ModelWriter, activation_json, format_json,
                                  sanitize_name)


def small_writer():
    """A two-layer model with parameters: image -> conv1 (3x3, 2 channels) -> prob."""
    writer = ModelWriter("tiny", layout="pytorch")
    writer.add_input("image", (4, 4, 1))
    writer.add_layer("conv1", "Convolution", ["image"], kernel=(3, 3), channels=np.int64(2), padding="same",
                     activation=activation_json("leakyRelu", alpha=0.1), dilation=None)
    writer.add_tensor("conv1_W", np.arange(18, dtype=np.float64).reshape(2, 1, 3, 3))
    writer.add_tensor("conv1_b", [0.5, -0.5])
    writer.add_layer("prob", "Softmax", ["conv1"])
    writer.set_outputs(["prob"])
    return writer


def test_document_lists_tensors_in_order_with_byte_offsets():
    """The blob index gives each tensor its byte offset and float count, in insertion order."""
    root, blob = small_writer().document()
    assert root["format"] == "anvil.model" and root["version"] == 1 and root["name"] == "tiny"
    assert root["inputs"] == [{"name": "image", "shape": [4, 4, 1]}]
    assert root["outputs"] == ["prob"]
    source = root["parameters"]["source"]
    assert root["parameters"]["layout"] == "pytorch" and source["type"] == "blob" and source["path"] == "weights.bin"
    assert source["tensors"] == {"conv1_W": {"offset": 0, "count": 18}, "conv1_b": {"offset": 72, "count": 2}}
    values = np.frombuffer(blob, dtype="<f4")
    assert values.tolist() == list(range(18)) + [0.5, -0.5]


def test_layer_options_become_plain_json_and_none_is_left_out():
    """Tuples, numpy scalars and activation objects become JSON values; None options vanish."""
    conv = small_writer().layers[0]
    assert conv == {"name": "conv1", "type": "Convolution", "inputs": ["image"], "kernel": [3, 3], "channels": 2,
                    "padding": "same", "activation": {"type": "leakyRelu", "alpha": 0.1}}
    assert type(conv["channels"]) is int


def test_write_creates_model_and_blob(tmp_path):
    """write() makes the directory, model.json (ending in a newline) and weights.bin."""
    model_path, blob_path = small_writer().write(str(tmp_path / "out"))
    assert os.path.basename(model_path) == "model.json"
    with open(model_path) as handle:
        text = handle.read()
    assert text.endswith("}\n") and json.loads(text)["layers"][1]["type"] == "Softmax"
    assert os.path.getsize(blob_path) == 20 * 4


def test_model_without_parameters_has_no_blob(tmp_path):
    """A network without parameters has no `parameters` key and no weights.bin."""
    writer = ModelWriter("plain", layout="forge")
    writer.add_input("x", (2, 2, 3))
    writer.add_layer("pool", "GlobalAveragePooling", ["x"])
    writer.set_outputs(["pool"])
    root, blob = writer.document()
    assert "parameters" not in root and blob == b""
    writer.write(str(tmp_path))
    assert sorted(os.listdir(tmp_path)) == ["model.json"]


@pytest.mark.parametrize("style", JSON_STYLES)
def test_every_json_style_is_the_same_document(tmp_path, style):
    """The three JSON layouts differ in white space only."""
    writer = small_writer()
    writer.write(str(tmp_path), json_style=style)
    with open(tmp_path / "model.json") as handle:
        assert json.load(handle) == writer.document()[0]


def test_json_layouts():
    """nested keeps small deep objects on one line, expanded never does; arrays of scalars
    stay on one line in both."""
    value = {"a": [1, 2], "b": {"c": {"d": 1}}}
    assert format_json(value) == '{\n  "a": [1, 2],\n  "b": {\n    "c": {"d": 1}\n  }\n}'
    assert format_json(value, inline_objects=False) == \
        '{\n  "a": [1, 2],\n  "b": {\n    "c": {\n      "d": 1\n    }\n  }\n}'
    assert format_json({}) == "{}" and format_json([]) == "[]"


def test_layer_lines_style_has_one_line_per_layer_and_tensor(tmp_path):
    """layer_lines: each layer and each tensor entry on a line of its own."""
    small_writer().write(str(tmp_path), json_style="layer_lines")
    lines = (tmp_path / "model.json").read_text().splitlines()
    assert lines[6].startswith('    {"name": "conv1", "type": "Convolution"')
    assert lines[7] == '    {"name": "prob", "type": "Softmax", "inputs": ["conv1"]}'
    assert '    "conv1_b": {"offset": 72, "count": 2}' in lines


def test_unknown_layout_and_style_are_rejected(tmp_path):
    """A layout or JSON style outside the known ones is a programming error (ValueError)."""
    with pytest.raises(ValueError):
        ModelWriter("m", layout="caffe")
    with pytest.raises(ValueError):
        small_writer().write(str(tmp_path), json_style="pretty")


def test_graph_errors_name_the_culprit():
    """Duplicate names, unknown inputs and outputs, bad shapes and tensors are ConversionErrors."""
    writer = small_writer()
    cases = [
        (lambda: writer.add_input("image", (1, 1, 1)), "'image' is used twice"),
        (lambda: writer.add_input("flat", (1, 2, 3, 4)), "input 'flat' needs a positive [height, width, channels]"),
        (lambda: writer.add_input("empty", (0, 4, 1)), "input 'empty'"),
        (lambda: writer.add_input("open_channels", (None, None, None)), "input 'open_channels' needs a positive"),
        (lambda: writer.add_layer("conv1", "Add", ["image", "image"]), "'conv1' is used twice"),
        (lambda: writer.add_layer("late", "Softmax", ["later"]), "reads 'later', which has not been written yet"),
        (lambda: writer.add_tensor("conv1_W", [1.0]), "tensor 'conv1_W' is written twice"),
        (lambda: writer.add_tensor("bad_W", [1.0, float("nan")]), "tensor 'bad_W' has non-finite values"),
        (lambda: writer.set_outputs(["nothing"]), "output 'nothing' is neither an input nor a layer"),
    ]
    for call, fragment in cases:
        with pytest.raises(ConversionError, match=None) as raised:
            call()
        assert fragment in str(raised.value)
    with pytest.raises(ConversionError, match="no outputs"):
        ModelWriter("m", layout="forge").document()


def test_prune_drops_dead_layers_and_their_tensors():
    """Layers no output depends on go, with their tensors; an unused input is an error."""
    writer = small_writer()
    writer.add_layer("dead", "PReLU", ["conv1"])
    writer.add_tensor("dead_slopes", [0.1, 0.2])
    assert writer.prune() == ["dead"]
    assert [layer["name"] for layer in writer.layers] == ["conv1", "prob"] and "dead_slopes" not in writer.tensors
    writer.add_input("unused", (1, 1, 1))
    with pytest.raises(ConversionError, match="no output depends on input"):
        writer.prune()


def test_names():
    """sanitize_name keeps letters, digits, '_', '.', '-'; unique_name appends _2, _3, ..."""
    assert sanitize_name("/stem/Conv:0") == "stem_Conv_0"
    assert sanitize_name("///") == "layer" and sanitize_name(None, fallback="x") == "x"
    writer = small_writer()
    assert writer.unique_name("conv1") == "conv1_2" and writer.unique_name("new layer") == "new_layer"
    assert writer.has("image") and not writer.has("conv1_2")


def test_activation_json_and_summary():
    """activation_json: a bare name, or an object of float constants; summary counts types."""
    assert activation_json("relu") == "relu"
    assert activation_json("clip", min=0, max=6) == {"type": "clip", "min": 0.0, "max": 6.0}
    assert small_writer().summary() == "2 layers (1 Convolution, 1 Softmax); 20 parameters"
