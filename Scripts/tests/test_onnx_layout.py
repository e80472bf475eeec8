"""The ONNX converter's layout tracking (onnx_ops/layout.py): models built with onnx.helper,
converted, run by `anvil run` ($ANVIL, else the debug build in .build/) and compared with ONNX Runtime.
Skipped with the reason when onnx, onnxruntime or the anvil binary is missing."""

import numpy as np
import pytest

from helpers import framework, require_anvil, run_anvil

onnx = framework("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from anvil_convert.from_onnx import OnnxConverter, standard_perm  # noqa: E402

def build(nodes, initializers=(), input_shape=(1, 4, 6, 6), outputs=("y",), opset=17):
    """A one-input ONNX model of `nodes` with float32 initializers, or int64 ones for shapes."""
    inits = []
    for name, values in initializers:
        values = np.asarray(values)
        inits.append(numpy_helper.from_array(values.astype(np.int64 if values.dtype.kind == "i" else np.float32), name))
    graph = helper.make_graph(nodes, "t", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(input_shape))],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def run_both(tmp_path, model, seed=0):
    """(the converted layer types, ONNX Runtime's outputs, Anvil's outputs in ONNX's layout)."""
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install onnxruntime)")
    require_anvil()
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected = session.run(None, {"x": x})
    writer = OnnxConverter(model).convert()
    writer.write(str(tmp_path / "m"))
    outs = run_anvil(tmp_path / "m" / "model.json", [x.transpose(np.argsort(standard_perm(x.ndim)))], len(expected))
    actual = []
    for out, want in zip(outs, expected):
        perm = standard_perm(want.ndim)
        held = out.reshape([want.shape[i] for i in np.argsort(perm)])
        actual.append(np.transpose(held, perm))
    return [layer["type"] for layer in writer.layers], expected, actual


def assert_close(expected, actual):
    """Every output within 1e-4 of ONNX Runtime's range."""
    for want, got in zip(expected, actual):
        assert got.shape == want.shape
        scale = max(1.0, float(np.abs(want).max()))
        assert np.abs(got - want).max() <= 1e-4 * scale


RNG = np.random.default_rng(3)


def test_shufflenet_split_branch_concat_shuffle(tmp_path):
    """ShuffleNet v2's unit: Split on channels, a branch, Concat, Reshape-Transpose-Reshape → ChannelShuffle."""
    nodes = [helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1),
             helper.make_node("Conv", ["b", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Concat", ["a", "r"], ["cat"], axis=1),
             helper.make_node("Reshape", ["cat", "s5"], ["g"]),
             helper.make_node("Transpose", ["g"], ["t"], perm=[0, 2, 1, 3, 4]),
             helper.make_node("Reshape", ["t", "s4"], ["y"])]
    inits = [("sizes", np.array([2, 2])), ("w", RNG.standard_normal((2, 2, 3, 3))),
             ("s5", np.array([1, 2, 2, 6, 6])), ("s4", np.array([1, -1, 6, 6]))]
    types, expected, actual = run_both(tmp_path, build(nodes, inits))
    assert types == ["Slice", "Slice", "Convolution", "Activation", "Concatenate", "ChannelShuffle"]
    assert_close(expected, actual)


def test_convnext_channels_last_region_moves_no_data(tmp_path):
    """permute(0, 2, 3, 1) → Linear → Relu → Linear → permute(0, 3, 1, 2): pointwise layers, no Transpose."""
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
             helper.make_node("MatMul", ["t", "w1"], ["m1"]), helper.make_node("Add", ["m1", "b1"], ["a1"]),
             helper.make_node("Relu", ["a1"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["m2"]), helper.make_node("Add", ["b2", "m2"], ["a2"]),
             helper.make_node("Softmax", ["a2"], ["s"], axis=-1),
             helper.make_node("Transpose", ["s"], ["y"], perm=[0, 3, 1, 2])]
    inits = [("w1", RNG.standard_normal((4, 8))), ("b1", RNG.standard_normal(8)),
             ("w2", RNG.standard_normal((8, 5))), ("b2", RNG.standard_normal(5))]
    types, expected, actual = run_both(tmp_path, build(nodes, inits))
    assert types == ["PointwiseConvolution", "Activation", "PointwiseConvolution", "Softmax"]
    assert_close(expected, actual)


def test_add_after_matmul_is_a_bias_only_along_the_last_axis(tmp_path):
    """A MatMul on the last axis then an Add of a constant with as many values as the outputs:
    a [M] constant is the PointwiseConvolution's bias, an [M, 1] one (varying along the axis
    before) is not, and stays an element-wise add; both match ONNX Runtime."""
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["y"])]
    for bias, fused in ((RNG.standard_normal(6), True), (RNG.standard_normal((6, 1)), False)):
        types, expected, actual = run_both(tmp_path, build(nodes, [("w", RNG.standard_normal((6, 6))), ("b", bias)]))
        assert ("Elementwise" not in types) == fused, types
        assert_close(expected, actual)


