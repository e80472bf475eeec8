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
    ("mul of shapes that do not broadcast", lambda: model([helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                                                           helper.make_node("Mul", ["x", "c"], ["y"], name="sq")],
                                                          [("w", RNG.standard_normal((2, 3, 1, 1)))]),
     ("'sq'", "Mul", "[1, 3, 8, 8] and [1, 2, 8, 8]", "broadcast")),
    ("a constant with a batch axis", lambda: model([helper.make_node("Add", ["x", "k"], ["y"], name="ad")],
                                                   [("k", np.ones((2, 3, 1, 1)))]), ("'ad'", "Add", "batch axis")),
    ("unknown input size", lambda: model([helper.make_node("Relu", ["x"], ["y"])], input_shape=("N", 3, "H", "W")),
     ("--input-shape",)),
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


# -- element-wise operators, unary activations and fused patterns (checked against ONNX Runtime) --

def _onnxruntime_output(onnx_model, x):
    """ONNX Runtime's output for input x (the test is skipped when onnxruntime is missing)."""
    ort = framework("onnxruntime")
    onnx_model = onnx.ModelProto.FromString(onnx_model.SerializeToString())
    onnx_model.ir_version = min(onnx_model.ir_version, 8)  # what every ONNX Runtime since 1.10 reads
    session = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x.astype(np.float32)})[0]


def _check_against_onnxruntime(onnx_model, x, tolerance=1e-5):
    """Converts `onnx_model`, runs the Anvil graph with the NumPy interpreter, compares with ONNX Runtime."""
    import anvil_numpy
    writer = OnnxConverter(onnx_model).convert()
    expected = _onnxruntime_output(onnx_model, x)
    actual = anvil_numpy.run(writer, x)
    assert actual.shape == expected.shape
    np.testing.assert_allclose(actual, expected, rtol=tolerance, atol=tolerance)
    return writer


def test_elementwise_broadcasting_between_tensors_and_constants():
    """SE gating, per-channel / per-pixel / scalar constants, constants first, N-ary Max/Min/Mean/Sum,
    Pow: Elementwise layers (scalars on one tensor: activations) that match ONNX Runtime."""
    c, h, w = 3, 4, 5
    N = helper.make_node
    nodes = [N("GlobalAveragePool", ["x"], ["g"]), N("Sigmoid", ["g"], ["s"]), N("Mul", ["s", "x"], ["se"], name="se"),
             N("Sub", ["se", "per_channel"], ["sub"], name="sub"),
             N("Div", ["sub", "per_pixel"], ["div"], name="div"),
             N("Max", ["div", "g", "x"], ["max"], name="max3"),
             N("Min", ["max", "half"], ["min"], name="min_scalar"),
             N("Sub", ["one", "min"], ["rsub"], name="one_minus"),
             N("Abs", ["x"], ["ax"]), N("Add", ["ax", "one"], ["pos"], name="plus_one"),
             N("Div", ["two", "pos"], ["rdiv"], name="two_over"),
             N("Pow", ["pos", "exponents"], ["pow"], name="pow"),
             N("Pow", ["x", "two"], ["square"], name="square"),
             N("Mean", ["rsub", "rdiv", "s"], ["mean"], name="mean3"),
             N("Sum", ["mean", "pow", "square", "row"], ["y"], name="sum4")]
    inits = [("per_channel", RNG.standard_normal((c, 1, 1))), ("per_pixel", RNG.uniform(0.5, 2, (1, 1, h, w))),
             ("half", [0.5]), ("one", 1.0), ("two", 2.0), ("exponents", RNG.uniform(-1, 2, (1, c, 1, 1))),
             ("row", RNG.standard_normal((1, 1, w)))]
    onnx_model = model(nodes, inits, input_shape=(2, c, h, w))
    writer = _check_against_onnxruntime(onnx_model, RNG.standard_normal((2, c, h, w)))
    by_name = {layer["name"]: layer for layer in writer.layers}
    assert by_name["sub"]["constant"] == [1, 1, c] and by_name["div"]["constant"] == [h, w, 1]
    assert by_name["se"]["type"] == "Elementwise" and "constant" not in by_name["se"]
    assert by_name["two_over"]["constantFirst"] is True and by_name["two_over"]["constant"] == [1, 1, 1]
    assert by_name["min_scalar"]["type"] == "Activation" and by_name["min_scalar"]["function"]["type"] == "clip"
    assert by_name["one_minus"]["function"] == {"type": "linear", "a": -1.0, "b": 1.0}
    assert by_name["max3"]["operation"] == "maximum" and len(by_name["max3"]["inputs"]) == 3
    assert by_name["square"]["operation"] == "multiply" and by_name["sum4"]["constant"] == [1, w, 1]


