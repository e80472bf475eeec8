"""The ONNX conformance import (Scripts/fixtures/import_onnx_tests.py) through the converter:
node tests of operators the converter maps become fixtures made by anvil_convert.from_onnx (the
path every operator without a hand-written mapping takes). Checked here on tests the hand-written
mapping also takes: the converter path gives the same input and expected data, and the model it writes,
run by the Swift `anvil`, reproduces ONNX's stored output. Skipped without onnx 1.22's node
tests or without an anvil executable."""

import os
import subprocess

import numpy as np
import pytest

from helpers import framework

onnx = framework("onnx")

import import_onnx_tests as importer  # noqa: E402
from conftest import anvil_executable  # noqa: E402

CASES = ["test_conv_with_strides_padding", "test_maxpool_2d_pads", "test_averagepool_2d_ceil", "test_batchnorm_example",
         "test_globalaveragepool", "test_resize_upsample_scales_linear", "test_gemm_default_no_bias",
         "test_flatten_default_axis", "test_conv_with_autopad_same", "test_concat_2d_axis_1"]


@pytest.fixture(scope="module")
def root():
    """The node tests of the installed onnx (skip when it has none)."""
    path = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "node")
    if not os.path.isdir(path):
        pytest.skip(f"onnx {onnx.__version__} ships no node tests (pip install onnx==1.22.0)")
    return path


@pytest.mark.parametrize("name", CASES)
def test_converter_path_matches_the_hand_mapping_and_onnx(root, name, tmp_path):
    """Same data as the hand-written mapping; the converted model reproduces ONNX's output in Anvil."""
    test = importer.Test(root, name)
    node, ins, outs = importer.classify(test)
    by_hand = importer.convert_by_hand(test, node, ins, outs)
    converted = importer.convert_via_converter(test, node, ins, outs)
    assert converted.case_json()["via"] == "converter"
    assert len(converted.inputs) == len(by_hand.inputs)
    # the same values and batch; the hand mapping writes every tensor as [N, H, W, C], the converter
    # at Anvil's rank ([N, F] for a vector)
    pairs = list(zip([a for _, a in converted.inputs], [b for _, b in by_hand.inputs]))
    pairs += list(zip(converted.expected, by_hand.expected))
    for a, b in pairs:
        assert a.shape[0] == b.shape[0] and a.size == b.size and np.array_equal(a.reshape(-1), b.reshape(-1))
        assert a.shape[-1] == b.shape[-1]
    anvil = anvil_executable()
    if anvil is None:
        pytest.skip("no anvil executable (swift build, or set ANVIL)")
    directory = tmp_path / "fixture"
    converted.writer().write(str(directory))
    command = [anvil, "run", "--model", str(directory / "model.json")]
    for i, (_, array) in enumerate(converted.inputs):
        array.astype("<f4").tofile(str(tmp_path / f"input_{i}.f32"))
        command += ["--input", str(tmp_path / f"input_{i}.f32"), "--batch", str(array.shape[0])]
    command += ["--output", str(tmp_path / "output.f32")]
    completed = subprocess.run(command, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    got = np.fromfile(str(tmp_path / "output.f32"), dtype="<f4")
    want = converted.expected[0].reshape(-1)
    assert got.shape == want.shape
    assert np.all(np.abs(got - want) <= 1e-3 * np.abs(want) + 1e-5), float(np.max(np.abs(got - want)))


def test_operator_the_converter_lacks_is_pending_with_its_helper(root):
    """A node test of an operator the converter cannot take yet is excluded as pending,
    naming the operator or the tensor rank and the helper who brings it (or imported once it landed)."""
    test = importer.Test(root, "test_lrn")
    node, ins, outs = importer.classify(test)
    try:
        fixture = importer.convert(test, node, ins, outs)
    except importer.Skip as skip:
        assert str(skip).startswith("pending: ") and "helper" in str(skip), skip
    else:
        assert fixture.case_json()["via"] == "converter"


@pytest.mark.parametrize("name", ["test_hardsigmoid_expanded_ver18", "test_swish_expanded",
                                  "test_softmax_example_expanded"])
def test_expanded_function_body_goes_through_the_converter(root, name, tmp_path):
    """A node test of several nodes (an expanded function body with Constant, CastLike, ...) is
    converted as one graph (rank-1 data lifted by a batch axis of 1), and the model reproduces
    ONNX's stored output in Anvil."""
    test = importer.Test(root, name)
    assert len(test.nodes) > 1
    node, ins, outs = importer.classify(test)
    assert node is None
    fixture = importer.convert(test, node, ins, outs)
    assert fixture.case_json()["via"] == "converter" and fixture.op.endswith("(function body)")
    anvil = anvil_executable()
    if anvil is None:
        pytest.skip("no anvil executable (swift build, or set ANVIL)")
    directory = tmp_path / "fixture"
    fixture.writer().write(str(directory))
    command = [anvil, "run", "--model", str(directory / "model.json")]
    for i, (_, array) in enumerate(fixture.inputs):
        array.astype("<f4").tofile(str(tmp_path / f"input_{i}.f32"))
        command += ["--input", str(tmp_path / f"input_{i}.f32"), "--batch", str(array.shape[0])]
    command += ["--output", str(tmp_path / "output.f32")]
    completed = subprocess.run(command, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    got = np.fromfile(str(tmp_path / "output.f32"), dtype="<f4")
    # ONNX's stored output in Anvil's layout of the output tensor (channels last): the same values
    want = fixture.expected[0]
    assert np.array_equal(np.sort(want.reshape(-1)), np.sort(outs[0].reshape(-1)))
    want = want.reshape(-1)
    assert got.shape == want.shape
    assert np.all(np.abs(got - want) <= 1e-3 * np.abs(want) + 1e-5), float(np.max(np.abs(got - want)))


def test_expanded_body_with_comparisons_is_excluded_with_the_converters_blockers(root):
    """An expanded body using Less/Where is excluded with the converter's own blockers, each naming its operator."""
    test = importer.Test(root, "test_leakyrelu_expanded")
    node, ins, outs = importer.classify(test)
    with pytest.raises(importer.Skip) as skip:
        importer.convert(test, node, ins, outs)
    assert str(skip.value).startswith("converter: ") and "Less: " in str(skip.value) and "Where: " in str(skip.value)
