"""Tests of the shared command line (anvil_convert.cli) through the Scripts/convert_*.py
entry points users run: usage errors, one-line conversion errors, output, --self-test."""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from anvil_convert.from_caffe import encode_caffemodel
from conftest import SCRIPTS
from helpers import one_line_error, run_script

PROTOTXT = ('input: "data" input_dim: 1 input_dim: 3 input_dim: 8 input_dim: 8\n'
            'layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1" '
            'convolution_param { num_output: 4 kernel_size: 3 } }\n'
            'layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }\n')


def has(module):
    """Whether `module` can be imported here."""
    return importlib.util.find_spec(module) is not None


@pytest.fixture
def caffe_files(tmp_path):
    """A small prototxt and its caffemodel in tmp_path; returns their paths."""
    prototxt, caffemodel = tmp_path / "deploy.prototxt", tmp_path / "weights.caffemodel"
    prototxt.write_text(PROTOTXT)
    weights = [np.ones((4, 3, 3, 3), np.float32), np.zeros(4, np.float32)]
    caffemodel.write_bytes(encode_caffemodel([("conv1", "Convolution", weights)]))
    return str(prototxt), str(caffemodel)


@pytest.mark.parametrize("tool", ["pytorch", "keras", "caffe", "onnx"])
def test_help_names_the_common_options(tool):
    """Every entry point answers --help with the shared --name and --self-test options."""
    if tool == "pytorch" and not has("torch"):
        pytest.skip("torch is not installed (convert_pytorch imports it)")
    completed = run_script(f"convert_{tool}.py", "--help")
    assert completed.returncode == 0 and f"usage: convert_{tool}" in completed.stdout
    assert "--name" in completed.stdout and "--self-test" in completed.stdout


@pytest.mark.parametrize("tool, fragment", [("keras", "give a model file and an output directory"),
                                            ("caffe", "give a prototxt, a caffemodel and an output directory"),
                                            ("onnx", "give an .onnx file and an output directory")])
def test_missing_arguments_are_usage_errors(tool, fragment):
    """Without its files a converter prints usage and exits 2."""
    completed = run_script(f"convert_{tool}.py")
    assert completed.returncode == 2 and fragment in completed.stderr


@pytest.mark.parametrize("shape", ["3,8", "a,b,c", "3,0,8"])
def test_malformed_input_shape_is_a_usage_error(caffe_files, tmp_path, shape):
    """--input-shape must be C,H,W positive integers (H,W for Keras)."""
    completed = run_script("convert_caffe.py", *caffe_files, str(tmp_path / "out"), "--input-shape", shape)
    assert completed.returncode == 2 and "--input-shape" in completed.stderr


def test_success_writes_the_model_and_reports_it(caffe_files, tmp_path):
    """A conversion writes model.json + weights.bin and prints one summary line."""
    out = str(tmp_path / "out")
    completed = run_script("convert_caffe.py", *caffe_files, out, "--name", "tiny")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith(f"convert_caffe: wrote {os.path.join(out, 'model.json')} (2 layers")
    with open(os.path.join(out, "model.json")) as handle:
        assert json.load(handle)["name"] == "tiny"
    assert os.path.getsize(os.path.join(out, "weights.bin")) == (108 + 4) * 4


def test_unconvertible_model_is_one_line_on_stderr(caffe_files, tmp_path):
    """A layer Anvil lacks: exit 1 and one line naming it, nothing written."""
    prototxt = tmp_path / "argmax.prototxt"
    prototxt.write_text(PROTOTXT + 'layer { name: "top1" type: "ArgMax" bottom: "conv1" top: "top1" }\n')
    completed = run_script("convert_caffe.py", str(prototxt), caffe_files[1], str(tmp_path / "out"))
    line = one_line_error(completed, "caffe")
    assert "'top1' (ArgMax)" in line and not os.path.exists(tmp_path / "out")


def test_missing_file_is_one_line_on_stderr(tmp_path):
    """An input file that does not exist: exit 1 and one line, no traceback."""
    missing = str(tmp_path / "nope.prototxt")
    line = one_line_error(run_script("convert_caffe.py", missing, missing, str(tmp_path / "out")), "caffe")
    assert "nope.prototxt" in line


def test_package_modules_run_with_python_m(caffe_files, tmp_path):
    """`python3 -m anvil_convert.from_caffe` from Scripts/ is the same command line."""
    completed = subprocess.run([sys.executable, "-m", "anvil_convert.from_caffe", *caffe_files, str(tmp_path / "o")],
                               capture_output=True, text=True, cwd=SCRIPTS, timeout=120)
    assert completed.returncode == 0 and completed.stdout.startswith("convert_caffe: wrote")


def test_self_test_runs_the_converters_pytest_tests():
    """--self-test runs Scripts/tests/test_<tool>.py and exits with its status."""
    completed = run_script("convert_caffe.py", "--self-test")
    assert completed.returncode == 0, completed.stdout[-2000:]
    assert " passed" in completed.stdout


@pytest.mark.skipif(not has("torch"), reason="torch is not installed (convert_pytorch needs it)")
def test_pytorch_command_line(tmp_path, capsys):
    """convert_pytorch (in-process, torch is slow to import): --out and a source are required,
    a missing --model file is one error line, a reduced zoo network converts and reports its input."""
    from anvil_convert.from_pytorch import main
    for argv in (["--torchvision", "resnet18"], ["--out", str(tmp_path)]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
    capsys.readouterr()
    assert main(["--model", str(tmp_path / "none.pt"), "--input-size", "8", "--out", str(tmp_path / "x")]) == 1
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and error[0].startswith("convert_pytorch: error: ") and "none.pt" in error[0]
    assert main(["--torchvision", "resnet18", "--width", "0.125", "--classes", "10", "--input-size", "32",
                 "--out", str(tmp_path / "r")]) == 0
    output = capsys.readouterr().out
    assert "input [32, 32, 3]" in output and "convert_pytorch: wrote" in output
