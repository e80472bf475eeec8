"""Writes Anvil model files (docs/model-format.md): a JSON graph plus one float32 blob.

Shared by the converters (convert_keras.py, convert_caffe.py, convert_onnx.py) and the
fixture builder. Only numpy is needed.

    writer = ModelWriter("tiny", layout="pytorch")
    writer.add_input("image", (32, 32, 3))
    writer.add_layer("conv1", "Convolution", ["image"], kernel=[3, 3], channels=8, padding="same")
    writer.add_tensor("conv1_W", weights)       # any float array, written as little-endian float32
    writer.add_tensor("conv1_b", bias)
    writer.set_outputs(["conv1"])
    writer.write("out/")                       # out/model.json + out/weights.bin
"""

import json
import os
import re

import numpy as np


class ConversionError(Exception):
    """A model cannot be converted; the message names the layer/node and why."""


_NAME_PATTERN = re.compile(r"[^A-Za-z0-9_.\-]")


def sanitize_name(name, fallback="layer"):
    """A readable Anvil name: letters, digits, '_', '.', '-' (others become '_')."""
    cleaned = _NAME_PATTERN.sub("_", name or "").strip("_")
    return cleaned or fallback


class ModelWriter:
    """Collects inputs, layers and parameter tensors, then writes model.json + weights.bin."""

    def __init__(self, name, layout):
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
        return name in self._names

    # -- graph ----------------------------------------------------------------------------

    def add_input(self, name, shape_hwc):
        """A graph input of one image, `[height, width, channels]`."""
        if name in self._names:
            raise ConversionError(f"the name '{name}' is used twice")
        shape = [int(v) for v in shape_hwc]
        if len(shape) != 3 or min(shape) <= 0:
            raise ConversionError(f"input '{name}' needs a positive [height, width, channels] shape, got {shape}")
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

    def write(self, directory, model_name="model.json", blob_name="weights.bin"):
        """Writes `<directory>/model.json` and `<directory>/weights.bin`; returns their paths."""
        os.makedirs(directory, exist_ok=True)
        root, blob = self.document(blob_name)
        model_path = os.path.join(directory, model_name)
        blob_path = os.path.join(directory, blob_name)
        with open(model_path, "w") as handle:
            handle.write(format_json(root) + "\n")
        if self.tensors:
            with open(blob_path, "wb") as handle:
                handle.write(blob)
        return model_path, blob_path

    def summary(self):
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


def format_json(value, indent=""):
    """JSON with two-space indentation; arrays of scalars and small objects stay on one line."""
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        flat = json.dumps(value)
        nested = any(isinstance(v, dict) or (isinstance(v, list) and any(isinstance(x, (dict, list)) for x in v))
                     for v in value.values())
        if len(indent) >= 4 and len(flat) <= 110 and not nested:
            return flat
        members = [f"{inner}{json.dumps(k)}: {format_json(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(members) + "\n" + indent + "}"
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            return json.dumps(value)
        return "[\n" + ",\n".join(inner + format_json(v, inner) for v in value) + "\n" + indent + "]"
    return json.dumps(value)


def activation_json(name, **constants):
    """An activation for the model file: a plain name, or an object with constants."""
    if not constants:
        return name
    result = {"type": name}
    result.update({k: float(v) for k, v in constants.items()})
    return result
