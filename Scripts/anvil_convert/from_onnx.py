"""Converts an ONNX model to an Anvil model file: a thin front end to `anvil convert`.

    .venv/bin/python Scripts/convert_onnx.py model.onnx out/ [--name NAME] [--input-shape C,H,W]

The converter itself is Swift (Sources/AnvilONNX, `anvil convert model.onnx out/`): one
implementation, so the Python and Swift paths cannot drift, and a Python conversion needed a
built `anvil` anyway (to load what it wrote). This module keeps the Python API the tests and
fixture scripts use — `OnnxConverter(model).convert()` returns a ModelWriter holding what
`anvil convert` wrote, `convert_file(path, out)` — and raises ConversionError with `blockers`
(every node that cannot be converted, one line each) from anvil's message.

The executable: $ANVIL, else .build/debug/anvil, else `swift build --product anvil` is run.
Writes out/model.json and out/weights.bin with layout "pytorch". Supported operators and errors:
docs/converters.md (`anvil convert --operators` lists the operators).
"""

import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

from . import cli
from .writer import WRITTEN_LOG, ConversionError, ModelWriter

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLOAT_MAX = 3.4028234663852886e38


def standard_perm(rank):
    """Where ONNX's axes sit in Anvil's channels-last layout for a tensor converted as is:
    NCHW → NHWC (0, 3, 1, 2), NCL → NLC (0, 2, 1), any other rank in ONNX's order."""
    return {4: (0, 3, 1, 2), 3: (0, 2, 1)}.get(rank, tuple(range(rank)))


class Layout:
    """Where an ONNX graph input or output sits in Anvil's tensors (`anvil convert --layouts`):
    the Anvil name, Anvil's shape after the batch axis (None: open), `perm` (which Anvil axis
    holds each ONNX axis) and the Anvil rank."""

    def __init__(self, entry):
        """From one entry of the layouts JSON."""
        self.name = entry["name"]
        self.shape = tuple(entry["shape"])
        self.perm = tuple(entry["permutation"])
        self.anvil_rank = entry["anvilRank"]

    @property
    def rank(self):
        """The rank counting the batch axis (ONNX's)."""
        return len(self.shape) + 1

    @property
    def standard(self):
        """Whether ONNX's axes sit where converting as is puts them (channels last)."""
        return self.perm == standard_perm(self.rank)

    @property
    def onnx_shape(self):
        """The shape as ONNX sees it (batch 1)."""
        full = (1,) + self.shape
        return [full[a] for a in self.perm]


