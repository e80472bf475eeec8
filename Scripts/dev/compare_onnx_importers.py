"""Checks that the Swift ONNX importer (`anvil convert`) writes what the Python converter wrote
(anvil_convert.from_onnx + onnx_ops/*.py as of commit PYTHON_REVISION, the last before it became a
front end to `anvil convert`; read from git into a temporary package), on every ONNX node test of the onnx 1.22.0 wheel (or the
.onnx files given): the same model.json (numbers to 1e-6 relative) and the same weights, or both
refusing. Prints one line per difference and a count; exit status 1 when any differ.

    ANVIL=.build/debug/anvil .venv/bin/python Scripts/dev/compare_onnx_importers.py [model.onnx ...]
"""

import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

PYTHON_REVISION = "0a4ea5d"
FILES = ["__init__.py", "cli.py", "writer.py", "from_onnx.py", "onnx_ops/__init__.py", "onnx_ops/elementwise.py",
         "onnx_ops/layers.py", "onnx_ops/layout.py", "onnx_ops/tensors.py"]


def python_converter():
    """The Python converter of PYTHON_REVISION as an importable package `anvil_convert` (from git)."""
    repository = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    root = tempfile.mkdtemp(prefix="python_onnx_converter_")
    for name in FILES:
        text = subprocess.run(["git", "-C", repository, "show", f"{PYTHON_REVISION}:Scripts/anvil_convert/{name}"],
                              check=True, capture_output=True, text=True).stdout
        os.makedirs(os.path.dirname(os.path.join(root, "anvil_convert", name)), exist_ok=True)
        with open(os.path.join(root, "anvil_convert", name), "w") as handle:
            handle.write(text)
    sys.path.insert(0, root)


python_converter()
from anvil_convert import from_onnx  # noqa: E402
from anvil_convert.writer import ConversionError, format_json  # noqa: E402


def same(a, b, path="$"):
    """The first difference between two JSON values (None when equal; floats to 1e-6 relative)."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{path}: keys {sorted(a)} != {sorted(b)}"
        for key in a:
            d = same(a[key], b[key], f"{path}.{key}")
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {a} != {b}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = same(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        if a == b or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-30):
            return None
        return f"{path}: {a} != {b}"
    return None if a == b else f"{path}: {a!r} != {b!r}"


def compare(anvil, path):
    """None when both converters agree on `path`, else a one-line difference."""
    import onnx
    with tempfile.TemporaryDirectory() as directory:
        try:
            model = onnx.load(path)
            writer = from_onnx.OnnxConverter(model).convert()
            python_json, python_blob = writer.document()
            python_error = None
        except ConversionError as error:
            python_error = str(error)
            python_blockers = list(getattr(error, "blockers", [python_error]))
        except Exception as error:  # noqa: BLE001 - a crash of the Python side is reported, not fatal
            python_error = f"python crashed: {type(error).__name__}: {error}"
        result = subprocess.run([anvil, "convert", path, directory], capture_output=True, text=True)
        if python_error is not None:
            if result.returncode != 0:
                REFUSED.append(path)
                swift_blockers = swift_blocker_lines(result.stderr)
                if python_error.startswith("python crashed"):
                    return None
                if [trim(b) for b in python_blockers] != [trim(b) for b in swift_blockers]:
                    return f"both refuse, with other blockers:\n    python: {python_blockers}\n    swift:  {swift_blockers}"
                return None
            return None if result.returncode != 0 else f"python refuses ({python_error.splitlines()[0]}), swift converts"
        if result.returncode != 0:
            return f"swift refuses: {result.stderr.strip().splitlines()[0] if result.stderr.strip() else result.returncode}"
        with open(os.path.join(directory, "model.json")) as handle:
            swift_text = handle.read()
        swift_json = json.loads(swift_text)
        difference = same(python_json, swift_json)
        if difference:
            return difference
        if swift_text != format_json(python_json) + "\n":
            lines = [(a, b) for a, b in zip(swift_text.splitlines(), (format_json(python_json) + "\n").splitlines()) if a != b]
            return f"model.json text differs (key order or number format): {lines[:1]}"
        blob_path = os.path.join(directory, "weights.bin")
        swift_blob = open(blob_path, "rb").read() if os.path.exists(blob_path) else b""
        a = np.frombuffer(python_blob, "<f4")
        b = np.frombuffer(swift_blob, "<f4")
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-6, atol=1e-30):
            return f"weights differ ({a.size} vs {b.size} values)"
        CONVERTED.append(path)
        return None


def trim(blocker):
    """A blocker without the count of unchecked later nodes (shape inference differs)."""
    return re.sub(r" \(\d+ later nodes? read only what .* not checked\)$", "", blocker)


def swift_blocker_lines(stderr):
    """The blockers `anvil convert` printed (one line, or a count line and indented lines)."""
    text = stderr.strip()
    if text.startswith("anvil: "):
        text = text[len("anvil: "):]
    lines = text.splitlines()
    if len(lines) > 1 and "blockers (every one this run found)" in lines[0]:
        return [line.strip() for line in lines[1:] if not line.strip().startswith("(")]
    return [text]


CONVERTED, REFUSED = [], []  # the models both converted / both refused


def main(argv):
    anvil = os.environ.get("ANVIL", ".build/debug/anvil")
    paths = argv or sorted(glob.glob(os.path.join(os.path.dirname(__import__("onnx").__file__),
                                                  "backend/test/data/node/*/model.onnx")))
    differences = 0
    for path in paths:
        d = compare(anvil, path)
        if d:
            differences += 1
            print(f"{os.path.basename(os.path.dirname(path)) or path}: {d}")
    print(f"{len(paths)} models: {len(CONVERTED)} converted alike, {len(REFUSED)} refused by both, {differences} differ")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
