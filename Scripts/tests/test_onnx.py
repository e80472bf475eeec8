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


# -- every blocker in one run, weights fed as graph inputs, what is written loads --------------

def test_every_blocker_is_listed_in_one_run():
    """Unsupported nodes do not stop the conversion: every one is named, each with node and op,
    and nodes after a blocker are still checked (here a Conv whose weights do not fit)."""
    nodes = [helper.make_node("LRN", ["x"], ["n"], size=3, name="norm"),
             helper.make_node("Conv", ["n", "w"], ["c"], name="conv"),
             helper.make_node("Foo", ["x"], ["f"], domain="com.example", name="foo"),
             helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Softmax", ["r"], ["s"], axis=3, name="sm")]
    onnx_model = model(nodes, [("w", RNG.standard_normal((4, 5, 3, 3)))], outputs=("c", "f", "s"))
    message = conversion_error(lambda: OnnxConverter(onnx_model).convert(),
                               "node 'norm' (LRN)", "node 'conv' (Conv)", "do not match 3 input channels",
                               "node 'foo' (Foo)", "com.example", "node 'sm' (Softmax)", "axis 3")
    from anvil_convert.writer import ConversionError
    with pytest.raises(ConversionError) as raised:
        OnnxConverter(onnx_model).convert()
    assert len(raised.value.blockers) == 4, raised.value.blockers
    assert message.splitlines()[0].startswith("4 blockers")
    assert all(line.startswith("  node '") for line in message.splitlines()[1:5])


def test_nodes_reading_only_blocked_values_are_counted_not_reported():
    """Without an inferable shape a blocked output cannot be checked further: the nodes reading
    it are counted, not reported as blockers of their own."""
    nodes = [helper.make_node("Foo", ["x"], ["f"], domain="com.example", name="foo"),
             helper.make_node("Relu", ["f"], ["r"], name="relu"),
             helper.make_node("Relu", ["r"], ["y"], name="relu2")]
    message = conversion_error(lambda: OnnxConverter(model(nodes)).convert(), "'foo'", "2 later nodes")
    assert "'relu'" not in message and "\n" not in message


def test_weight_fed_as_graph_input_is_named_as_such():
    """A Conv weight passed as a graph input (no initializer) is reported as a weight fed as an
    input, with the fix, not as an input of an unsupported rank."""
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["y"], name="conv")], "t",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3, 3, 3]),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    message = conversion_error(lambda: OnnxConverter(onnx_model).convert(),
                               "input 'w' is a weight fed as a graph input", "input 1 of node 'conv' (Conv)",
                               "input 'b' is a weight fed as a graph input", "initializer", "export_params")
    assert "Anvil takes NCHW images" not in message


def test_input_that_is_also_an_initializer_is_its_stored_weight(tmp_path):
    """An initializer also listed as a graph input (IR < 4, keep_initializers_as_inputs) is a weight
    with a default value: converted as the constant, as ONNX Runtime uses it when not fed."""
    w = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv")], "t",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(w, "w")])
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    writer = convert_file(str(path), str(tmp_path / "out"))
    assert [i["name"] for i in writer.inputs] == ["x"] and np.array_equal(writer.tensors["conv_W"], w.reshape(-1))


def test_one_input_concat_is_the_tensor_itself(tmp_path):
    """torch.cat of a one-element list (DenseNet's first dense layer) writes no Concatenate, and
    the written model loads (the load check of conftest.py runs it in Anvil)."""
    nodes = [helper.make_node("Concat", ["x"], ["c"], axis=1, name="cat"),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    path = tmp_path / "model.onnx"
    onnx.save(model(nodes), str(path))
    writer = convert_file(str(path), str(tmp_path / "out"))
    assert [layer["type"] for layer in writer.layers] == ["Activation"]
    assert writer.layers[0]["inputs"] == ["x"]


def test_command_line_lists_every_blocker(tmp_path):
    """convert_onnx.py prints the count, then one line per blocker, and exits with status 1."""
    from helpers import run_script
    nodes = [helper.make_node("LRN", ["x"], ["n"], size=3, name="norm"),
             helper.make_node("Transpose", ["n"], ["y"], perm=[0, 2, 3, 1], name="tr")]
    path = tmp_path / "model.onnx"
    onnx.save(model(nodes), str(path))
    completed = run_script("convert_onnx.py", str(path), str(tmp_path / "out"))
    assert completed.returncode == 1, completed
    lines = completed.stderr.strip().splitlines()
    assert lines[0] == "convert_onnx: error: 2 blockers (every one this run found):", lines
    assert lines[1].startswith("  node 'norm' (LRN)") and lines[2].startswith("  node 'tr' (Transpose)"), lines
    assert not (tmp_path / "out" / "model.json").exists()


@pytest.mark.unloadable
def test_load_check_catches_a_model_anvil_refuses(tmp_path):
    """The load check (conftest.load_problem) can fail: a Concatenate with one input is refused."""
    from conftest import anvil_executable, load_problem
    from anvil_convert.writer import ModelWriter
    anvil = anvil_executable()
    if anvil is None:
        pytest.skip("no anvil executable (swift build, or set ANVIL)")
    writer = ModelWriter("bad", layout="pytorch")
    writer.add_input("x", (4, 4, 2))
    writer.add_layer("cat", "Concatenate", ["x"])
    writer.set_outputs(["cat"])
    model_path, _ = writer.write(str(tmp_path / "bad"))
    problem = load_problem(anvil, model_path)
    assert problem is not None and "cat" in problem, problem
    good = ModelWriter("good", layout="pytorch")
    good.add_input("x", (4, 4, 2))
    good.add_layer("relu", "Activation", ["x"], function="relu")
    good.set_outputs(["relu"])
    assert load_problem(anvil, good.write(str(tmp_path / "good"))[0]) is None
