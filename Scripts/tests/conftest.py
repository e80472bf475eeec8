"""pytest setup for the anvil_convert tests: makes Scripts/ (the package) and
Scripts/fixtures/ (the fixture builders some tests reuse) importable without installing, and
checks that every model a test writes loads in Anvil.

The load check: ModelWriter.write logs each model.json it writes (environment variable
ANVIL_CONVERT_WRITTEN, set per test here, so converters run as subprocesses are seen too);
after the test, each is run once by the Swift `anvil run` on all-zero inputs, which parses it,
reads its weights, compiles it and predicts; a model Anvil refuses fails the test (a teardown
error naming the model and Anvil's message). This asks the engine itself rather than
re-stating its rules in Python, so it follows every layer the engine gains. The executable:
$ANVIL, else .build/debug/anvil (Scripts/test.sh builds before running pytest and sets
ANVIL_LOAD_CHECK=required; without an executable the check is skipped with a note unless that is
set). A test that writes an invalid model on purpose is marked `@pytest.mark.unloadable`.
"""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

SCRIPTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPOSITORY = os.path.dirname(SCRIPTS)
FIXTURES = os.path.join(REPOSITORY, "Tests", "AnvilTests", "Fixtures")
# mnist/ and zoo/: read by several Swift test targets, so kept in the shared test-support target.
SHARED_FIXTURES = os.path.join(REPOSITORY, "Tests", "AnvilTestSupport", "Fixtures")

for path in (SCRIPTS, os.path.join(SCRIPTS, "fixtures")):
    if path not in sys.path:
        sys.path.insert(0, path)

from anvil_convert.writer import WRITTEN_LOG  # noqa: E402


def pytest_configure(config):
    """Registers the `unloadable` marker."""
    config.addinivalue_line("markers", "unloadable: the test writes a model Anvil must refuse; no load check")


def anvil_executable():
    """The anvil executable for the load check, or None when there is none."""
    path = os.environ.get("ANVIL") or os.path.join(REPOSITORY, ".build", "debug", "anvil")
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def load_problem(anvil, model_path):
    """None when Anvil loads, compiles and runs `model_path` on zeros, else Anvil's message."""
    with open(model_path) as handle:
        document = json.load(handle)
    shapes = [entry.get("shape") for entry in document.get("inputs", [])]
    with tempfile.TemporaryDirectory(prefix="load_check_") as work:
        fixed = all(isinstance(s, list) and s and all(isinstance(v, int) and v > 0 for v in s) for s in shapes)
        if fixed:
            command = [anvil, "run", "--model", model_path]
            for i, shape in enumerate(shapes):
                path = os.path.join(work, f"input_{i}.f32")
                np.zeros(int(np.prod(shape)), "<f4").tofile(path)
                command += ["--input", path]
            for i, _ in enumerate(document.get("outputs", [])):
                command += ["--output", os.path.join(work, f"output_{i}.f32")]
        else:  # open input sizes: parse and check the file only
            command = [anvil, "summary", model_path]
        completed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    if completed.returncode == 0:
        return None
    return (completed.stderr.strip() or completed.stdout.strip()).splitlines()[0]


_NOTED = []


@pytest.fixture(autouse=True)
def written_models_load(request, tmp_path_factory, monkeypatch):
    """After each test: every model.json it wrote must load in Anvil (see the module docstring)."""
    log = tmp_path_factory.mktemp("written") / "models.txt"
    monkeypatch.setenv(WRITTEN_LOG, str(log))
    yield
    if request.node.get_closest_marker("unloadable") or not log.exists():
        return
    paths = [p for p in dict.fromkeys(log.read_text().splitlines()) if p and os.path.isfile(p)]
    anvil = anvil_executable()
    if anvil is None:
        if os.environ.get("ANVIL_LOAD_CHECK") == "required":
            pytest.fail("no anvil executable for the load check: swift build first, or set ANVIL")
        if not _NOTED:
            _NOTED.append(True)
            print("\nload check skipped: no anvil executable (swift build, or set ANVIL)", file=sys.stderr)
        return
    problems = [f"{p}: {why}" for p in paths for why in [load_problem(anvil, p)] if why]
    if problems:
        pytest.fail("Anvil cannot load what was written:\n" + "\n".join(problems))