@pytest.mark.parametrize("perm", [[0, 3, 2, 1], [0, 2, 3, 1], [0, 1, 2, 3]])
def test_permute_flatten_linear_is_one_dense(tmp_path, perm):
    """x.permute(...).flatten(1) → Linear: one Dense with reordered weights, no data moved."""
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=perm), helper.make_node("Flatten", ["t"], ["f"]),
             helper.make_node("Gemm", ["f", "w", "b"], ["y"], transB=1)]
    inits = [("w", RNG.standard_normal((3, 4 * 6 * 5))), ("b", RNG.standard_normal(3))]
    types, expected, actual = run_both(tmp_path, build(nodes, inits, input_shape=(1, 4, 6, 5)))
    assert types == ["Dense"]
    assert_close(expected, actual)


def test_slices_concat_and_blocks(tmp_path):
    """Slice with negative steps on H and W, Concat along H, DepthToSpace CRD then SpaceToDepth."""
    nodes = [helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["s"]),
             helper.make_node("Concat", ["s", "s"], ["c"], axis=2),
             helper.make_node("DepthToSpace", ["c"], ["d"], blocksize=2, mode="CRD"),
             helper.make_node("SpaceToDepth", ["d"], ["y"], blocksize=2)]
    inits = [("st", np.array([-1, 0])), ("en", np.array([-100, 5])), ("ax", np.array([3, 2])), ("sp", np.array([-2, 2]))]
    types, expected, actual = run_both(tmp_path, build(nodes, inits, input_shape=(1, 8, 6, 6)))
    assert types == ["Slice", "Slice", "Concatenate", "DepthToSpace", "SpaceToDepth"]
    assert_close(expected, actual)


def test_one_input_concat_writes_nothing(tmp_path):
    """DenseNet's torch.cat of a one-element list: no layer at all, and the file loads."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Concat", ["r"], ["y"], axis=1)]
    types, expected, actual = run_both(tmp_path, build(nodes))
    assert types == ["Activation"]
    assert_close(expected, actual)


def test_reshape_transpose_squeeze_unsqueeze_of_tensors(tmp_path):
    """Reshape to [N, C, H·W], Transpose to [N, H·W, C], Unsqueeze, Squeeze and back to NCHW."""
    nodes = [helper.make_node("Reshape", ["x", "s3"], ["r"]),
             helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
             helper.make_node("Unsqueeze", ["t", "ax"], ["u"]),
             helper.make_node("Squeeze", ["u", "ax"], ["q"]),
             helper.make_node("Relu", ["q"], ["y"])]
    inits = [("s3", np.array([0, 4, -1])), ("ax", np.array([2]))]
    types, expected, actual = run_both(tmp_path, build(nodes, inits))
    assert "Reshape" in types and expected[0].shape == (1, 36, 4)
    assert_close(expected, actual)


def test_one_dimensional_conv_and_pooling(tmp_path):
    """Conv1d, MaxPool1d, AvgPool1d with pads, GlobalAveragePool and Flatten → Gemm on [N, C, L]."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 2], strides=[2], dilations=[2]),
             helper.make_node("MaxPool", ["c"], ["m"], kernel_shape=[2], strides=[1]),
             helper.make_node("AveragePool", ["m"], ["a"], kernel_shape=[3], pads=[1, 1]),
             helper.make_node("GlobalAveragePool", ["a"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "fw"], ["y"], transB=1)]
    inits = [("w", RNG.standard_normal((5, 3, 3))), ("b", RNG.standard_normal(5)), ("fw", RNG.standard_normal((2, 5)))]
    types, expected, actual = run_both(tmp_path, build(nodes, inits, input_shape=(1, 3, 17)))
    assert types == ["Convolution", "MaxPooling", "AveragePooling", "GlobalAveragePooling", "Dense"]
    assert_close(expected, actual)


