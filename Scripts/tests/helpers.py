"""Helpers shared by the anvil_convert tests."""

import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from conftest import FIXTURES, SCRIPTS, SHARED_FIXTURES, anvil_executable


def framework(name):
    """The module `name`, or skip the calling test with the reason it is missing."""
    return pytest.importorskip(name, reason=f"{name} is not installed (the {name} converter tests need it)")


def conversion_error(convert, *fragments):
    """Runs `convert()`, which must raise ConversionError; returns the message after checking
    that it contains every fragment (the layer/node name, its type, the reason)."""
    from anvil_convert.writer import ConversionError
    with pytest.raises(ConversionError) as raised:
        convert()
    message = str(raised.value)
    missing = [f for f in fragments if f not in message]
    assert not missing, f"message {message!r} lacks {missing}"
    return message


def run_script(name, *arguments, cwd=None):
    """Runs `python3 Scripts/<name> arguments...`; returns the CompletedProcess (text)."""
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, name), *arguments], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def same_files(directory, committed, names=("model.json", "weights.bin")):
    """Asserts that each file in `names` is byte-identical in both directories."""
    for name in names:
        with open(os.path.join(directory, name), "rb") as a, open(os.path.join(committed, name), "rb") as b:
            assert a.read() == b.read(), f"{name} differs from {committed}"


def committed_fixture(*parts):
    """The path of a committed fixture directory: mnist/ and zoo/ under
    Tests/AnvilTestSupport/Fixtures (shared by several Swift test targets), the others under
    Tests/AnvilTests/Fixtures."""
    if parts and parts[0] in ("mnist", "zoo"):
        return os.path.join(SHARED_FIXTURES, *parts)
    return os.path.join(FIXTURES, *parts)


def one_line_error(completed, tool):
    """Asserts exit status 1 and a single `convert_<tool>: error: ...` line on stderr; returns it."""
    assert completed.returncode == 1, completed
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and re.match(rf"convert_{tool}: error: \S", lines[0]), completed.stderr
    return lines[0]


def require_anvil():
    """The anvil executable ($ANVIL, else .build/debug/anvil); skips the calling test when there is
    none, or fails it when ANVIL_LOAD_CHECK=required (Scripts/test.sh)."""
    anvil = anvil_executable()
    if anvil is None:
        if os.environ.get("ANVIL_LOAD_CHECK") == "required":
            pytest.fail("no anvil executable: swift build first, or set ANVIL")
        pytest.skip("no anvil executable (swift build, or set ANVIL)")
    return anvil


def run_anvil(model_path, inputs, outputs=1, shape=None, batch=None):
    """`anvil run` on the model file: `inputs` are arrays in Anvil's channels-last layout (written as
    little-endian float32), `shape` the per-item size (H, W, C ...) of an open input (--shape),
    `batch` the batch size (--batch per input); returns the `outputs` outputs, flat float32. Asserts
    that anvil succeeds; skips as `require_anvil`."""
    anvil = require_anvil()
    command = [anvil, "run", "--model", str(model_path)]
    if shape is not None:
        command += ["--shape", "x".join(str(d) for d in shape)]
    with tempfile.TemporaryDirectory(prefix="anvil_run_") as work:
        for i, x in enumerate(inputs):
            path = os.path.join(work, f"input_{i}.f32")
            np.asarray(x).astype("<f4").tofile(path)
            command += ["--input", path] + ([] if batch is None else ["--batch", str(batch)])
        paths = [os.path.join(work, f"output_{i}.f32") for i in range(outputs)]
        for path in paths:
            command += ["--output", path]
        completed = subprocess.run(command, capture_output=True, text=True, timeout=300)
        assert completed.returncode == 0, completed.stderr
        return [np.fromfile(path, "<f4") for path in paths]
