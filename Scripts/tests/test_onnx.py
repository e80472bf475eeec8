"""Tests of anvil_convert.from_onnx: the operator mapping, the error messages, and the
committed onnx_helper fixture rebuilt byte for byte. Skipped when onnx is not installed."""

import numpy as np
import pytest

from helpers import committed_fixture, conversion_error, framework, same_files

onnx = framework("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from anvil_convert.from_onnx import OnnxConverter, convert_file  # noqa: E402

RNG = np.random.default_rng(0)


def model(nodes, initializers=(), input_shape=(1, 3, 8, 8), outputs=("y",), opset=17):
    """A one-input ONNX model of `nodes` with float initializers (name, values)."""
    graph = helper.make_graph(
        nodes, "t", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(input_shape))],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in initializers])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("label, onnx_model, fragments", [
    ("unsupported op", lambda: model([helper.make_node("LRN", ["x"], ["y"], size=3, name="norm")]),
     ("'norm'", "LRN", "not supported")),
    ("transpose", lambda: model([helper.make_node("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1], name="tr")]),
     ("'tr'", "Transpose")),
    ("nearest resize", lambda: model([helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest", name="rs")],
                                     [("s", [1, 1, 2, 2])]), ("'rs'", "Resize", "nearest")),
    ("softmax over width", lambda: model([helper.make_node("Softmax", ["x"], ["y"], axis=3, name="sm")]),
     ("'sm'", "Softmax", "axis 3")),
    ("old softmax on images", lambda: model([helper.make_node("Softmax", ["x"], ["y"], name="sm")], opset=11),
     ("'sm'", "opset 13")),
    ("gemm on an image", lambda: model([helper.make_node("Gemm", ["x", "w"], ["y"], transB=1, name="fc")],
                                       [("w", RNG.standard_normal((2, 192)))]), ("'fc'", "Gemm", "flatten")),
    ("matmul of two tensors", lambda: model([helper.make_node("Flatten", ["x"], ["f"]),
                                             helper.make_node("MatMul", ["f", "f"], ["y"], name="mm")]),
     ("'mm'", "MatMul", "constant weight")),
    ("mul of two tensors", lambda: model([helper.make_node("Mul", ["x", "x"], ["y"], name="sq")]), ("'sq'", "Mul")),
    ("unknown input channels", lambda: model([helper.make_node("Relu", ["x"], ["y"])], input_shape=("N", "C", "H", "W")),
     ("open channels", "--input-shape")),
    ("dense after flatten of an open size", lambda: model(
        [helper.make_node("Flatten", ["x"], ["f"]), helper.make_node("MatMul", ["f", "w"], ["y"], name="fc")],
        [("w", RNG.standard_normal((192, 2)))], input_shape=("N", 3, "H", "W")), ("'fc'", "open input", "--input-shape")),
    ("shape of an open size", lambda: model([helper.make_node("Shape", ["x"], ["s"], name="sh"),
                                             helper.make_node("Reshape", ["x", "s"], ["y"])], input_shape=(1, 3, "H", "W")),
     ("'sh'", "Shape", "--input-shape")),
    ("same_lower on an open size", lambda: model([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                                                                   auto_pad="SAME_LOWER", name="mp")],
                                                 input_shape=(1, 3, "H", "W")), ("'mp'", "SAME_LOWER", "--input-shape")),
    ("bad reshape", lambda: model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")], [("s", [1, 3, 64])]),
     ("'rs'", "Reshape", "not supported")),
    ("custom domain", lambda: model([helper.make_node("Foo", ["x"], ["y"], domain="com.example", name="foo")]),
     ("'foo'", "com.example")),
])
def test_errors_name_the_node(label, onnx_model, fragments):
    """Each unsupported construct is one ConversionError naming the node, its op and why."""
    conversion_error(lambda: OnnxConverter(onnx_model()).convert(), *fragments)


def test_conv_bn_relu_pool_flatten_matmul_add():
    """Flatten + MatMul + Add of a constant becomes one Dense (with bias) on the image."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("BatchNormalization", ["c", "g", "be", "m", "v"], ["n"], name="bn"),
             helper.make_node("Relu", ["n"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("MatMul", ["f", "mw"], ["mm"]),
             helper.make_node("Add", ["mm", "mb"], ["y"])]
    inits = [("w", RNG.standard_normal((4, 3, 3, 3))), ("b", np.zeros(4)), ("g", np.ones(4)), ("be", np.zeros(4)),
             ("m", np.zeros(4)), ("v", np.ones(4)), ("mw", RNG.standard_normal((64, 5))), ("mb", RNG.standard_normal(5))]
    writer = OnnxConverter(model(nodes, inits)).convert()
    types = [layer["type"] for layer in writer.layers]
    assert types == ["Convolution", "BatchNormalization", "Activation", "MaxPooling", "Dense"]
    dense = writer.layers[-1]
    assert dense["inputs"] == [writer.layers[-2]["name"]] and dense["bias"] and f"{dense['name']}_b" in writer.tensors
    assert writer.layout == "pytorch" and writer.inputs == [{"name": "x", "shape": [8, 8, 3]}]


def test_committed_onnx_helper_fixture_is_rebuilt_byte_for_byte(tmp_path):
    """converter_fixtures.onnx_helper_model with seed 1 converts to exactly the committed files."""
    import converter_fixtures
    path = tmp_path / "model.onnx"
    onnx.save(converter_fixtures.onnx_helper_model(np.random.default_rng(1)), str(path))
    convert_file(str(path), str(tmp_path / "out"), name="onnx_helper")
    same_files(str(tmp_path / "out"), committed_fixture("converters", "onnx_helper"))


def test_unreadable_file_is_a_conversion_error(tmp_path):
    """A file onnx cannot load is reported as a ConversionError naming the file."""
    path = tmp_path / "broken.onnx"
    path.write_bytes(b"\x08\x07garbage")
    conversion_error(lambda: convert_file(str(path), str(tmp_path / "out")), "broken.onnx")


def open_model():
    """A fully convolutional graph on an input whose height/width are symbolic (H) or missing (W)."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2], name="conv"),
             helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
             helper.make_node("Resize", ["p", "", "s"], ["r"], mode="linear", name="up"),
             helper.make_node("Conv", ["r", "w2"], ["y"], auto_pad="SAME_UPPER", kernel_shape=[3, 3], name="head")]
    onnx_model = model(nodes, [("w", RNG.standard_normal((4, 3, 3, 3))), ("s", [1, 1, 2, 2]),
                               ("w2", RNG.standard_normal((2, 4, 3, 3)))], input_shape=("N", 3, "H", "W"))
    onnx_model.graph.input[0].type.tensor_type.shape.dim[3].Clear()  # W: neither dim_value nor dim_param
    return onnx_model


def test_open_height_and_width_stay_open():
    """dim_param or a missing dim_value on H/W: the model file's input is [null, null, C], and the
    layers are written as for a fixed size (Anvil infers the sizes per prediction)."""
    writer = OnnxConverter(open_model()).convert()
    assert writer.inputs == [{"name": "x", "shape": [None, None, 3]}]
    assert [layer["type"] for layer in writer.layers] == ["Convolution", "MaxPooling", "Resize", "Convolution"]
    assert writer.layers[2]["scale"] == [2.0, 2.0] and writer.layers[3]["padding"] == "same"


def test_input_shape_still_fixes_open_dimensions():
    """--input-shape C,H,W gives the open sizes when passed."""
    writer = OnnxConverter(open_model(), input_shape=(3, 16, 12)).convert()
    assert writer.inputs == [{"name": "x", "shape": [16, 12, 3]}]