def test_one_dimensional_conv_transpose(tmp_path):
    """ConvTranspose1d on [N, C, L] (stride, pads, output_padding, groups) runs as a height-1
    transposed convolution and matches ONNX Runtime."""
    nodes = [helper.make_node("ConvTranspose", ["x", "w", "b"], ["t"], strides=[3], pads=[1, 2],
                              output_padding=[1], group=3),
             helper.make_node("ConvTranspose", ["t", "w2"], ["y"], strides=[2], dilations=[2])]
    inits = [("w", RNG.standard_normal((6, 2, 4))), ("b", RNG.standard_normal(6)), ("w2", RNG.standard_normal((6, 4, 3)))]
    types, expected, actual = run_both(tmp_path, build(nodes, inits, input_shape=(1, 6, 11)))
    assert types == ["TransposedConvolution", "TransposedConvolution"] and expected[0].shape == (1, 4, 67)
    assert_close(expected, actual)


def test_torchvision_shufflenet_v2_matches_onnx_runtime(tmp_path):
    """torchvision's ShuffleNet v2 (x0.5, seeded weights, 64×64) exported with opset 17 converts
    (channel shuffles, channel splits, x.mean([2, 3])) and `anvil run` matches ONNX Runtime."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    from anvil_convert.torch_zoo import import_torchvision
    try:
        torchvision = import_torchvision()
    except Exception as error:  # noqa: BLE001
        pytest.skip(f"torchvision cannot be imported: {error}")
    torch.manual_seed(0)
    network = torchvision.models.shufflenet_v2_x0_5().eval()
    path = tmp_path / "shufflenet.onnx"
    torch.onnx.export(network, torch.randn(1, 3, 64, 64), str(path), opset_version=17, dynamo=False,
                      input_names=["x"], output_names=["y"])
    model = onnx.load(str(path))
    model.ir_version = min(model.ir_version, 8)
    types, expected, actual = run_both(tmp_path, model)
    assert types.count("ChannelShuffle") == 16 and "Transpose" not in types and "Reshape" not in types
    assert_close(expected, actual)
    assert actual[0].argmax() == expected[0].argmax()


# -- open sizes with layouts: inputs whose H/W or L are symbolic, run by `anvil run --shape` ----

def run_open(tmp_path, model, shapes, seed=0):
    """Converts `model` (an open input size) once, then for each concrete ONNX input shape in
    `shapes` runs ONNX Runtime and `anvil run --shape`; returns (the converter's writer, pairs of
    (expected, actual) outputs in ONNX's layout)."""
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install onnxruntime)")
    require_anvil()
    writer = OnnxConverter(model).convert()
    writer.write(str(tmp_path / "m"))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    results = []
    for i, shape in enumerate(shapes):
        x = np.random.default_rng(seed + i).standard_normal(shape).astype(np.float32)
        want = session.run(None, {"x": x})[0]
        held_input = x.transpose(np.argsort(standard_perm(x.ndim)))
        out = run_anvil(tmp_path / "m" / "model.json", [held_input], shape=held_input.shape[1:])[0]
        perm = standard_perm(want.ndim)
        got = np.transpose(out.reshape([want.shape[j] for j in np.argsort(perm)]), perm)
        results.append((want, got))
    return writer, results


