"""Tests of anvil_convert.from_caffe: the protobuf parsers, the layer mapping, the error
messages, and the committed Caffe fixtures rebuilt byte for byte. Needs numpy only."""

import os

import numpy as np
import pytest

from anvil_convert.from_caffe import (CaffeConverter, Enum, convert_files, encode_caffemodel, parse_caffemodel,
                                      parse_prototxt)
from anvil_convert.writer import ConversionError
from helpers import committed_fixture, conversion_error, run_anvil, same_files

HEAD = 'input: "data" input_dim: 1 input_dim: 3 input_dim: 8 input_dim: 8\n'
CONV = ('layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1" '
        'convolution_param { num_output: 4 kernel_size: 3 } }\n')


def conv_weights(rng=None):
    """Blobs for CONV: 4x3x3x3 weights and a zero bias."""
    rng = rng or np.random.default_rng(0)
    return {"conv1": [rng.standard_normal((4, 3, 3, 3)).astype(np.float32), np.zeros(4, np.float32)]}


def convert(prototxt, blobs, input_shape=None):
    """The ModelWriter for a prototxt text and blobs (no files)."""
    return CaffeConverter(parse_prototxt(prototxt), blobs, input_shape=input_shape).convert()


def test_text_format():
    """Comments, both quote styles, enums, repeated fields and bracketed lists."""
    parsed = parse_prototxt('name: "n" # comment\nlayer { name: \'a\' type: "Pooling" pooling_param '
                            '{ pool: MAX kernel_size: 3 stride: 2 } bottom: "x" top: "y" }\n'
                            'input_dim: 1 input_dim: 3 input_shape { dim: [1, 3, 4, 4] }')
    pooling = parsed.get("layer").message("pooling_param")
    assert parsed.get("name") == "n"
    assert pooling.get("pool") == "MAX" and isinstance(pooling.get("pool"), Enum)
    assert parsed.all("input_dim") == [1, 3] and parsed.get("input_shape").all("dim") == [1, 3, 4, 4]


@pytest.mark.parametrize("text, fragment", [("layer { name: 'a", "unterminated"),
                                             ("layer { name: 'a'", "missing '}'"),
                                             ("layer { : 3 }", "expected a field name")])
def test_text_format_errors(text, fragment):
    """Malformed prototxt names the file and line and what is wrong."""
    message = conversion_error(lambda: parse_prototxt(text, "t.prototxt"), fragment)
    assert message.startswith("t.prototxt:")


@pytest.mark.parametrize("v1", [False, True])
def test_wire_format_round_trip(v1):
    """encode_caffemodel then parse_caffemodel gives the blobs back (both layer encodings)."""
    array = np.random.default_rng(0).standard_normal((4, 3, 2, 2)).astype(np.float32)
    blobs = parse_caffemodel(encode_caffemodel([("conv", "Convolution", [array, array[:, 0, 0, 0]])], v1=v1))
    assert np.array_equal(blobs["conv"][0].reshape(array.shape), array) and blobs["conv"][1].size == 4


def test_truncated_caffemodel():
    """A caffemodel cut short is an error naming the caffemodel."""
    array = np.zeros((4, 3, 2, 2), np.float32)
    conversion_error(lambda: parse_caffemodel(encode_caffemodel([("conv", "Convolution", [array])])[:-3]),
                     "caffemodel")


