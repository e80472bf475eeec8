"""Writes Anvil model files (docs/model-format.md): a JSON graph plus one float32 blob.

The Python converters of this package (from_pytorch, from_keras, from_caffe) build a ModelWriter
and call `write` (from_onnx returns one holding what `anvil convert` wrote). Only numpy is needed.

    writer = ModelWriter("tiny", layout="pytorch")
    writer.add_input("image", (32, 32, 3))
    writer.add_layer("conv1", "Convolution", ["image"], kernel=[3, 3], channels=8, padding="same")
    writer.add_tensor("conv1_W", weights)       # any float array, written as little-endian float32
    writer.add_tensor("conv1_b", bias)
    writer.set_outputs(["conv1"])
    writer.write("out/")                       # out/model.json + out/weights.bin

The JSON text has one of three layouts (`json_style`), all the same document: "nested"
(the default: two-space indentation, small objects on one line), "expanded" (every object
over several lines) and "layer_lines" (one line per layer and per tensor entry, for large
graphs). Each committed fixture keeps the layout it was written in.
"""

import json
import os
import re

import numpy as np


class ConversionError(Exception):
    """A model cannot be converted; the message names the layer/node and why."""


JSON_STYLES = ("nested", "expanded", "layer_lines")

# When set, `write` appends the path of every model.json it writes to this file: the pytest
# suite sets it and then loads each of those models with the Swift `anvil` (conftest.py).
WRITTEN_LOG = "ANVIL_CONVERT_WRITTEN"


_NAME_PATTERN = re.compile(r"[^A-Za-z0-9_.\-]")


def sanitize_name(name, fallback="layer"):
    """A readable Anvil name: letters, digits, '_', '.', '-' (others become '_')."""
    cleaned = _NAME_PATTERN.sub("_", name or "").strip("_")
    return cleaned or fallback


class ModelWriter:
    """Collects inputs, layers and parameter tensors, then writes model.json + weights.bin."""

    def __init__(self, name, layout):
        """`layout` is how weight tensors are ordered: "forge", "pytorch" or "tensorflow"."""
        if layout not in ("forge", "pytorch", "tensorflow"):
            raise ValueError(f"unknown layout {layout!r}")
        self.name = name
        self.layout = layout
        self.inputs = []
        self.layers = []
        self.outputs = []
        self.tensors = {}  # name -> float32 array (C order), insertion ordered
        self._names = set()
        self._shapes = {}

    # -- names --------------------------------------------------------------------------

    def unique_name(self, wanted):
        """`wanted` sanitised, with `_2`, `_3`, ... appended if already taken."""
        base = sanitize_name(wanted)
        name, k = base, 2
        while name in self._names:
            name, k = f"{base}_{k}", k + 1
        return name

    def has(self, name):
        """Whether `name` is already an input or a layer."""
        return name in self._names

    # -- graph ----------------------------------------------------------------------------

    def add_input(self, name, shape_hwc):
        """A graph input: one image `[height, width, channels]`, a sequence `[length, channels]` or a
        vector `[features]` (the axes after the batch axis). Every axis but the channels may be
        None: open (any size at predict, written as null)."""
        if name in self._names:
            raise ConversionError(f"the name '{name}' is used twice")
        shape = [None if v is None else int(v) for v in shape_hwc]
        if (not 1 <= len(shape) <= 3 or shape[-1] is None or any(v is not None and v <= 0 for v in shape)
                or (len(shape) == 1 and shape[0] is None)):
            raise ConversionError(f"input '{name}' needs a positive [height, width, channels], [length, channels] "
                                  f"or [features] shape (all but the channels may be None: open), got {shape}")
        self._names.add(name)
        self.inputs.append({"name": name, "shape": shape})
        return name

    def add_layer(self, name, layer_type, inputs, **options):
        """A layer; options are model-file fields (`kernel=[3, 3]`, `padding="same"`, ...)."""
        if name in self._names:
            raise ConversionError(f"the name '{name}' is used twice")
        for source in inputs:
            if source not in self._names:
                raise ConversionError(f"layer '{name}' reads '{source}', which has not been written yet")
        self._names.add(name)
        layer = {"name": name, "type": layer_type, "inputs": list(inputs)}
        for key, value in options.items():
            if value is not None:
                layer[key] = _plain(value)
        self.layers.append(layer)
        return name

    def add_tensor(self, name, values):
        """A parameter tensor (`<layer>_W`, `<layer>_b`, ...), flattened in C order."""
        if name in self.tensors:
            raise ConversionError(f"tensor '{name}' is written twice")
        array = np.ascontiguousarray(np.asarray(values, dtype=np.float32)).reshape(-1)
        if not np.all(np.isfinite(array)):
            raise ConversionError(f"tensor '{name}' has non-finite values")
        self.tensors[name] = array

    def set_outputs(self, names):
        """The graph outputs, each an input or a layer already added."""
        for name in names:
            if name not in self._names:
                raise ConversionError(f"output '{name}' is neither an input nor a layer")
        self.outputs = list(names)

    def prune(self):
        """Drops layers (and their tensors) that no output depends on."""
        by_name = {layer["name"]: layer for layer in self.layers}
        needed, stack = set(), list(self.outputs)
        while stack:
            name = stack.pop()
            if name in needed:
                continue
            needed.add(name)
            if name in by_name:
                stack.extend(by_name[name]["inputs"])
        dropped = [layer["name"] for layer in self.layers if layer["name"] not in needed]
        self.layers = [layer for layer in self.layers if layer["name"] in needed]
        for name in dropped:
            for suffix in ("W", "b", "gamma", "beta", "mean", "variance", "slopes"):
                self.tensors.pop(f"{name}_{suffix}", None)
        unused_inputs = [i["name"] for i in self.inputs if i["name"] not in needed]
        if unused_inputs:
            raise ConversionError(f"no output depends on input(s) {', '.join(unused_inputs)}")
        return dropped

    # -- output ---------------------------------------------------------------------------

    def document(self, blob_name="weights.bin"):
        """The model-file JSON object and the blob bytes."""
        if not self.outputs:
            raise ConversionError("the model has no outputs")
        index, chunks, offset = {}, [], 0
        for name, array in self.tensors.items():
            data = array.astype("<f4").tobytes()
            index[name] = {"offset": offset, "count": int(array.size)}
            chunks.append(data)
            offset += len(data)
        root = {"format": "anvil.model", "version": 1, "name": self.name,
                "inputs": self.inputs, "layers": self.layers, "outputs": self.outputs}
        if self.tensors:
            root["parameters"] = {"layout": self.layout,
                                  "source": {"type": "blob", "path": blob_name, "tensors": index}}
        return root, b"".join(chunks)

    def write(self, directory, model_name="model.json", blob_name="weights.bin", json_style="nested"):
        """Writes `<directory>/model.json` and, when there are parameters,
        `<directory>/weights.bin`; returns their paths. `json_style` is one of JSON_STYLES."""
        if json_style not in JSON_STYLES:
            raise ValueError(f"unknown json_style {json_style!r}")
        os.makedirs(directory, exist_ok=True)
        root, blob = self.document(blob_name)
        model_path = os.path.join(directory, model_name)
        blob_path = os.path.join(directory, blob_name)
        if json_style == "layer_lines":
            text = format_layer_lines(root)
        else:
            text = format_json(root, inline_objects=json_style == "nested") + "\n"
        with open(model_path, "w") as handle:
            handle.write(text)
        if self.tensors:
            with open(blob_path, "wb") as handle:
                handle.write(blob)
        log = os.environ.get(WRITTEN_LOG)
        if log:  # the pytest suite loads every model written (Scripts/tests/conftest.py)
            with open(log, "a") as handle:
                handle.write(os.path.abspath(model_path) + "\n")
        return model_path, blob_path

    def summary(self):
        """One line: the number of layers per type and of parameter values."""
        counts = {}
        for layer in self.layers:
            counts[layer["type"]] = counts.get(layer["type"], 0) + 1
        parameters = sum(int(a.size) for a in self.tensors.values())
        kinds = ", ".join(f"{n} {t}" for t, n in sorted(counts.items()))
        return f"{len(self.layers)} layers ({kinds}); {parameters} parameters"


