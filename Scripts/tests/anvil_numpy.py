"""A small NumPy interpreter of converted Anvil models (Activation, Elementwise, Add, global average
pooling), written from docs/model-format.md, so converter tests can compare a converted graph with
the framework's own output without building the Swift engine."""

import math

import numpy as np

_ERF = np.vectorize(math.erf, otypes=[np.float64])


def activate(function, x):
    """Anvil's activation `function` (a name or {"type": ..., constants}) on float64 values."""
    name = function if isinstance(function, str) else function["type"]
    k = {} if isinstance(function, str) else function
    with np.errstate(all="ignore"):
        table = {
            "none": lambda: x, "relu": lambda: np.maximum(x, 0), "relu6": lambda: np.clip(x, 0, 6),
            "sigmoid": lambda: 1 / (1 + np.exp(-x)), "tanh": lambda: np.tanh(x),
            "hardSwish": lambda: x * np.clip(x + 3, 0, 6) / 6, "silu": lambda: x / (1 + np.exp(-x)),
            "gelu": lambda: 0.5 * x * (1 + _ERF(x / math.sqrt(2))),
            "geluTanh": lambda: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))),
            "mish": lambda: x * np.tanh(np.logaddexp(0, x)), "softplus": lambda: np.logaddexp(0, x),
            "softsign": lambda: x / (1 + np.abs(x)), "negative": lambda: -x, "absolute": lambda: np.abs(x),
            "squareRoot": lambda: np.sqrt(x), "exponential": lambda: np.exp(x), "logarithm": lambda: np.log(x),
            "reciprocal": lambda: 1 / x, "erf": lambda: _ERF(x),
            "sin": lambda: np.sin(x),
            "cos": lambda: np.cos(x),
            "tan": lambda: np.tan(x),
            "asin": lambda: np.arcsin(x),
            "acos": lambda: np.arccos(x),
            "atan": lambda: np.arctan(x),
            "sinh": lambda: np.sinh(x),
            "cosh": lambda: np.cosh(x),
            "asinh": lambda: np.arcsinh(x),
            "acosh": lambda: np.arccosh(x),
            "atanh": lambda: np.arctanh(x),
            "floor": lambda: np.floor(x),
            "ceil": lambda: np.ceil(x),
            "round": lambda: np.rint(x),
            "sign": lambda: np.sign(x),
            "clip": lambda: np.clip(x, k.get("min"), k.get("max")),
            "leakyRelu": lambda: np.where(x >= 0, x, k.get("alpha", 0.01) * x),
            "elu": lambda: np.where(x > 0, x, k.get("alpha", 1) * (np.exp(x) - 1)),
            "hardSigmoid": lambda: np.clip(k.get("alpha", 0.2) * x + k.get("beta", 0.5), 0, 1),
            "linear": lambda: k.get("a", 1) * x + k.get("b", 0),
            "celu": lambda: np.maximum(x, 0) + np.minimum(0, k.get("alpha", 1) * (np.exp(x / k.get("alpha", 1)) - 1)),
            "thresholdedRelu": lambda: np.where(x > k.get("alpha", 1), x, 0),
        }
        return table[name]()


def run(writer, x_nchw):
    """Runs the writer's model on one NCHW (or [N, F]) input; returns the first output in NCHW / [N, F]."""
    x = np.asarray(x_nchw, np.float64)
    values = {writer.inputs[0]["name"]: np.transpose(x, (0, 2, 3, 1)) if x.ndim == 4 else x[:, None, None, :]}
    for layer in writer.layers:
        inputs = [values[i] for i in layer["inputs"]]
        kind = layer["type"]
        if kind == "Activation":
            y = activate(layer["function"], inputs[0])
        elif kind == "Add":
            y = activate(layer.get("activation", "none"), sum(inputs))
        elif kind == "Elementwise":
            operands = list(inputs)
            if "constant" in layer:
                c = writer.tensors[f"{layer['name']}_constant"].astype(np.float64).reshape([1] + layer["constant"])
                operands = [c] + operands if layer.get("constantFirst") else operands + [c]
            op = layer["operation"]
            functions = {"add": np.add, "mean": np.add, "subtract": np.subtract, "multiply": np.multiply,
                         "divide": np.divide, "maximum": np.maximum, "minimum": np.minimum, "power": np.power,
                         "remainder": np.mod, "fmod": np.fmod}
            y = operands[0]
            for operand in operands[1:]:
                y = functions[op](y, operand)
            if op == "mean":
                y = y / len(operands)
            y = activate(layer.get("activation", "none"), y)
        elif kind == "GlobalAveragePooling":
            y = inputs[0].mean(axis=(1, 2), keepdims=True)
        else:
            raise NotImplementedError(kind)
        values[layer["name"]] = y
    y = values[writer.outputs[0]]
    return np.transpose(y, (0, 3, 1, 2)) if x.ndim == 4 else y[:, 0, 0, :]