@pytest.mark.parametrize("label, prototxt, blobs, fragments", [
    ("LRN within channel", HEAD + CONV + 'layer { name: "norm1" type: "LRN" bottom: "conv1" top: "norm1" '
     'lrn_param { norm_region: WITHIN_CHANNEL } }', conv_weights(), ("'norm1'", "LRN", "WITHIN_CHANNEL")),
    ("V1 LRN of even size", HEAD + 'layers { name: "norm1" type: LRN bottom: "data" top: "norm1" '
     'lrn_param { local_size: 4 } }', {}, ("'norm1'", "LRN", "odd")),
    ("deconvolution weights of the wrong size", HEAD + 'layer { name: "up" type: "Deconvolution" bottom: "data" top: "up" '
     'convolution_param { num_output: 2 kernel_size: 2 stride: 2 } }', {"up": [np.zeros((2, 3, 3, 3), np.float32),
                                                                            np.zeros(2, np.float32)]},
     ("'up'", "Deconvolution", "expected 24")),
    ("unknown type", HEAD + 'layer { name: "w" type: "Warp" bottom: "data" top: "w" }', {},
     ("'w'", "Warp", "not supported")),
    ("missing weights", HEAD + CONV, {}, ("'conv1'", "no weights")),
    ("wrong weight size", HEAD + CONV, {"conv1": [np.zeros((4, 3, 2, 2), np.float32), np.zeros(4, np.float32)]},
     ("'conv1'", "weight blob", "expected 108")),
    ("eltwise product with coefficients", HEAD + CONV + 'layer { name: "e" type: "Eltwise" bottom: "conv1" '
     'bottom: "conv1" top: "e" eltwise_param { operation: PROD coeff: 1 coeff: 2 } }', conv_weights(),
     ("'e'", "PROD", "SUM only")),
    ("eltwise coefficient count", HEAD + CONV + 'layer { name: "e" type: "Eltwise" bottom: "conv1" '
     'bottom: "conv1" top: "e" eltwise_param { coeff: 2 } }', conv_weights(), ("'e'", "Eltwise", "one per bottom")),
    ("eltwise of different shapes", HEAD + CONV + 'layer { name: "e" type: "Eltwise" bottom: "conv1" '
     'bottom: "data" top: "e" eltwise_param { operation: MAX } }', conv_weights(), ("'e'", "Eltwise", "one shape")),
    ("data layer without shape", 'layer { name: "d" type: "Data" top: "data" top: "label" }', {},
     ("'d'", "--input-shape")),
    ("dangling bottom", HEAD + 'layer { name: "r" type: "ReLU" bottom: "nope" top: "r" }', {}, ("'r'", "'nope'")),
])
def test_errors_name_the_layer(label, prototxt, blobs, fragments):
    """Each unsupported construct is one ConversionError naming the layer, its type and why."""
    conversion_error(lambda: convert(prototxt, blobs), *fragments)


def test_data_layer_in_place_layers_and_batch_norm_alone():
    """TRAIN-phase and loss layers are skipped, in-place layers chain, BatchNorm alone maps."""
    net = ('layer { name: "d" type: "Data" top: "data" top: "label" include { phase: TRAIN } }\n'
           'layer { name: "d2" type: "Data" top: "data" top: "label" include { phase: TEST } }\n' + CONV +
           'layer { name: "bn" type: "BatchNorm" bottom: "conv1" top: "conv1" }\n'
           'layer { name: "relu" type: "ReLU" bottom: "conv1" top: "conv1" }\n'
           'layer { name: "loss" type: "SoftmaxWithLoss" bottom: "conv1" bottom: "label" top: "loss" }\n')
    blobs = dict(conv_weights(), bn=[np.ones(4, np.float32), np.ones(4, np.float32), np.ones(1, np.float32)])
    writer = convert(net, blobs, input_shape=(3, 8, 8))
    assert [layer["type"] for layer in writer.layers] == ["Convolution", "BatchNormalization", "Activation"]
    assert writer.outputs == ["relu"] and writer.inputs == [{"name": "data", "shape": [8, 8, 3]}]