def test_open_image_through_transposes_matmul_and_concat(tmp_path):
    """An open H×W image: Conv, the ConvNeXt-style permute → MatMul → permute back, Concat with the
    conv along the channels, Resize by scales: written once with [null, null, C], matches ONNX
    Runtime at two sizes."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Transpose", ["c"], ["t"], perm=[0, 2, 3, 1]),
             helper.make_node("MatMul", ["t", "m"], ["p"]),
             helper.make_node("Transpose", ["p"], ["q"], perm=[0, 3, 1, 2]),
             helper.make_node("Concat", ["c", "q"], ["k"], axis=1),
             helper.make_node("Relu", ["k"], ["r"]),
             helper.make_node("Resize", ["r", "", "s"], ["y"], mode="linear")]
    inits = [("w", RNG.standard_normal((6, 4, 3, 3))), ("m", RNG.standard_normal((6, 5))), ("s", np.array([1, 1, 2, 2], np.float32))]
    writer, results = run_open(tmp_path, build(nodes, inits, input_shape=("N", 4, "H", "W")), [(1, 4, 10, 14), (2, 4, 7, 5)])
    assert writer.inputs[0]["shape"] == [None, None, 4]
    assert "Transpose" not in [layer["type"] for layer in writer.layers]
    for want, got in results:
        assert_close([want], [got])


def test_open_sequence_length_conv1d_pool_and_last_axis_matmul(tmp_path):
    """An open sequence length [N, C, L]: Conv1d, MaxPool1d, a Transpose to [N, L, C] and a MatMul on
    the last axis (a graph output left as [N, L, K]); written with [null, C], matches ONNX Runtime
    at two lengths."""
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1]),
             helper.make_node("MaxPool", ["c"], ["m"], kernel_shape=[2], strides=[2]),
             helper.make_node("Transpose", ["m"], ["t"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["t", "k"], ["y"])]
    inits = [("w", RNG.standard_normal((5, 3, 3))), ("b", RNG.standard_normal(5)), ("k", RNG.standard_normal((5, 2)))]
    writer, results = run_open(tmp_path, build(nodes, inits, input_shape=("N", 3, "L")), [(1, 3, 12), (2, 3, 21)])
    assert writer.inputs[0]["shape"] == [None, 3]
    for want, got in results:
        assert_close([want], [got])


def test_open_sizes_refuse_what_depends_on_the_size():
    """A Reshape of an open tensor to a target with two inferred axes and a Split of an open axis
    are errors naming the node and --input-shape; a flatten to [N, -1] before a Gemm names the Gemm."""
    from helpers import conversion_error
    reshape = build([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")], [("s", np.array([1, -1, 2, -1], np.int64))],
                    input_shape=("N", 4, "H", "W"))
    conversion_error(lambda: OnnxConverter(reshape).convert(), "'rs'", "Reshape", "open", "--input-shape")
    split = build([helper.make_node("Split", ["x"], ["y", "z"], axis=2, name="sp", num_outputs=2)],
                  input_shape=("N", 4, "H", "W"), outputs=("y", "z"), opset=18)
    conversion_error(lambda: OnnxConverter(split).convert(), "'sp'", "Split", "open", "--input-shape")
    flatten = build([helper.make_node("Reshape", ["x", "s"], ["f"]), helper.make_node("Gemm", ["f", "g"], ["y"], transB=1, name="fc")],
                    [("s", np.array([0, -1], np.int64)), ("g", RNG.standard_normal((2, 4 * 36)))], input_shape=("N", 4, "H", "W"))
    conversion_error(lambda: OnnxConverter(flatten).convert(), "'fc'", "open input", "--input-shape")
