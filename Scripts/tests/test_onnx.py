"""Tests of anvil_convert.from_onnx: the operator mapping, the error messages, and the
committed onnx_helper fixture rebuilt byte for byte. Skipped when onnx is not installed."""

import json

import numpy as np
import pytest

from helpers import committed_fixture, conversion_error, framework, require_anvil, run_anvil, same_files

onnx = framework("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from anvil_convert.from_onnx import Layout, OnnxConverter, convert_file  # noqa: E402
from anvil_convert.from_onnx import run_anvil as convert_with_layouts  # noqa: E402

RNG = np.random.default_rng(0)


def model(nodes, initializers=(), input_shape=(1, 3, 8, 8), outputs=("y",), opset=17):
    """A one-input ONNX model of `nodes` with initializers (name, values): float, or int64 when given as integers."""
    def tensor(name, values):
        array = np.asarray(values)
        return numpy_helper.from_array(array.astype(np.int64 if array.dtype.kind in "iu" else np.float32), name)
    graph = helper.make_graph(
        nodes, "t", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(input_shape))],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [tensor(k, v) for k, v in initializers])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("label, onnx_model, fragments", [
    ("unsupported op", lambda: model([helper.make_node("NonMaxSuppression", ["x"], ["y"], name="nms")]),
     ("'nms'", "NonMaxSuppression", "not supported")),
    ("crop-and-resize without roi", lambda: model([helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest", name="rs",
                                                                    coordinate_transformation_mode="tf_crop_and_resize")],
                                                  [("s", [1, 1, 2, 2])]), ("'rs'", "Resize", "tf_crop_and_resize", "roi")),
    ("crop-and-resize of the channels", lambda: model(
        [helper.make_node("Resize", ["x", "r", "s"], ["y"], mode="linear", name="rs",
                          coordinate_transformation_mode="tf_crop_and_resize")],
        [("r", [0.0, 0.5, 0, 0, 1, 1, 1, 1]), ("s", [1, 1, 2, 2])]), ("'rs'", "Resize", "roi", "batch or channel")),
    ("crop-and-resize roi of the wrong length", lambda: model(
        [helper.make_node("Resize", ["x", "r", "", "z"], ["y"], mode="linear", name="rs", axes=[2, 3],
                          coordinate_transformation_mode="tf_crop_and_resize")],
        [("r", [0.0, 0.0, 1.0]), ("z", np.array([4, 4]))], opset=18), ("'rs'", "Resize", "roi", "4 values")),
    ("keep_aspect_ratio_policy rescaling the channels", lambda: model(
        [helper.make_node("Resize", ["x", "", "", "z"], ["y"], mode="nearest", name="rs",
                          keep_aspect_ratio_policy="not_larger")], [("z", np.array([1, 3, 4, 4]))], opset=18),
     ("'rs'", "Resize", "not_larger", "batch and channels", "axes [2, 3]")),
    ("keep_aspect_ratio_policy of an unknown kind", lambda: model(
        [helper.make_node("Resize", ["x", "", "", "z"], ["y"], mode="nearest", name="rs",
                          keep_aspect_ratio_policy="fit")], [("z", np.array([1, 3, 4, 4]))], opset=18),
     ("'rs'", "Resize", "keep_aspect_ratio_policy 'fit'")),
    ("layer norm over the batch axis", lambda: model([helper.make_node("LayerNormalization", ["x", "g"], ["y"], axis=0,
                                                                       name="ln")], [("g", np.ones((1, 3, 8, 8)))]),
     ("'ln'", "LayerNormalization", "batch axis")),
    ("layer norm scale of the wrong shape", lambda: model([helper.make_node("LayerNormalization", ["x", "g"], ["y"], axis=2,
                                                                            name="ln")], [("g", np.ones(7))]),
     ("'ln'", "LayerNormalization", "Scale of shape [7]", "[8, 8]")),
    ("group norm not dividing", lambda: model([helper.make_node("GroupNormalization", ["x", "g", "b"], ["y"], num_groups=2,
                                                                name="gn")], [("g", np.ones(2)), ("b", np.zeros(2))], opset=18),
     ("'gn'", "GroupNormalization", "divide")),
    ("transpose of the batch axis", lambda: model([helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0, 2, 3], name="tr")],
                                                  input_shape=("N", 3, 8, 8)),
     ("'tr'", "Transpose", "batch axis")),
    ("softmax over the batch axis", lambda: model([helper.make_node("Softmax", ["x"], ["y"], axis=0, name="sm")],
                                                  input_shape=("N", 3, 8, 8)),
     ("'sm'", "Softmax", "batch axis")),
    ("old softmax on images", lambda: model([helper.make_node("Softmax", ["x"], ["y"], name="sm")], opset=11),
     ("'sm'", "opset 13")),
    ("gemm on an image", lambda: model([helper.make_node("Gemm", ["x", "w"], ["y"], transB=1, name="fc")],
                                       [("w", RNG.standard_normal((2, 192)))]), ("'fc'", "Gemm", "flatten")),
    ("matmul of two tensors", lambda: model([helper.make_node("Flatten", ["x"], ["f"]),
                                             helper.make_node("MatMul", ["f", "f"], ["y"], name="mm")]),
     ("'mm'", "MatMul", "rank 3 or more")),
    ("mul of shapes that do not broadcast", lambda: model([helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
                                                           helper.make_node("Mul", ["x", "c"], ["y"], name="sq")],
                                                          [("w", RNG.standard_normal((2, 3, 1, 1)))]),
     ("'sq'", "Mul", "[1, 3, 8, 8] and [1, 2, 8, 8]", "broadcast")),
    ("a constant with a batch axis", lambda: model([helper.make_node("Add", ["x", "k"], ["y"], name="ad")],
                                                   [("k", np.ones((2, 3, 1, 1)))], input_shape=("N", 3, 8, 8)),
     ("'ad'", "Add", "batch axis")),
    ("bad reshape", lambda: model([helper.make_node("Reshape", ["x", "s"], ["y"], name="rs")], [("s", [3, 64, 1])],
                                  input_shape=("N", 3, 8, 8)),
     ("'rs'", "Reshape", "batch axis")),
    ("unknown input channels", lambda: model([helper.make_node("Relu", ["x"], ["y"])], input_shape=("N", "C", "H", "W")),
     ("open channels", "--input-shape")),
    ("dense after flatten of an open size", lambda: model(
        [helper.make_node("Flatten", ["x"], ["f"]), helper.make_node("MatMul", ["f", "w"], ["y"], name="fc")],
        [("w", RNG.standard_normal((192, 2)))], input_shape=("N", 3, "H", "W")), ("'fc'", "open input", "--input-shape")),
    ("a tensor the size of the batch", lambda: model([helper.make_node("Shape", ["x"], ["s"], name="sh"),
                                                      helper.make_node("ConstantOfShape", ["s"], ["y"], name="cs")],
                                                     input_shape=("N", 3, "H", "W")),
     ("'cs'", "ConstantOfShape", "batch size")),
    ("same_lower on an open size", lambda: model([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                                                                   auto_pad="SAME_LOWER", name="mp")],
                                                 input_shape=(1, 3, "H", "W")), ("'mp'", "SAME_LOWER", "--input-shape")),
    ("cast of a tensor to complex numbers", lambda: model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.COMPLEX64, name="ct")]),
     ("'ct'", "Cast", "complex64", "float32")),
    ("sum over the batch axis", lambda: model([helper.make_node("ReduceSum", ["x", "a"], ["y"], name="rs")], [("a", [0])],
                                              input_shape=("N", 3, 8, 8)),
     ("'rs'", "ReduceSum", "axis 0", "holds the batch")),
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