def anvil_executable():
    """The `anvil` executable: $ANVIL, else .build/debug/anvil, else built with `swift build`."""
    path = os.environ.get("ANVIL")
    if path:
        return path
    default = os.path.join(REPOSITORY, ".build", "debug", "anvil")
    if os.path.isfile(default) and os.access(default, os.X_OK):
        return default
    try:
        subprocess.run(["swift", "build", "--product", "anvil"], cwd=REPOSITORY, check=True, stdout=subprocess.DEVNULL)
        binary = subprocess.run(["swift", "build", "--show-bin-path"], cwd=REPOSITORY, check=True,
                                capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as error:
        raise ConversionError(f"the ONNX converter is `anvil convert`, which could not be built ({error}); "
                              "build it with `swift build --product anvil` or set ANVIL") from error
    return os.path.join(binary, "anvil")


def supported_operators():
    """The ONNX operators `anvil convert` supports (`anvil convert --operators`)."""
    completed = subprocess.run([anvil_executable(), "convert", "--operators"], capture_output=True, text=True, check=True)
    return set(completed.stdout.split())


def blocker_error(message):
    """The ConversionError for anvil's message, its `blockers` the lines it lists."""
    lines = message.splitlines()
    if len(lines) > 1 and re.match(r"^\d+ blockers \(every one this run found\):$", lines[0]):
        blockers = [line[2:] for line in lines[1:] if line.startswith("  ") and not line.startswith("  (")]
    else:
        blockers = [re.sub(r" \(\d+ later nodes? read only what .* not checked\)$", "", message)]
    error = ConversionError(message)
    error.blockers = blockers
    return error


def read_written(directory):
    """A ModelWriter holding the model file `anvil convert` wrote into `directory`."""
    with open(os.path.join(directory, "model.json")) as handle:
        document = json.load(handle)
    writer = ModelWriter(document.get("name", "onnx"), layout="pytorch")
    writer.inputs = document["inputs"]
    writer.layers = document["layers"]
    writer.outputs = document["outputs"]
    writer._names = {i["name"] for i in writer.inputs} | {layer["name"] for layer in writer.layers}
    parameters = document.get("parameters")
    if parameters:
        writer.layout = parameters["layout"]
        blob = np.fromfile(os.path.join(directory, parameters["source"]["path"]), "<f4")
        for name, entry in parameters["source"]["tensors"].items():
            start = entry["offset"] // 4
            writer.tensors[name] = blob[start:start + entry["count"]].copy()
    return writer


def run_anvil(onnx_path, directory, name=None, input_shape=None, layouts=None):
    """Runs `anvil convert`; returns the ModelWriter it wrote, or raises ConversionError."""
    command = [anvil_executable(), "convert", onnx_path, directory]
    if name:
        command += ["--name", name]
    if input_shape is not None:
        command += ["--input-shape", ",".join(str(int(v)) for v in input_shape)]
    if layouts is not None:
        command += ["--layouts", layouts]
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        message = completed.stderr.strip() or completed.stdout.strip() or f"anvil convert exited {completed.returncode}"
        if message.startswith("anvil: "):
            message = message[len("anvil: "):]
        raise blocker_error(message)
    return read_written(directory)


class OnnxConverter:
    """Converts an onnx ModelProto with `anvil convert`. After `convert()`, `values` holds the
    Layout of each graph input and `output_tensors` that of each graph output (by ONNX name)."""

    def __init__(self, model, name=None, input_shape=None):
        """`input_shape` (C, H, W) fills in open input dimensions."""
        self.model = model
        self.name = name
        self.input_shape = input_shape
        self.values = {}
        self.output_tensors = {}

    def convert(self):
        """The ModelWriter of the converted model (ConversionError listing every blocker if not)."""
        import onnx
        with tempfile.TemporaryDirectory(prefix="anvil_onnx_") as work:
            path = os.path.join(work, "model.onnx")
            onnx.save_model(self.model, path)
            layouts = os.path.join(work, "layouts.json")
            writer = run_anvil(path, os.path.join(work, "out"), name=self.name, input_shape=self.input_shape,
                               layouts=layouts)
            with open(layouts) as handle:
                entries = json.load(handle)
        outputs = {o.name for o in self.model.graph.output}
        for onnx_name, entry in entries.items():
            (self.output_tensors if onnx_name in outputs else self.values)[onnx_name] = Layout(entry)
            if onnx_name in outputs and any(i.name == onnx_name for i in self.model.graph.input):
                self.values[onnx_name] = Layout(entry)
        if self.name is None and not self.model.graph.name:
            writer.name = "onnx"
        return writer


def convert_file(path, output_directory, name=None, input_shape=None):
    """Converts the .onnx file at `path` into `output_directory` (external data read next to it);
    returns the ModelWriter."""
    if not os.path.isfile(path):
        raise ConversionError(f"cannot load ONNX model '{path}': no such file")
    writer = run_anvil(path, output_directory, name=name, input_shape=input_shape)
    log = os.environ.get(WRITTEN_LOG)
    if log:  # the pytest suite loads every model written (Scripts/tests/conftest.py)
        with open(log, "a") as handle:
            handle.write(os.path.abspath(os.path.join(output_directory, "model.json")) + "\n")
    return writer


def main(argv=None):
    """The `convert_onnx` command line; returns the exit status."""
    return cli.file_main("onnx", __doc__.split("\n")[0], [("model", "an .onnx file")],
                         "an .onnx file and an output directory",
                         ("CHW", "C,H,W for inputs with open dimensions"), convert_file, argv)


if __name__ == "__main__":
    sys.exit(main())