def test_batch_norm_and_scale_become_one_layer():
    """BatchNorm + Scale: one BatchNormalization, statistics divided by the scale factor."""
    net = (HEAD + CONV + 'layer { name: "bn" type: "BatchNorm" bottom: "conv1" top: "conv1" }\n'
           'layer { name: "sc" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }\n'
           'layer { name: "pool" type: "Pooling" bottom: "conv1" top: "pool" '
           'pooling_param { pool: AVE kernel_size: 3 stride: 2 } }\n')
    mean, variance = np.arange(4, dtype=np.float32), np.full(4, 4.0, np.float32)
    blobs = dict(conv_weights(), bn=[mean * 2, variance * 2, np.array([2.0], np.float32)],
                 sc=[np.full(4, 1.5, np.float32), np.full(4, 0.25, np.float32)])
    writer = convert(net, blobs)
    assert [layer["type"] for layer in writer.layers] == ["Convolution", "BatchNormalization", "AveragePooling"]
    pool = writer.layers[2]
    assert pool["ceilMode"] is True and pool["countIncludesPadding"] is True
    bn = writer.layers[1]["name"]
    assert np.array_equal(writer.tensors[f"{bn}_mean"], mean)
    assert np.array_equal(writer.tensors[f"{bn}_variance"], variance)
    assert writer.tensors[f"{bn}_gamma"].tolist() == [1.5] * 4 and writer.layout == "pytorch"


@pytest.mark.parametrize("name", ["caffe_resnet", "caffe_vgg16"])
def test_committed_fixture_is_rebuilt_byte_for_byte(tmp_path, name):
    """converter_fixtures' network with seed 1 (the seed the fixture was made with) converts to
    exactly the committed model.json and weights.bin, and its prototxt is the committed one."""
    import converter_fixtures
    spec = getattr(converter_fixtures, f"{name}_spec")()
    blobs = converter_fixtures.caffe_weights(spec, np.random.default_rng(1))
    prototxt, caffemodel = tmp_path / "deploy.prototxt", tmp_path / "weights.caffemodel"
    prototxt.write_text(converter_fixtures.caffe_prototxt(spec))
    types = {layer["name"]: layer["type"] for layer in spec["layers"]}
    caffemodel.write_bytes(encode_caffemodel([(k, types[k], v) for k, v in blobs.items()], v1=spec["v1"],
                                             name=spec["name"]))
    convert_files(str(prototxt), str(caffemodel), str(tmp_path / "out"), name=name)
    committed = committed_fixture("converters", name)
    same_files(str(tmp_path / "out"), committed)
    assert prototxt.read_text() == open(os.path.join(committed, "deploy.prototxt")).read()


def test_conversion_error_type_is_shared():
    """The converters raise the writer's ConversionError, one class for all front ends."""
    from anvil_convert import from_caffe
    assert from_caffe.ConversionError is ConversionError


def test_deconvolution_and_lrn():
    """Deconvolution becomes TransposedConvolution (weights as they are: [in][out/group][kh][kw]); LRN across
    channels becomes LocalResponseNormalization with Caffe's k as its bias."""
    prototxt = HEAD + ('layer { name: "up" type: "Deconvolution" bottom: "data" top: "up" convolution_param '
                       '{ num_output: 4 kernel_size: 4 stride: 2 pad: 1 group: 1 } }\n'
                       'layer { name: "norm" type: "LRN" bottom: "up" top: "norm" lrn_param '
                       '{ local_size: 3 alpha: 0.0001 beta: 0.75 k: 2 } }\n')
    weights = np.random.default_rng(1).standard_normal((3, 4, 4, 4)).astype(np.float32)
    writer = convert(prototxt, {"up": [weights, np.zeros(4, np.float32)]})
    up, norm = writer.layers
    assert up["type"] == "TransposedConvolution" and up["channels"] == 4 and up["padding"] == [1, 1, 1, 1]
    assert up["stride"] == [2, 2] and np.array_equal(writer.tensors["up_W"], weights.reshape(-1))
    assert norm["type"] == "LocalResponseNormalization" and norm["size"] == 3 and norm["bias"] == 2.0