def layers_of(nodes, initializers=(), **kwargs):
    """The converted layers (type and options) of a one-input model."""
    return OnnxConverter(model(nodes, initializers, **kwargs)).convert().layers


def test_conv_transpose_pads_output_shape_and_groups():
    """ConvTranspose: explicit pads and output_padding pass through; output_shape and SAME_UPPER become pads."""
    N = helper.make_node
    w = RNG.standard_normal((3, 2, 3, 3))
    layer = layers_of([N("ConvTranspose", ["x", "w", "b"], ["y"], strides=[2, 2], pads=[1, 0, 0, 1],
                         output_padding=[1, 0], name="up")], [("w", w), ("b", np.zeros(2))])[0]
    assert layer["type"] == "TransposedConvolution" and layer["channels"] == 2 and layer["padding"] == [1, 0, 0, 1]
    assert layer["outputPadding"] == [1, 0] and layer["stride"] == [2, 2] and layer["bias"]
    grouped = layers_of([N("ConvTranspose", ["x", "w"], ["y"], group=3, strides=[2, 2], output_shape=[16, 16])],
                        [("w", RNG.standard_normal((3, 1, 4, 4)))])[0]
    # full 2*7+4 = 18, output 16: total 2, SAME_LOWER-style split (larger half first) when auto_pad is NOTSET
    assert grouped["groups"] == 3 and grouped["channels"] == 3 and grouped["padding"] == [1, 1, 1, 1]
    larger = layers_of([N("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], output_shape=[18, 18])],
                       [("w", RNG.standard_normal((3, 2, 3, 3)))])[0]
    # full 2*7+3 = 17: the extra row and column are output padding (bias only), as ONNX computes them
    assert larger["padding"] == [0, 0, 0, 0] and larger["outputPadding"] == [1, 1]
    same = layers_of([N("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], auto_pad="SAME_UPPER")],
                     [("w", RNG.standard_normal((3, 2, 3, 3)))])[0]
    assert same["padding"] == [0, 0, 1, 1]


def test_resize_modes_map_every_option():
    """Resize: nearest modes and cubic options reach the layer; Upsample rounds down."""
    N = helper.make_node
    nearest = layers_of([N("Resize", ["x", "", "s"], ["y"], mode="nearest", nearest_mode="ceil",
                           coordinate_transformation_mode="half_pixel_symmetric")], [("s", [1.0, 1.0, 2.0, 2.0])],
                        opset=19)[0]
    assert (nearest["mode"], nearest["nearestRounding"], nearest["coordinates"]) == ("nearest", "ceil", "halfPixelSymmetric")
    cubic = layers_of([N("Resize", ["x", "", "", "z"], ["y"], mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1)],
                      [("z", np.array([1, 3, 5, 6]))])[0]
    assert cubic["mode"] == "cubic" and cubic["cubicCoefficient"] == -0.5 and cubic["excludeOutside"] and cubic["size"] == [5, 6]
    swapped = layers_of([N("Resize", ["x", "", "", "z"], ["y"], mode="nearest", axes=[3, 2])],
                        [("z", np.array([5, 7]))], opset=18)[0]
    assert swapped["size"] == [7, 5]
    upsample = layers_of([N("Upsample", ["x", "s"], ["y"], mode="nearest")], [("s", [1.0, 1.0, 2.0, 2.0])], opset=9)[0]
    assert upsample["nearestRounding"] == "floor" and upsample["coordinates"] == "asymmetric"


def test_resize_antialias_crop_and_aspect_ratio_options():
    """Resize: antialias (linear, cubic; nearest ignores it as ONNX does), tf_crop_and_resize's roi (of
    every axis, or of `axes` in their order) and extrapolation value, keep_aspect_ratio_policy's one scale
    with the sizes rounded half up from it."""
    N = helper.make_node
    smooth = layers_of([N("Resize", ["x", "", "", "z"], ["y"], mode="cubic", antialias=1, exclude_outside=1)],
                       [("z", np.array([1, 3, 3, 5]))], opset=18)[0]
    assert smooth["antialias"] and smooth["excludeOutside"] and smooth["size"] == [3, 5] and smooth["mode"] == "cubic"
    plain = layers_of([N("Resize", ["x", "", "s"], ["y"], mode="nearest", antialias=1)], [("s", [1.0, 1.0, 0.5, 0.5])],
                      opset=18)[0]
    assert "antialias" not in plain
    crop = layers_of([N("Resize", ["x", "r", "", "z"], ["y"], mode="linear", axes=[3, 2], extrapolation_value=2.5,
                        coordinate_transformation_mode="tf_crop_and_resize")],
                     [("r", [0.25, 0.5, 1.5, 0.75]), ("z", np.array([4, 6]))], opset=18)[0]
    # roi of axes [3, 2]: W 0.25..1.5, H 0.5..0.75 -> region [top, left, bottom, right]
    assert crop["coordinates"] == "tfCropAndResize" and crop["region"] == [0.5, 0.25, 0.75, 1.5]
    assert crop["extrapolationValue"] == 2.5 and crop["size"] == [6, 4]
    larger = layers_of([N("Resize", ["x", "", "", "z"], ["y"], mode="nearest", axes=[2, 3],
                          keep_aspect_ratio_policy="not_larger")], [("z", np.array([5, 7]))], opset=18)[0]
    assert larger["scale"] == [0.625, 0.625] and larger["size"] == [5, 5]  # 8 x 5/8 = 5
    smaller = layers_of([N("Resize", ["x", "", "", "z"], ["y"], mode="nearest", axes=[2, 3],
                           keep_aspect_ratio_policy="not_smaller")], [("z", np.array([5, 7]))], opset=18)[0]
    assert smaller["scale"] == [0.875, 0.875] and smaller["size"] == [7, 7]


@pytest.mark.parametrize("label, attributes, roi, scales, sizes", [
    ("linear antialias to a size", dict(mode="linear", antialias=1), None, None, [1, 3, 5, 4]),
    ("cubic antialias by scales", dict(mode="cubic", antialias=1), None, [1, 1, 0.45, 0.6], None),
    ("cubic antialias, exclude_outside", dict(mode="cubic", antialias=1, exclude_outside=1, cubic_coeff_a=-0.5),
     None, None, [1, 3, 4, 7]),
    ("linear antialias upsampling", dict(mode="linear", antialias=1), None, [1, 1, 1.5, 2.0], None),
    ("linear crop with extrapolation", dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize",
                                            extrapolation_value=-3.0), [0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3], None, [1, 3, 7, 6]),
    ("cubic crop", dict(mode="cubic", coordinate_transformation_mode="tf_crop_and_resize"),
     [0, 0, 0.8, 0.2, 1, 1, 0.1, 0.7], None, [1, 3, 5, 5]),
    # (by scales with in x scale integral: ONNX Runtime maps over the floored output length, ONNX's
    # definition and Anvil over in x scale; they differ when that is not an integer)
    ("nearest crop by scales", dict(mode="nearest", coordinate_transformation_mode="tf_crop_and_resize",
                                    extrapolation_value=1.0), [0, 0, 0.3, -0.5, 1, 1, 0.6, 0.5], [1, 1, 2.0, 3.0], None),
    ("nearest not_larger of axes", dict(mode="nearest", keep_aspect_ratio_policy="not_larger", axes=[2, 3]), None, None,
     [5, 9]),
    ("linear not_smaller of axes", dict(mode="linear", keep_aspect_ratio_policy="not_smaller", axes=[3, 2]), None, None,
     [9, 5]),
    ("cubic not_smaller of every axis", dict(mode="cubic", keep_aspect_ratio_policy="not_smaller"), None, None,
     [1, 3, 5, 9]),  # max(1, 1, 5/13, 9/11) = 1: the input size
])
def test_resize_options_match_onnxruntime(tmp_path, label, attributes, roi, scales, sizes):
    """Antialias, tf_crop_and_resize and keep_aspect_ratio_policy run in Anvil as in ONNX Runtime (opset 19)."""
    initializers = [("r", roi if roi is not None else np.zeros(0, np.float32))]
    inputs = ["x", "r" if roi is not None else "", "s" if scales is not None else ""]
    if scales is not None:
        initializers.append(("s", [float(v) for v in scales]))
    if sizes is not None:
        inputs.append("z")
        initializers.append(("z", np.array(sizes)))
    initializers = [(k, v) for k, v in initializers if k != "r" or roi is not None]
    onnx_model = model([helper.make_node("Resize", inputs, ["y"], name="rs", **attributes)], initializers,
                       input_shape=(1, 3, 13, 11), opset=19)
    anvil_matches_onnxruntime(tmp_path, onnx_model, RNG.standard_normal((1, 3, 13, 11)).astype(np.float32))


def test_lppool_1d_on_a_sequence(tmp_path):
    """LpPool over an NCL sequence (p 3, stride, pads): a height-1 LpPooling; against ONNX Runtime."""
    ort = framework("onnxruntime")
    require_anvil()
    onnx_model = model([helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[3], strides=[2], pads=[1, 1], p=3,
                                         name="lp")], input_shape=(1, 4, 15))
    layer = OnnxConverter(onnx_model).convert().layers[0]
    assert layer["type"] == "LpPooling" and layer["kernel"] == [1, 3] and layer["stride"] == [1, 2]
    onnx_model.ir_version = 8
    x = RNG.standard_normal((1, 4, 15)).astype(np.float32)
    want = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    path = tmp_path / "model.onnx"
    onnx.save(onnx_model, str(path))
    convert_file(str(path), str(tmp_path / "out"))
    got = run_anvil(tmp_path / "out" / "model.json", [x.transpose(0, 2, 1)])[0]
    assert np.max(np.abs(got - want.transpose(0, 2, 1).reshape(-1))) <= 1e-4 * (1 + np.max(np.abs(want)))


def test_pad_modes_and_folding():
    """Pad: reflect/edge/constant become Pad layers; a zero Pad before a Conv, a counting AveragePool or
    (with -inf) a MaxPool is folded into its pads; a zero Pad before anything else stays."""
    N = helper.make_node
    p = ("p", np.array([0, 1, 1, 2, 0, 0, 3, 4]))
    reflect = layers_of([N("Pad", ["x", "p"], ["y"], mode="reflect")], [p])[0]
    assert reflect["type"] == "Pad" and reflect["pads"] == [1, 2, 3, 4] and reflect["channelPads"] == [1, 0]
    spatial = ("p", np.array([0, 0, 1, 2, 0, 0, 0, 1]))
    conv = layers_of([N("Pad", ["x", "p"], ["t"]), N("Conv", ["t", "w"], ["y"], pads=[1, 1, 1, 1])],
                     [spatial, ("w", RNG.standard_normal((4, 3, 3, 3)))])
    assert [l["type"] for l in conv] == ["Convolution"] and conv[0]["padding"] == [2, 3, 1, 2]
    avg = layers_of([N("Pad", ["x", "p"], ["t"]), N("AveragePool", ["t"], ["y"], kernel_shape=[3, 3])], [spatial])
    assert [l["type"] for l in avg] == ["AveragePooling"] and avg[0]["countIncludesPadding"] and avg[0]["padding"] == [1, 2, 0, 1]
    excluded = layers_of([N("Pad", ["x", "p"], ["t"]), N("AveragePool", ["t"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
                         [spatial])
    assert [l["type"] for l in excluded] == ["Pad", "AveragePooling"]
    maxpool = layers_of([N("Pad", ["x", "p", "v"], ["t"]), N("MaxPool", ["t"], ["y"], kernel_shape=[3, 3])],
                        [spatial, ("v", np.array([-np.inf]))])
    assert [l["type"] for l in maxpool] == ["MaxPooling"] and maxpool[0]["padding"] == [1, 2, 0, 1]
    zero_max = layers_of([N("Pad", ["x", "p"], ["t"]), N("MaxPool", ["t"], ["y"], kernel_shape=[3, 3])], [spatial])
    assert [l["type"] for l in zero_max] == ["Pad", "MaxPooling"]


def test_normalizations_lrn_and_lp_pooling():
    """InstanceNormalization, GroupNormalization (per-group scale of opset 18 expanded), LRN, LpPool, GlobalLpPool."""
    N = helper.make_node
    layers = layers_of([N("InstanceNormalization", ["x", "s", "b"], ["i"], epsilon=1e-3),
                        N("LRN", ["i"], ["l"], size=3, alpha=2e-4, beta=0.5, bias=2.0),
                        N("LpPool", ["l"], ["p"], kernel_shape=[2, 2], strides=[2, 2], p=3),
                        N("GlobalLpPool", ["p"], ["y"])], [("s", np.ones(3)), ("b", np.zeros(3))])
    assert [l["type"] for l in layers] == ["InstanceNormalization", "LocalResponseNormalization", "LpPooling", "LpPooling"]
    assert layers[1]["size"] == 3 and layers[1]["beta"] == 0.5 and layers[2]["p"] == 3.0 and layers[3]["kernel"] == [4, 4]
    writer = OnnxConverter(model([N("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3, epsilon=1e-4)],
                                 [("s", [1.0, 2.0, 3.0]), ("b", [0.0, 0.5, 1.0])], input_shape=(1, 6, 4, 4), opset=18)).convert()
    gn = writer.layers[0]
    assert gn["type"] == "GroupNormalization" and gn["groups"] == 3
    assert np.allclose(writer.tensors[f"{gn['name']}_gamma"], [1, 1, 2, 2, 3, 3])
# -- every blocker in one run, weights fed as graph inputs, what is written loads --------------

def test_every_blocker_is_listed_in_one_run():
    """Unsupported nodes do not stop the conversion: every one is named, each with node and op,
    and nodes after a blocker are still checked (here a Conv whose weights do not fit)."""
    nodes = [helper.make_node("Bernoulli", ["x"], ["n"], name="rand"),
             helper.make_node("Conv", ["n", "w"], ["c"], name="conv"),
             helper.make_node("Foo", ["x"], ["f"], domain="com.example", name="foo"),
             helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Softmax", ["r"], ["s"], axis=0, name="sm")]
    onnx_model = model(nodes, [("w", RNG.standard_normal((4, 5, 3, 3)))], outputs=("c", "f", "s"))
    # The shape the file records for the unsupported node's output lets the Conv after it be checked.
    onnx_model.graph.value_info.append(helper.make_tensor_value_info("n", TensorProto.FLOAT, [1, 3, 8, 8]))
    message = conversion_error(lambda: OnnxConverter(onnx_model).convert(),
                               "node 'rand' (Bernoulli)", "node 'conv' (Conv)", "do not match 3 input channels",
                               "node 'foo' (Foo)", "com.example", "node 'sm' (Softmax)", "batch axis")
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
    nodes = [helper.make_node("Bernoulli", ["x"], ["n"], name="rand"),
             helper.make_node("STFT", ["n", "step"], ["y"], name="stft")]
    onnx_model = model(nodes, [("step", [4])])
    onnx_model.graph.value_info.append(helper.make_tensor_value_info("n", TensorProto.FLOAT, [1, 3, 8, 8]))
    path = tmp_path / "model.onnx"
    onnx.save(onnx_model, str(path))
    completed = run_script("convert_onnx.py", str(path), str(tmp_path / "out"))
    assert completed.returncode == 1, completed
    lines = completed.stderr.strip().splitlines()
    assert lines[0] == "convert_onnx: error: 2 blockers (every one this run found):", lines
    assert lines[1].startswith("  node 'rand' (Bernoulli)") and lines[2].startswith("  node 'stft' (STFT)"), lines
    assert not (tmp_path / "out" / "model.json").exists()


@pytest.mark.unloadable
def test_load_check_catches_a_model_anvil_refuses(tmp_path):
    """The load check (conftest.load_problem) can fail: a layer type Anvil does not know is refused."""
    from conftest import load_problem
    from anvil_convert.writer import ModelWriter
    anvil = require_anvil()
    writer = ModelWriter("bad", layout="pytorch")
    writer.add_input("x", (4, 4, 2))
    writer.add_layer("odd", "NoSuchLayer", ["x"])
    writer.set_outputs(["odd"])
    model_path, _ = writer.write(str(tmp_path / "bad"))
    problem = load_problem(anvil, model_path)
    assert problem is not None and "NoSuchLayer" in problem, problem
    good = ModelWriter("good", layout="pytorch")
    good.add_input("x", (4, 4, 2))
    good.add_layer("relu", "Activation", ["x"], function="relu")
    good.set_outputs(["relu"])
    assert load_problem(anvil, good.write(str(tmp_path / "good"))[0]) is None


# -- reductions torchvision exports, channels-last LayerNorm: run in Anvil against ONNX Runtime ---

def anvil_matches_onnxruntime(tmp_path, onnx_model, x):
    """Converts `onnx_model`, runs it with `anvil run` on NCHW `x` and compares with ONNX Runtime:
    max |difference| <= 1e-4 x (1 + max |expected|). Skips without onnxruntime or anvil."""
    onnxruntime = pytest.importorskip("onnxruntime")
    require_anvil()
    path = tmp_path / "model.onnx"
    onnx_model.ir_version = 8  # onnx.helper writes the newest IR version, ONNX Runtime 1.23 reads up to 11
    onnx.save(onnx_model, str(path))
    convert_file(str(path), str(tmp_path / "out"))
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})[0]
    got = run_anvil(tmp_path / "out" / "model.json", [x.transpose(0, 2, 3, 1)])[0]
    expected = want.transpose(0, 2, 3, 1) if want.ndim == 4 else want
    assert got.size == expected.size
    assert np.max(np.abs(got - expected.reshape(-1))) <= 1e-4 * (1 + np.max(np.abs(expected)))


@pytest.mark.parametrize("op, keep", [("ReduceMean", 0), ("ReduceMean", 1), ("ReduceMax", 0)])
def test_spatial_reduction_is_a_global_pooling(tmp_path, op, keep):
    """`x.mean([2, 3])` (ShuffleNet v2, MNASNet) and its max: a global pooling, then a Gemm."""
    nodes = [helper.make_node(op, ["x"], ["r"], axes=[2, 3], keepdims=keep, name="pool")]
    if keep:
        nodes.append(helper.make_node("Flatten", ["r"], ["f"]))
    nodes.append(helper.make_node("Gemm", ["f" if keep else "r", "w", "b"], ["y"], transB=1, name="fc"))
    onnx_model = model(nodes, [("w", RNG.standard_normal((5, 3))), ("b", RNG.standard_normal(5))], opset=17)
    writer = OnnxConverter(onnx_model).convert()
    assert [layer["type"] for layer in writer.layers][0] == ("GlobalAveragePooling" if op == "ReduceMean" else "GlobalMaxPooling")
    anvil_matches_onnxruntime(tmp_path, onnx_model, RNG.standard_normal((1, 3, 8, 8)).astype(np.float32))


@pytest.mark.parametrize("equation", ["nchw,ncvw->nchv", "nchw,nchv->ncwv", "nchw,ncvw->nhcv", "nchw,nchv->ncvw"])
def test_einsum_batched_product_matches_onnxruntime(tmp_path, equation):
    """An Einsum that is a batched matrix product, its operands' and output's axes in any order:
    one MatMul between relabellings, matching ONNX Runtime."""
    onnxruntime = pytest.importorskip("onnxruntime")
    onnx_model = model([helper.make_node("Einsum", ["x", "x"], ["y"], equation=equation, name="e")], opset=17)
    writer = OnnxConverter(onnx_model).convert()
    assert [layer["type"] for layer in writer.layers].count("MatMul") == 1
    onnx_model.ir_version = 8
    path = tmp_path / "model.onnx"
    onnx.save(onnx_model, str(path))
    x = RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)
    want = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    convert_file(str(path), str(tmp_path / "out"))
    got = run_anvil(tmp_path / "out" / "model.json", [x.transpose(0, 2, 3, 1)])[0]
    want = want.transpose(0, 2, 3, 1)  # Anvil holds a rank-4 output channels-last
    assert got.size == want.size
    assert np.max(np.abs(got - want.reshape(-1))) <= 1e-4 * (1 + np.max(np.abs(want))), equation


def test_malformed_einsum_names_the_node():
    """An equation that is not well formed (an output label no operand has, labels that do not
    fit the operand's rank) is an error naming the node and the equation."""
    for equation in ["nchw,nchw->nchz", "nch,nchw->nch"]:
        onnx_model = model([helper.make_node("Einsum", ["x", "x"], ["y"], equation=equation, name="e")], opset=17)
        conversion_error(lambda: OnnxConverter(onnx_model).convert(), "'e'", "Einsum", equation)


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                                "ReduceLogSumExp", "ReduceSumSquare"])
@pytest.mark.parametrize("axes, keep", [([1], 1), ([1], 0), ([-1], 1), ([1, 3], 0), ([2], 0)])
def test_reduction_over_any_axes_matches_onnxruntime(tmp_path, op, axes, keep):
    """Every reduction over axes other than an image's spatial ones (the channels, the width, both):
    the engine's Reduce, with keepdims 1 or 0, matches ONNX Runtime (opset 18: axes as an input)."""
    onnxruntime = pytest.importorskip("onnxruntime")
    nodes = [helper.make_node(op, ["x", "a"], ["y"], keepdims=keep, name="r")]
    onnx_model = model(nodes, [("a", axes)], input_shape=("N", 3, 8, 8), opset=18)
    writer = OnnxConverter(onnx_model).convert()
    assert "Reduce" in [layer["type"] for layer in writer.layers]
    onnx_model.ir_version = 8
    path = tmp_path / "model.onnx"
    onnx.save(onnx_model, str(path))
    x = (RNG.uniform(0.8, 1.25, (2, 3, 8, 8)) * RNG.choice([-1, 1], (2, 3, 8, 8))).astype(np.float32)
    want = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    convert_file(str(path), str(tmp_path / "out"))
    got = run_anvil(tmp_path / "out" / "model.json", [x.transpose(0, 2, 3, 1)], batch=2)[0]
    # Anvil holds a rank-4 output as NHWC and a rank-3 one as NLC.
    held = {4: (0, 2, 3, 1), 3: (0, 2, 1)}.get(want.ndim, tuple(range(want.ndim)))
    expected = want.transpose(held).reshape(-1)
    assert np.max(np.abs(got - expected)) <= 1e-4 * (1 + np.max(np.abs(expected))), (op, axes, keep)


def test_channels_last_layer_norm(tmp_path):
    """ConvNeXt's LayerNorm: Transpose to NHWC, LayerNormalization over the last axis, back: one
    LayerNormalization on Anvil's channels, no data moved; against a float64 NumPy layer norm
    (over 3 channels a pixel whose values nearly agree has a variance near epsilon, where ONNX
    Runtime's float32 layer norm is off by ~2e-4, while Anvil's, in float64, is not)."""
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
             helper.make_node("LayerNormalization", ["t", "g", "b"], ["n"], axis=-1, epsilon=1e-6, name="ln"),
             helper.make_node("Transpose", ["n"], ["y"], perm=[0, 3, 1, 2])]
    gamma, beta = RNG.standard_normal(3), RNG.standard_normal(3)
    onnx_model = model(nodes, [("g", gamma), ("b", beta)])
    writer = OnnxConverter(onnx_model).convert()
    assert [layer["type"] for layer in writer.layers] == ["LayerNormalization"]
    x = RNG.standard_normal((1, 3, 8, 8)).astype(np.float32)
    held = x.transpose(0, 2, 3, 1)
    require_anvil()
    path = tmp_path / "model.onnx"
    onnx_model.ir_version = 8
    onnx.save(onnx_model, str(path))
    convert_file(str(path), str(tmp_path / "out"))
    got = run_anvil(tmp_path / "out" / "model.json", [held])[0]
    values = held.astype(np.float64)
    mean = values.mean(-1, keepdims=True)
    variance = ((values - mean) ** 2).mean(-1, keepdims=True)
    expected = ((values - mean) / np.sqrt(variance + 1e-6) * gamma + beta).reshape(-1)
    assert np.max(np.abs(got - expected)) <= 1e-4 * (1 + np.max(np.abs(expected)))


@pytest.mark.parametrize("axis, types, axes", [
    (1, ["LayerNormalization"], 3),                              # [C, H, W]: Anvil's H, W, C, all trailing
    (-3, ["LayerNormalization"], 3),
    (2, ["Transpose", "LayerNormalization", "Transpose"], 2),    # [H, W]: the channels moved in front first
    (3, ["Transpose", "LayerNormalization", "Transpose"], 1),    # [W]
    (-1, ["Transpose", "LayerNormalization", "Transpose"], 1),
])
def test_layer_norm_over_any_onnx_axis(tmp_path, axis, types, axes):
    """LayerNormalization of an NCHW image over ONNX axes axis … 3: over Anvil's trailing axes directly
    (Scale and B reordered to H, W, C), or after a Transpose moving them last; against ONNX Runtime."""
    shape = (1, 3, 5, 6)
    normalised = shape[axis % 4:]
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=axis, epsilon=1e-5, name="ln")]
    onnx_model = model(nodes, [("g", RNG.standard_normal(normalised)), ("b", RNG.standard_normal(normalised))],
                       input_shape=shape)
    writer = OnnxConverter(onnx_model).convert()
    assert [layer["type"] for layer in writer.layers] == types
    norm = next(layer for layer in writer.layers if layer["type"] == "LayerNormalization")
    assert norm.get("axes", 1) == axes
    anvil_matches_onnxruntime(tmp_path, onnx_model, RNG.standard_normal(shape).astype(np.float32))