def _plain(value):
    """numpy scalars/arrays and tuples into JSON-ready Python values."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return value


def format_json(value, indent="", inline_objects=True):
    """JSON with two-space indentation; arrays of scalars stay on one line, and so do small
    objects nested two levels or more deep unless `inline_objects` is False."""
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        flat = json.dumps(value)
        nested = any(isinstance(v, dict) or (isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v))
                     for v in value.values())
        if inline_objects and len(indent) >= 4 and len(flat) <= 110 and not nested:
            return flat
        members = [f"{inner}{json.dumps(k)}: {format_json(v, inner, inline_objects)}" for k, v in value.items()]
        return "{\n" + ",\n".join(members) + "\n" + indent + "}"
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            return json.dumps(value)
        return "[\n" + ",\n".join(inner + format_json(v, inner, inline_objects) for v in value) + "\n" + indent + "]"
    return json.dumps(value)


def format_layer_lines(root):
    """A model-file document as JSON text with one line per layer and per tensor entry of a
    blob source (compact for graphs of hundreds of layers); other top-level keys on one line."""
    lines = ["{"]
    keys = list(root)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        value = root[key]
        if key == "layers":
            lines.append('  "layers": [')
            lines += [f"    {json.dumps(layer)}" + ("," if j < len(value) - 1 else "") for j, layer in enumerate(value)]
            lines.append("  ]" + comma)
        elif key == "parameters" and value["source"].get("type") == "blob":
            source = value["source"]
            tensors = source["tensors"]
            lines.append(f'  "parameters": {{"layout": {json.dumps(value["layout"])}, "source": {{"type": "blob", '
                         f'"path": {json.dumps(source["path"])}, "tensors": {{')
            lines += [f"    {json.dumps(name)}: {json.dumps(entry)}" + ("," if j < len(tensors) - 1 else "")
                      for j, (name, entry) in enumerate(tensors.items())]
            lines.append("  }}}" + comma)
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def activation_json(name, **constants):
    """An activation for the model file: a plain name, or an object with constants."""
    if not constants:
        return name
    result = {"type": name}
    result.update({k: float(v) for k, v in constants.items()})
    return result