def caffe_eltwise(operation, bottoms, coefficients=()):
    """Caffe's EltwiseLayer forward pass in float64: PROD multiplies the bottoms, MAX takes their
    maximum, SUM accumulates coeff_i * bottom_i into a zeroed top (coefficients default to 1)."""
    bottoms = [np.asarray(b, np.float64) for b in bottoms]
    if operation == "PROD":
        top = bottoms[0].copy()
        for b in bottoms[1:]:
            top = top * b
    elif operation == "MAX":
        top = bottoms[0].copy()
        for b in bottoms[1:]:
            top = np.where(b > top, b, top)
    else:
        coefficients = list(coefficients) or [1.0] * len(bottoms)
        top = np.zeros_like(bottoms[0])
        for c, b in zip(coefficients, bottoms):
            top = top + c * b
    return top


ELTWISE_NET = HEAD.replace("input_dim: 8 input_dim: 8", "input_dim: 4 input_dim: 5") + (
    'layer { name: "a" type: "Power" bottom: "data" top: "a" power_param { scale: -0.5 shift: 0.3 } }\n'
    'layer { name: "t" type: "TanH" bottom: "data" top: "t" }\n'
    'layer { name: "prod" type: "Eltwise" bottom: "data" bottom: "a" bottom: "t" top: "prod" '
    'eltwise_param { operation: PROD } }\n'
    'layer { name: "max" type: "Eltwise" bottom: "data" bottom: "a" bottom: "t" top: "max" '
    'eltwise_param { operation: MAX } }\n'
    'layer { name: "diff" type: "Eltwise" bottom: "a" bottom: "t" top: "diff" eltwise_param { coeff: 1 coeff: -1 } }\n'
    'layer { name: "rdiff" type: "Eltwise" bottom: "a" bottom: "t" top: "rdiff" eltwise_param { coeff: -1 coeff: 1 } }\n'
    'layer { name: "wsum" type: "Eltwise" bottom: "data" bottom: "a" bottom: "t" top: "wsum" '
    'eltwise_param { operation: SUM coeff: 0.5 coeff: -2 coeff: 1 } }\n')


def test_eltwise_prod_max_and_weighted_sums_match_caffe():
    """Eltwise PROD and MAX of three bottoms are one N-ary Elementwise; SUM with coefficients 1, −1
    (either order) an Elementwise subtract, other coefficients linear activations then Add. Run in
    Anvil, every output matches a float64 NumPy implementation of Caffe's Eltwise."""
    import tempfile
    writer = convert(ELTWISE_NET, {})
    by_name = {layer["name"]: layer for layer in writer.layers}
    assert by_name["prod"]["type"] == "Elementwise" and by_name["prod"]["operation"] == "multiply"
    assert len(by_name["prod"]["inputs"]) == 3 and by_name["max"]["operation"] == "maximum"
    assert by_name["diff"]["operation"] == "subtract" and by_name["diff"]["inputs"] == ["a", "t"]
    assert by_name["rdiff"]["operation"] == "subtract" and by_name["rdiff"]["inputs"] == ["t", "a"]
    assert by_name["wsum"]["type"] == "Add" and len(by_name["wsum"]["inputs"]) == 3
    assert by_name["wsum_coeff1"]["function"] == {"type": "linear", "a": -2.0, "b": 0.0}
    x = np.random.default_rng(3).uniform(-2, 2, (1, 3, 4, 5))
    a, t = -0.5 * x + 0.3, np.tanh(x)
    expected = {"prod": caffe_eltwise("PROD", [x, a, t]), "max": caffe_eltwise("MAX", [x, a, t]),
                "diff": caffe_eltwise("SUM", [a, t], [1, -1]), "rdiff": caffe_eltwise("SUM", [a, t], [-1, 1]),
                "wsum": caffe_eltwise("SUM", [x, a, t], [0.5, -2, 1])}
    with tempfile.TemporaryDirectory() as directory:
        writer.write(directory)
        got = run_anvil(os.path.join(directory, "model.json"), [x.transpose(0, 2, 3, 1)], outputs=len(writer.outputs))
    assert sorted(writer.outputs) == sorted(expected)
    for name, values in zip(writer.outputs, got):
        want = expected[name].transpose(0, 2, 3, 1).reshape(-1)
        np.testing.assert_allclose(values, want, rtol=1e-5, atol=1e-6, err_msg=name)