def test_layer_norm_of_a_sequence_and_a_vector(tmp_path):
    """[N, C, L] over [C, L] and [N, F] over F: one LayerNormalization each; against ONNX Runtime."""
    ort = framework("onnxruntime")
    require_anvil()
    for shape, axis in [((1, 4, 7), 1), ((1, 4, 7), 2), ((1, 9), 1)]:
        normalised = shape[axis:]
        nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=axis, name="ln")]
        onnx_model = model(nodes, [("g", RNG.standard_normal(normalised)), ("b", RNG.standard_normal(normalised))],
                           input_shape=shape)
        onnx_model.ir_version = 8
        x = RNG.standard_normal(shape).astype(np.float32)
        want = ort.InferenceSession(onnx_model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
        path = tmp_path / f"ln{len(shape)}_{axis}.onnx"
        onnx.save(onnx_model, str(path))
        convert_file(str(path), str(tmp_path / path.stem))
        held = x.transpose(0, 2, 1) if x.ndim == 3 else x
        got = run_anvil(tmp_path / path.stem / "model.json", [held])[0]
        expected = want.transpose(0, 2, 1) if want.ndim == 3 else want
        assert np.max(np.abs(got.reshape(-1) - expected.reshape(-1))) <= 1e-4 * (1 + np.max(np.abs(expected)))


@pytest.mark.parametrize("normalized", ["CHW", "HW"])
def test_pytorch_layer_norm_exported_to_onnx(tmp_path, normalized):
    """PyTorch's nn.LayerNorm([C, H, W]) and nn.LayerNorm([H, W]) after a convolution, exported with
    torch.onnx.export (opset 17), converted and run in Anvil: the same output as PyTorch."""
    torch = framework("torch")
    require_anvil()
    torch.manual_seed(0)
    c, h, w = 4, 6, 5
    norm = torch.nn.LayerNorm([c, h, w] if normalized == "CHW" else [h, w], eps=1e-5)
    with torch.no_grad():  # learned-looking affine parameters, not the 1 / 0 they start as
        norm.weight.copy_(torch.randn_like(norm.weight))
        norm.bias.copy_(torch.randn_like(norm.bias))
    network = torch.nn.Sequential(torch.nn.Conv2d(3, c, 3, padding=1), norm, torch.nn.ReLU()).eval()
    x = torch.randn(1, 3, h, w)
    with torch.no_grad():
        want = network(x).numpy()
    path = tmp_path / "ln.onnx"
    torch.onnx.export(network, x, str(path), opset_version=17, dynamo=False, input_names=["x"], output_names=["y"])
    writer = convert_file(str(path), str(tmp_path / "out"))
    assert "LayerNormalization" in [layer["type"] for layer in writer.layers]
    got = run_anvil(tmp_path / "out" / "model.json", [x.numpy().transpose(0, 2, 3, 1)])[0]
    expected = want.transpose(0, 2, 3, 1).reshape(-1)
    assert np.max(np.abs(got.reshape(-1) - expected)) <= 1e-4 * (1 + np.max(np.abs(expected)))


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


def test_layer_norm_channels_last_after_transpose():
    """ConvNeXt's LayerNorm: Transpose to NHWC, LayerNormalization over the last axis, Transpose back:
    one LayerNormalization over Anvil's channels (the transposes move no data)."""
    N = helper.make_node
    layers = layers_of([N("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
                        N("LayerNormalization", ["t", "g", "b"], ["n"], axis=-1, epsilon=1e-6),
                        N("Transpose", ["n"], ["y"], perm=[0, 3, 1, 2])], [("g", np.ones(3)), ("b", np.zeros(3))])
    assert [l["type"] for l in layers] == ["LayerNormalization"] and abs(layers[0]["epsilon"] - 1e-6) < 1e-12


def test_function_body_constants_castlike_and_spatial_sum(tmp_path):
    """What ONNX's expanded function bodies use: Constant nodes fold, CastLike/Cast to float32 pass
    the tensor through, ReduceSum over the spatial axes is a global pooling times the count (a
    softmax over the width written out), and the result matches ONNX Runtime."""
    N = helper.make_node
    half = numpy_helper.from_array(np.array(0.5, np.float32), "half_value")
    nodes = [N("Constant", [], ["half"], value=half), N("CastLike", ["half", "x"], ["half_cast"]),
             N("Cast", ["x"], ["xf"], to=TensorProto.FLOAT),
             N("Mul", ["xf", "half_cast"], ["scaled"], name="scale"),
             N("ReduceMax", ["scaled"], ["peak"], axes=[2, 3], keepdims=1),
             N("Sub", ["scaled", "peak"], ["shifted"]), N("Exp", ["shifted"], ["e"]),
             N("Constant", [], ["axes"], value_ints=[2, 3]),
             N("ReduceSum", ["e", "axes"], ["total"], keepdims=1, name="total"),
             N("Div", ["e", "total"], ["y"], name="normalise")]
    onnx_model = model(nodes, input_shape=(1, 3, 4, 5), opset=17)
    writer = OnnxConverter(onnx_model).convert()
    by_name = {layer["name"]: layer for layer in writer.layers}
    assert by_name["total"]["type"] == "GlobalAveragePooling"
    assert by_name["total_sum"]["function"] == {"type": "linear", "a": 20.0, "b": 0.0}
    assert by_name["scale"]["function"] == {"type": "linear", "a": 0.5, "b": 0.0}
    anvil_matches_onnxruntime(tmp_path, onnx_model, RNG.standard_normal((1, 3, 4, 5)).astype(np.float32))


def test_elementwise_tensors_of_different_ranks_align_from_the_right(tmp_path):
    """A [N, F] vector with a [N, C, H, W] image, and with a [N, C, L] sequence (the vector first):
    the vector is reshaped to the higher rank with axes of extent 1 after its batch axis (NumPy's
    right alignment), one Reshape each; Anvil matches ONNX Runtime."""
    N = helper.make_node
    nodes = [N("Flatten", ["x"], ["f"]), N("Gemm", ["f", "w"], ["v"], transB=1),
             N("Mul", ["x", "v"], ["image"], name="image_times_vector"),
             N("Reshape", ["x", "seq_shape"], ["seq"]),
             N("Sub", ["v", "seq"], ["diff"], name="vector_minus_sequence"),
             N("Reshape", ["diff", "image_shape"], ["back"]), N("Add", ["image", "back"], ["y"])]
    onnx_model = model(nodes, [("w", RNG.standard_normal((3, 24))), ("seq_shape", np.array([1, 8, 3])),
                               ("image_shape", np.array([1, 2, 4, 3]))], input_shape=(1, 2, 4, 3))
    writer = OnnxConverter(onnx_model).convert()
    by_name = {layer["name"]: layer for layer in writer.layers}
    assert by_name["image_times_vector_rank"]["shape"] == [1, 3, 1]  # [N, 1, 1, 3] held as H x W x C
    assert by_name["vector_minus_sequence_rank"]["shape"] == [3, 1]
    anvil_matches_onnxruntime(tmp_path, onnx_model, RNG.standard_normal((1, 2, 4, 3)).astype(np.float32))


@pytest.mark.parametrize("opset", [13, 18])
def test_softmax_over_vector_features_written_out(tmp_path, opset):
    """softmax(v) = exp(v − max v) / Σ exp(v − max v) over the features of a Gemm's [N, F] output,
    as ONNX's expanded Softmax writes it (ReduceMax, ReduceSum with keepdims over axis 1): each
    reduction a Reshape to a length-F sequence and a global pooling; Anvil matches ONNX Runtime."""
    N = helper.make_node
    axes = {"axes": [1]} if opset < 18 else {}
    nodes = [N("Flatten", ["x"], ["f"]), N("Gemm", ["f", "w"], ["v"], transB=1),
             N("ReduceMax", ["v"] + ([] if opset < 18 else ["axes"]), ["peak"], keepdims=1, name="peak", **axes),
             N("Sub", ["v", "peak"], ["shifted"]), N("Exp", ["shifted"], ["e"]),
             N("ReduceSum", ["e", "axes"], ["total"], keepdims=1, name="total"), N("Div", ["e", "total"], ["y"])]
    onnx_model = model(nodes, [("w", RNG.standard_normal((6, 12)) * 3), ("axes", np.array([1]))],
                       input_shape=(1, 3, 2, 2), opset=opset)
    writer = OnnxConverter(onnx_model).convert()
    by_name = {layer["name"]: layer for layer in writer.layers}
    assert by_name["peak_features"]["shape"] == [6, 1] and by_name["peak"]["type"] == "GlobalMaxPooling"
    assert by_name["total_sum"]["function"] == {"type": "linear", "a": 6.0, "b": 0.0}
    anvil_matches_onnxruntime(tmp_path, onnx_model, RNG.standard_normal((1, 3, 2, 2)).astype(np.float32))


# -- integer graph inputs: token ids into an embedding table, a mask from a comparison ---------

@pytest.mark.parametrize("axis", [0, 1])
def test_embedding_by_token_ids_matches_onnxruntime(tmp_path, axis):
    """Gather of a constant table by an int64 graph input (token ids, some from the end), then a
    padding mask (ids == 0) that zeroes their rows: converted to Embedding, Elementwise(equal) and
    Select, and run with `anvil run` (integers given as float32 numbers) against ONNX Runtime."""
    onnxruntime = pytest.importorskip("onnxruntime")
    require_anvil()
    rng = np.random.default_rng(45)
    table = rng.standard_normal((11, 6) if axis == 0 else (3, 11)).astype(np.float32)
    ids = np.array([[0, 3, -1, 10, 0, 7, -11]], dtype=np.int64)
    gathered_rank = 3
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["rows"], axis=axis),
        helper.make_node("Equal", ["ids", "zero"], ["padding"]),
        helper.make_node("Unsqueeze", ["padding", "last"], ["mask"]),
        helper.make_node("Where", ["mask", "fill", "rows"], ["y"]),
    ] if axis == 0 else [helper.make_node("Gather", ["table", "ids"], ["y"], axis=axis)]
    out_shape = [1, 7, 6] if axis == 0 else [3, 1, 7]
    graph = helper.make_graph(
        nodes, "embedding",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        [numpy_helper.from_array(table, "table"), numpy_helper.from_array(np.array(0, np.int64), "zero"),
         numpy_helper.from_array(np.array([-1], np.int64), "last"), numpy_helper.from_array(np.array(0, np.float32), "fill")])
    onnx_model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx_model.ir_version = 8
    path = tmp_path / "model.onnx"
    onnx.save(onnx_model, str(path))
    assert gathered_rank == len(out_shape)
    layouts = tmp_path / "layouts.json"
    convert_with_layouts(str(path), str(tmp_path / "out"), layouts=str(layouts))
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    want = session.run(None, {"ids": ids})[0]
    got = run_anvil(tmp_path / "out" / "model.json", [ids.astype(np.float32)])[0]
    # Anvil axis perm[i] holds ONNX axis i; an Anvil axis no ONNX axis maps to has extent 1.
    layout = Layout(json.loads(layouts.read_text())["y"])
    held = got.reshape((1,) + layout.shape)
    order = list(layout.perm) + [a for a in range(held.ndim) if a not in layout.perm]
    np.testing.assert_array_equal(held.transpose(order).reshape(want.shape), want)


@pytest.mark.parametrize("mode, pads, value", [("wrap", [0, 0, 1, 2, 0, 0, 2, 1], 0.0), ("constant", [0, 1, -1, 2, 0, 0, 1, -2], 2.5),
                                               ("reflect", [0, 0, 2, 0, 0, 0, 0, 3], 0.0), ("edge", [0, 2, 0, 1, 0, 1, 3, 0], 0.0)])
def test_pad_modes_crops_and_channels_match_onnxruntime(tmp_path, mode, pads, value):
    """Pad in wrap mode, negative pads (a crop) with a fill value, and pads of the channels: the
    general form (a Take, and an Add of the fill value) against ONNX Runtime."""
    x = np.random.default_rng(12).standard_normal((1, 3, 6, 7)).astype(np.float32)
    nodes = [helper.make_node("Pad", ["x", "p", "v"], ["y"], mode=mode)]
    onnx_model = model(nodes, [("p", np.array(pads)), ("v", np.array(value, np.float32))], input_shape=(1, 3, 6, 7))
    anvil_matches_onnxruntime(tmp_path, onnx_model, x)