@pytest.mark.parametrize("op, attributes, opset", [
    ("Gelu", {}, 20), ("Gelu", {"approximate": "tanh"}, 20), ("Mish", {}, 18), ("Softplus", {}, 17),
    ("Softsign", {}, 17), ("Celu", {"alpha": 0.7}, 17), ("ThresholdedRelu", {"alpha": 0.4}, 17), ("Neg", {}, 17),
    ("Abs", {}, 17), ("Sqrt", {}, 17), ("Exp", {}, 17), ("Log", {}, 17), ("Reciprocal", {}, 17), ("Erf", {}, 17),
])
def test_unary_operators_are_activations(op, attributes, opset):
    """Each unary operator becomes one Activation whose function matches ONNX Runtime."""
    positive = op in ("Sqrt", "Log", "Reciprocal")
    x = RNG.uniform(0.2, 4, (1, 3, 4, 4)) if positive else RNG.uniform(-6, 6, (1, 3, 4, 4))
    onnx_model = model([helper.make_node(op, ["x"], ["y"], name="f", **attributes)], input_shape=(1, 3, 4, 4), opset=opset)
    writer = _check_against_onnxruntime(onnx_model, x)
    assert [layer["type"] for layer in writer.layers] == ["Activation"]


def _hard_swish_written_out(N):
    return [N("Add", ["x", "three"], ["a"]), N("Clip", ["a", "zero", "six"], ["r"]), N("Mul", ["x", "r"], ["m"]),
            N("Div", ["m", "six"], ["y"], name="hs")]


@pytest.mark.parametrize("label, build, function", [
    ("x * sigmoid(x)", lambda N: [N("Sigmoid", ["x"], ["s"]), N("Mul", ["x", "s"], ["y"], name="silu")], "silu"),
    ("sigmoid(x) * x", lambda N: [N("Sigmoid", ["x"], ["s"]), N("Mul", ["s", "x"], ["y"], name="silu")], "silu"),
    ("x * clip(x + 3, 0, 6) / 6", _hard_swish_written_out, "hardSwish"),
    ("x * (clip(x + 3, 0, 6) / 6)", lambda N: [N("Add", ["three", "x"], ["a"]), N("Clip", ["a", "zero", "six"], ["r"]),
                                               N("Div", ["r", "six"], ["d"]), N("Mul", ["x", "d"], ["y"])], "hardSwish"),
    ("x * HardSigmoid(x)", lambda N: [N("HardSigmoid", ["x"], ["h"], alpha=1 / 6, beta=0.5), N("Mul", ["x", "h"], ["y"])],
     "hardSwish"),
    ("x * 0.5 * (1 + erf(x / sqrt 2))", lambda N: [N("Div", ["x", "sqrt2"], ["d"]), N("Erf", ["d"], ["e"]),
                                                   N("Add", ["e", "one"], ["a"]), N("Mul", ["x", "a"], ["m"]),
                                                   N("Mul", ["m", "half"], ["y"])], "gelu"),
    ("0.5 * x * (1 + erf(x * 1/sqrt 2))", lambda N: [N("Mul", ["x", "inv_sqrt2"], ["d"]), N("Erf", ["d"], ["e"]),
                                                     N("Add", ["one", "e"], ["a"]), N("Mul", ["half", "x"], ["m"]),
                                                     N("Mul", ["m", "a"], ["y"])], "gelu"),
])
def test_written_out_activations_fuse_into_one(label, build, function):
    """SiLU, hard-swish and GELU written out as several nodes convert to one Activation."""
    inits = [("three", 3.0), ("zero", 0.0), ("six", 6.0), ("sqrt2", np.sqrt(2)), ("inv_sqrt2", 1 / np.sqrt(2)),
             ("one", 1.0), ("half", 0.5)]
    onnx_model = model(build(helper.make_node), inits, input_shape=(1, 3, 4, 4))
    writer = _check_against_onnxruntime(onnx_model, RNG.uniform(-6, 6, (1, 3, 4, 4)))
    assert [(layer["type"], layer["function"]) for layer in writer.layers] == [("Activation", function)], label


def test_conv_then_silu_pattern_becomes_one_activation_after_the_conv():
    """Conv → x·sigmoid(x): the convolution and one silu Activation (the engine fuses it into the conv)."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Sigmoid", ["c"], ["s"]),
             helper.make_node("Mul", ["c", "s"], ["y"])]
    writer = OnnxConverter(model(nodes, [("w", RNG.standard_normal((4, 3, 3, 3)))])).convert()
    assert [layer["type"] for layer in writer.layers] == ["Convolution", "Activation"]
    assert writer.layers[1]["function"] == "silu"
