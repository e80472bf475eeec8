"""Helpers shared by the anvil_convert tests."""

import os
import re
import subprocess
import sys

import pytest

from conftest import FIXTURES, SCRIPTS, SHARED_FIXTURES


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
