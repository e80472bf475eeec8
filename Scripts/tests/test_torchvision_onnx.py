"""The user's path end to end, in the pytest suite: torchvision classifiers with seeded weights,
exported to ONNX (opset 17), converted by Scripts/convert_onnx.py, run by `anvil run` on the
astronaut photograph and compared with ONNX Runtime on the same .onnx file (max error <= 1e-3 of
the output range, same top-1). Scripts/fixtures/torchvision_onnx_check.py does the work; this
runs its --fast subset (small inputs, so it stays within CI time); the whole list at 224 px is
that script's default run, whose table docs/converters.md shows.

Skipped when torch/torchvision, onnxruntime or scikit-image is missing (Scripts/setup.sh installs
them) or when there is no anvil executable (unless ANVIL_LOAD_CHECK=required, as Scripts/test.sh
sets: then that is a failure)."""

import tempfile

import pytest

from helpers import framework, require_anvil

framework("torch")
framework("onnxruntime")
framework("skimage")
framework("onnx")

import torchvision_onnx_check as check  # noqa: E402

# Models whose operators the converter does not take yet, with the part that brings them: strict
# expected failures (once one passes its entry must go). Empty: every --fast model passes.
PENDING = {}


@pytest.fixture(scope="module")
def setting():
    """torchvision, the anvil executable and a scratch directory for the module."""
    from anvil_convert.torch_zoo import import_torchvision
    try:
        torchvision = import_torchvision()
    except Exception as error:  # noqa: BLE001
        pytest.skip(f"torchvision cannot be imported: {error} (Scripts/setup.sh installs it)")
    anvil = require_anvil()
    with tempfile.TemporaryDirectory(prefix="torchvision_onnx_") as work:
        yield torchvision, anvil, work


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.xfail(reason=f"pending: {PENDING[name]}",
                                                                            strict=True))
                                  if name in PENDING else name for name in check.FAST])
def test_torchvision_model_matches_onnxruntime(setting, name):
    """Exported, converted and run, the model matches ONNX Runtime: error <= 1e-3 x range, same top-1."""
    torchvision, anvil, work = setting
    result = check.check(torchvision, name, check.FAST[name], anvil, work)
    assert result["status"] == "ok", check.table([result], verbose=True)
    assert result["ratio"] <= check.TOLERANCE and result["top1"]


def test_the_check_can_fail(setting, monkeypatch):
    """A wrong answer is reported: ONNX Runtime's output perturbed by 1% of its range is a mismatch."""
    torchvision, anvil, work = setting
    real = check.onnxruntime_output

    def perturbed(path, image):
        """ONNX Runtime's output with its first value moved by 1% of the output range."""
        output = real(path, image).copy()
        output.reshape(-1)[0] += 0.01 * float(output.max() - output.min())
        return output

    monkeypatch.setattr(check, "onnxruntime_output", perturbed)
    result = check.check(torchvision, "resnet18", 64, anvil, work)
    assert result["status"] == "mismatch" and result["ratio"] > check.TOLERANCE, result
