"""Ultralytics YOLO exported with open sizes (`dynamic=True`), converted once by `anvil convert`
and run at several input sizes, against ONNX Runtime on the same .onnx file (max error <= 1e-3 of
each output's range): Scripts/fixtures/yolo_onnx_check.py does the work. The exports come from
Scripts/fixtures/model_exports.py's cache (made once per machine, ~10 s each).

Skipped when ultralytics, torch, onnxruntime or scikit-image is missing, or when there is no anvil
executable (unless ANVIL_LOAD_CHECK=required, as Scripts/test.sh sets: then that is a failure)."""

import tempfile

import numpy as np
import pytest

from helpers import framework, require_anvil

framework("torch")
framework("ultralytics")
framework("onnxruntime")
framework("skimage")

import yolo_onnx_check as check  # noqa: E402

SIZES = [(320, 320), (416, 416), (480, 640)]


@pytest.fixture(scope="module")
def setting():
    """The anvil executable and a scratch directory for the module."""
    anvil = require_anvil()
    with tempfile.TemporaryDirectory(prefix="yolo_onnx_") as work:
        yield anvil, work


@pytest.mark.parametrize("name", ["yolov8n", "yolo11n"])
def test_open_size_yolo_matches_onnxruntime_at_every_size(setting, name):
    """Converted once with its size open, the detector matches ONNX Runtime at 320, 416 and 480x640."""
    anvil, work = setting
    rows = check.check(name, SIZES, anvil, work)
    assert [row[0] for row in rows] == SIZES, rows
    for size, status, ratio, detail in rows:
        assert status == "ok" and ratio <= check.TOLERANCE, (size, status, ratio, detail)


def test_the_check_can_fail(setting, monkeypatch):
    """A wrong answer is reported: Anvil's output moved by 1% of its range in one value is a mismatch."""
    anvil, work = setting
    real = check.to_onnx_order

    def perturbed(values, shape):
        """Anvil's output in ONNX's order with its first value moved by 1% of the range."""
        output = np.ascontiguousarray(real(values, shape), dtype=np.float64)
        output.reshape(-1)[0] += 0.01 * float(output.max() - output.min())
        return output

    monkeypatch.setattr(check, "to_onnx_order", perturbed)
    rows = check.check("yolov8n", [(320, 320)], anvil, work)
    assert rows[0][1] == "mismatch" and rows[0][2] > check.TOLERANCE, rows
