"""ONNX element-wise operators for OnnxConverter (mixin `ElementwiseOps`).

- Add, Sub, Mul, Div, Max, Min, Pow, Sum, Mean between computed tensors, and with one constant,
  become Anvil's `Elementwise` layer with NumPy broadcasting (a tensor of a lower rank is first
  reshaped with axes of extent 1 after its batch axis) (Add/Sum of tensors of one shape:
  Anvil's `Add`, a residual the engine fuses). ONNX's NCHW shapes map to Anvil's
  (height, width, channels): an [N, C, 1, 1] or [C, 1, 1] operand is per-channel, [N, 1, H, W]
  per-pixel, a one-element one a scalar. A scalar constant on one computed tensor stays an
  Activation where one exists (x + k, k·x, x / k: linear; Max/Min with k: clip; x ^ 0.5: sqrt).
- Unary operators (Gelu, Mish, Softplus, Softsign, Celu, ThresholdedRelu, Neg, Abs, Sqrt, Exp,
  Log, Reciprocal, Erf, Swish) become activations, which the engine fuses into a convolution or
  dense layer before them; on constants they fold.
- Patterns written out by exporters become one activation: x·sigmoid(x) is silu,
  x·HardSigmoid(x) (α 1/6, β 0.5) and x·clip(x + 3, 0, 6)/6 are hardSwish,
  x·0.5·(1 + erf(x/√2)) is gelu. The layers of the pattern's inner nodes are left unused and
  pruned.
"""

import math

import numpy as np

from ..writer import activation_json
from .tensors import FLOAT_MAX, Act, Flat, attributes as _attributes, standard_perm

_NUMPY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide, "Max": np.maximum,
          "Min": np.minimum, "Pow": np.power, "Sum": np.add}
_OPERATION = {"Add": "add", "Sub": "subtract", "Mul": "multiply", "Div": "divide", "Max": "maximum",
              "Min": "minimum", "Pow": "power", "Sum": "add", "Mean": "mean"}
_BINARY = ("Sub", "Div", "Pow")


def _erf(values):
    """erf of every element of an array."""
    return np.vectorize(math.erf, otypes=[np.float64])(values)


_UNARY = {
    # op: (Anvil activation, NumPy function for constants)
    "Neg": ("negative", np.negative), "Abs": ("absolute", np.abs), "Sqrt": ("squareRoot", np.sqrt),
    "Exp": ("exponential", np.exp), "Log": ("logarithm", np.log), "Reciprocal": ("reciprocal", np.reciprocal),
    "Erf": ("erf", _erf), "Softsign": ("softsign", lambda x: x / (1 + np.abs(x))),
    "Softplus": ("softplus", lambda x: np.logaddexp(0, x)),
    "Mish": ("mish", lambda x: x * np.tanh(np.logaddexp(0, x))),
}


class ElementwiseOps:
    """Element-wise binary, N-ary and unary operators; mixed into OnnxConverter."""

    # -- graph lookups for the fused patterns ----------------------------------------------------

    def producer(self, name):
        """The node whose first output is tensor `name`, or None (graph inputs, initializers)."""
        producers = getattr(self, "_producers", None)
        if producers is None:
            producers = {node.output[0]: node for node in self.graph.node if node.output}
            self._producers = producers
        return producers.get(name)

    def constant_value(self, name):
        """The one number constant `name` holds, or None."""
        value = self.values.get(name)
        if isinstance(value, np.ndarray) and value.size == 1:
            return float(value.reshape(-1)[0])
        return None

    def _other_input(self, node, name):
        """The input of binary `node` that is not `name` (None if `name` is not one of them)."""
        if len(node.input) != 2 or name not in node.input:
            return None
        return node.input[1] if node.input[0] == name else node.input[0]

    def _is_shifted_relu6(self, name, x):
        """Whether `name` is clip(x + 3, 0, 6) (or relu6(x + 3))."""
        clip = self.producer(name)
        if clip is None or clip.op_type != "Clip":
            return False
        if self.opset < 11:
            attributes = _attributes(clip)
            low, high = attributes.get("min"), attributes.get("max")
        else:
            low = self.constant_value(clip.input[1]) if len(clip.input) > 1 and clip.input[1] else None
            high = self.constant_value(clip.input[2]) if len(clip.input) > 2 and clip.input[2] else None
        if low != 0 or high != 6:
            return False
        add = self.producer(clip.input[0])
        if add is None or add.op_type != "Add":
            return False
        other = self._other_input(add, x)
        return other is not None and self.constant_value(other) == 3

    def _scaled(self, name):
        """(source, k) when `name` is source·k or source/k with a constant k, else (name, 1)."""
        node = self.producer(name)
        if node is not None and node.op_type in ("Mul", "Div") and len(node.input) == 2:
            second = self.constant_value(node.input[1])
            if second is not None and second != 0:
                return node.input[0], (second if node.op_type == "Mul" else 1 / second)
            first = self.constant_value(node.input[0])
            if first is not None and node.op_type == "Mul":
                return node.input[1], first
        return name, 1.0

    def _factors(self, name, depth=3):
        """`name` as a product: (tensor names, constant factor), expanding Mul/Div-by-constant nodes."""
        node = self.producer(name)
        if depth > 0 and node is not None and len(node.input) == 2:
            if node.op_type == "Mul":
                names, k = [], 1.0
                for operand in node.input:
                    value = self.constant_value(operand)
                    if value is not None:
                        k *= value
                    else:
                        more, more_k = self._factors(operand, depth - 1)
                        names += more
                        k *= more_k
                return names, k
            if node.op_type == "Div":
                divisor = self.constant_value(node.input[1])
                if divisor:
                    names, k = self._factors(node.input[0], depth - 1)
                    return names, k / divisor
        return [name], 1.0

    def _fused_pattern(self, node):
        """(activation, x) when `node` ends x·sigmoid(x), x·hardSigmoid(x), x·relu6(x + 3)/6 or
        x·0.5·(1 + erf(x/√2)); else None."""
        names, k = self._factors(node.output[0]) if node.op_type in ("Mul", "Div") else ([], 1.0)
        if len(names) != 2:
            return None
        for x, other in (names, names[::-1]):
            inner = self.producer(other)
            if inner is None or x not in self.values:
                continue
            if k == 1 and inner.op_type == "Sigmoid" and inner.input[0] == x:
                return "silu", x
            if k == 1 and inner.op_type == "HardSigmoid" and inner.input[0] == x:
                attributes = _attributes(inner)
                if abs(attributes.get("alpha", 0.2) - 1 / 6) < 1e-6 and abs(attributes.get("beta", 0.5) - 0.5) < 1e-6:
                    return "hardSwish", x
            if abs(k * 6 - 1) < 1e-6 and self._is_shifted_relu6(other, x):
                return "hardSwish", x
            if abs(k - 0.5) < 1e-6 and inner.op_type == "Add":
                erf_name = next((i for i in inner.input if self.constant_value(i) is None), None)
                one = self._other_input(inner, erf_name) if erf_name else None
                erf = self.producer(erf_name) if erf_name else None
                if one is None or self.constant_value(one) != 1 or erf is None or erf.op_type != "Erf":
                    continue
                source, scale = self._scaled(erf.input[0])
                if source == x and abs(scale - 1 / math.sqrt(2)) < 1e-5:
                    return "gelu", x
        return None

    # -- binary and N-ary operators ----------------------------------------------------------------

    def _anvil_constant(self, node, constant, rank):
        """A constant operand of tensors of ONNX `rank` (standard layout) as (Anvil shape (h, w, c),
        values in h, w, c order); an error when it has a batch axis other than 1 or more axes than
        the tensors."""
        c = np.asarray(constant, np.float32)
        if c.ndim > rank:
            self.fail(node, f"a constant of shape {list(c.shape)} has more axes than the tensors (rank {rank})")
        c = c.reshape((1,) * (rank - c.ndim) + c.shape)
        if c.shape[0] != 1:
            self.fail(node, f"a constant of shape {list(constant.shape)} spans the batch axis; Anvil broadcasts constants over it")
        if rank == 4:
            values = np.transpose(c[0], (1, 2, 0))
            return tuple(int(v) for v in values.shape), values
        if rank == 3:  # [1, C, L] -> a sequence held as 1 x L x C
            values = np.transpose(c[0], (1, 0))[None]
            return tuple(int(v) for v in values.shape), values
        if rank == 2:
            return (1, 1, int(c.shape[1])), c[0].reshape(1, 1, -1)
        return (1, 1, 1), c.reshape(1, 1, 1)

    def _broadcast(self, node, shapes, onnx_shapes):
        """The broadcast of Anvil shapes (h, w, c); an error naming the ONNX shapes that do not fit."""
        result = [1, 1, 1]
        for shape in shapes:
            for axis in range(3):
                if shape[axis] == result[axis] or shape[axis] == 1:
                    continue
                if result[axis] != 1:
                    self.fail(node, f"cannot broadcast shapes {' and '.join(str(s) for s in onnx_shapes)}: "
                                    "each axis must be equal or 1")
                result[axis] = shape[axis]
        return tuple(result)

    def elementwise(self, node, op):
        """Add/Sub/Mul/Div/Max/Min/Pow/Sum/Mean of computed tensors and at most one constant."""
        # (input position, value) of every input present
        entries = [(i, v) for i, v in ((i, self.value(node, i)) for i in range(len(node.input))) if v is not None]
        values = [v for _, v in entries]
        if not values:
            self.fail(node, "has no inputs")
        if all(isinstance(v, np.ndarray) for v in values):
            if op == "Mean":
                self.set(node, np.mean(np.broadcast_arrays(*values), axis=0).astype(values[0].dtype))
            else:
                result = values[0]
                for v in values[1:]:
                    result = _NUMPY[op](result, v)
                self.set(node, result)
            return
        if len(values) == 1:
            self.set(node, self.act(node, entries[0][0]))
            return
        if op in _BINARY and len(values) != 2:
            self.fail(node, f"{op} takes 2 inputs, got {len(values)}")
        fused = self._fused_pattern(node)
        if fused is not None:
            function, x = fused
            tensor = self.values.get(x)
            if isinstance(tensor, Flat):
                tensor = self.write_flatten(tensor, node)
            if isinstance(tensor, Act):
                name = self.add(node, "Activation", [tensor.name], function=function)
                self.set(node, tensor.like(name))
                return
        constants = [(position, v) for position, (_, v) in enumerate(entries) if isinstance(v, np.ndarray)]
        if len(constants) > 1:
            if op == "Mean" or op in _BINARY:
                self.fail(node, f"{op} with {len(constants)} constant inputs is not supported")
            folded = constants[0][1]
            for _, v in constants[1:]:
                folded = _NUMPY[op](folded, v)
            constants = [(len(entries), folded)]
        tensors = [self.act(node, i) for i, v in entries if not isinstance(v, np.ndarray)]
        rank = max(t.rank for t in tensors)
        tensors = [self._to_rank(node, t, rank) for t in tensors]
        constant = constants[0][1] if constants else None
        constant_first = bool(constants) and constants[0][0] == 0
        if constant is not None and constant.size == 1 and len(tensors) == 1 and op != "Mean":
            if self._scalar_activation(node, op, tensors[0], float(constant.reshape(-1)[0]), constant_first):
                return
        if constant is None and op in ("Add", "Sum") and len({t.shape for t in tensors}) == 1:
            # Tensors of one shape: Anvil's Add, which the engine fuses into the convolution before it.
            name = self.add(node, "Add", [t.name for t in tensors])
            self.set(node, tensors[0].like(name))
            return
        # Anvil stores every rank as h x w x c: an image (h, w, c), a sequence 1 x l x c, a vector 1 x 1 x c
        anvil_shapes = [(1, 1, 1, *t.shape)[-3:] for t in tensors]
        onnx_shapes = [t.onnx_shape for t in tensors]
        options, parameters = {"operation": _OPERATION[op]}, None
        if constant is not None:
            shape, array = self._anvil_constant(node, constant, rank)
            anvil_shapes.append(shape)
            onnx_shapes.append(list(constant.shape))
            options["constant"] = list(shape)
            if constant_first and op in _BINARY:
                options["constantFirst"] = True
            parameters = {"constant": array}
        output = self._broadcast(node, anvil_shapes, onnx_shapes)
        if output[:4 - rank] != (1,) * (4 - rank):
            self.fail(node, f"broadcasting {onnx_shapes} gives more axes than the rank-{rank} tensors have")
        name = self.add(node, "Elementwise", [t.name for t in tensors], parameters, **options)
        widest = max(tensors, key=lambda t: int(np.prod(t.shape)))
        result = widest.like(name)
        result.shape = tuple(output[4 - rank:]) if rank > 1 else ()
        result.anvil_rank = max(t.anvil_rank for t in tensors)  # the engine's output has its widest input's rank
        self.set(node, result)

    def _to_rank(self, node, tensor, rank):
        """`tensor` reshaped to `rank` with axes of extent 1 inserted after the batch axis (NumPy's
        alignment from the right, the batch axes matched: [N, F] with [N, C, H, W] is [N, 1, 1, F]),
        in the standard layout; the tensor itself when it has that rank."""
        if tensor.rank == rank:
            return tensor
        if tensor.open:
            self.fail(node, f"mixes tensors of ranks {tensor.rank} and {rank}, and the one of shape "
                            f"{tensor.onnx_shape} depends on the open input size; pass --input-shape C,H,W")
        full = [1] + [1] * (rank - tensor.rank) + list(tensor.onnx_shape[1:])
        perm = standard_perm(rank)
        anvil = [1] * rank
        for onnx_axis, anvil_axis in enumerate(perm):
            anvil[anvil_axis] = full[onnx_axis]
        target = Act("", anvil[1:], perm)
        if not target.onnx_ordered:  # the standard layout holds the values in another order
            return self.to_standard(node, self.reshape_tensor(node, tensor, full))
        source = self.to_onnx_order(node, self.write_flatten(tensor, node) if isinstance(tensor, Flat) else tensor)
        name = self.add(node, "Reshape", [source.name], suffix="_rank", shape=anvil[1:])
        return Act(name, anvil[1:], perm)

    def _scalar_activation(self, node, op, tensor, k, constant_first):
        """A computed tensor with a scalar constant as one Activation where one exists; False otherwise."""
        function = None
        if op in ("Add", "Sum"):
            function = activation_json("linear", a=1.0, b=k)
        elif op == "Mul":
            function = activation_json("linear", a=k, b=0.0)
        elif op == "Sub":
            function = activation_json("linear", a=-1.0, b=k) if constant_first else activation_json("linear", a=1.0, b=-k)
        elif op == "Div" and not constant_first and k != 0:
            function = activation_json("linear", a=1.0 / k, b=0.0)
        elif op == "Div" and constant_first and k == 1:
            function = "reciprocal"
        elif op == "Max":
            function = "relu" if k == 0 else activation_json("clip", min=max(k, -FLOAT_MAX), max=FLOAT_MAX)
        elif op == "Min":
            function = activation_json("clip", min=-FLOAT_MAX, max=min(k, FLOAT_MAX))
        elif op == "Pow" and not constant_first:
            if k == 1:
                self.set(node, tensor)
                return True
            function = {0.5: "squareRoot", -1.0: "reciprocal"}.get(k)
            if k == 2:
                name = self.add(node, "Elementwise", [tensor.name, tensor.name], operation="multiply")
                self.set(node, tensor.like(name))
                return True
        if function is None:
            return False
        name = self.add(node, "Activation", [tensor.name], function=function)
        self.set(node, tensor.like(name))
        return True

    def op_Add(self, node, index):
        """`Add`: Elementwise add with broadcasting (a scalar constant: a linear activation)."""
        self.elementwise(node, "Add")

    def op_Sub(self, node, index):
        """`Sub`: Elementwise subtract (a scalar constant: a linear activation)."""
        self.elementwise(node, "Sub")

    def op_Mul(self, node, index):
        """`Mul`: Elementwise multiply (a scalar constant: linear; silu, hardSwish, gelu patterns fused)."""
        self.elementwise(node, "Mul")

    def op_Div(self, node, index):
        """`Div`: Elementwise divide (by a scalar constant: linear; the hardSwish and gelu patterns fused)."""
        self.elementwise(node, "Div")

    def op_Max(self, node, index):
        """`Max`: Elementwise maximum (with a scalar constant: relu or clip)."""
        self.elementwise(node, "Max")

    def op_Min(self, node, index):
        """`Min`: Elementwise minimum (with a scalar constant: clip)."""
        self.elementwise(node, "Min")

    def op_Pow(self, node, index):
        """`Pow`: Elementwise power (exponent 0.5: squareRoot, −1: reciprocal, 2: x·x)."""
        self.elementwise(node, "Pow")

    def op_Sum(self, node, index):
        """`Sum`: Elementwise add of its inputs (one input: that input)."""
        self.elementwise(node, "Sum")

    def op_Mean(self, node, index):
        """`Mean`: Elementwise mean of its inputs."""
        self.elementwise(node, "Mean")

    # -- unary operators ---------------------------------------------------------------------------

    def unary(self, node, function, fold):
        """An Activation applying `function`; on a constant, `fold` of it."""
        value = self.value(node, 0)
        if isinstance(value, np.ndarray):
            self.set(node, np.asarray(fold(value.astype(np.float64)), value.dtype))
        else:
            self.activation(node, function)

    def op_Neg(self, node, index):
        """`Neg`: negative."""
        self.unary(node, *_UNARY["Neg"])

    def op_Abs(self, node, index):
        """`Abs`: absolute."""
        self.unary(node, *_UNARY["Abs"])

    def op_Sqrt(self, node, index):
        """`Sqrt`: squareRoot."""
        self.unary(node, *_UNARY["Sqrt"])

    def op_Exp(self, node, index):
        """`Exp`: exponential."""
        self.unary(node, *_UNARY["Exp"])

    def op_Log(self, node, index):
        """`Log`: logarithm."""
        self.unary(node, *_UNARY["Log"])

    def op_Reciprocal(self, node, index):
        """`Reciprocal`: reciprocal."""
        self.unary(node, *_UNARY["Reciprocal"])

    def op_Erf(self, node, index):
        """`Erf`: erf."""
        self.unary(node, *_UNARY["Erf"])

    def op_Softsign(self, node, index):
        """`Softsign`: softsign."""
        self.unary(node, *_UNARY["Softsign"])

    def op_Softplus(self, node, index):
        """`Softplus`: softplus."""
        self.unary(node, *_UNARY["Softplus"])

    def op_Mish(self, node, index):
        """`Mish`: mish."""
        self.unary(node, *_UNARY["Mish"])

    def op_Gelu(self, node, index):
        """`Gelu` (opset 20): gelu, or geluTanh for approximate="tanh"."""
        approximate = _attributes(node).get("approximate", "none")
        if approximate not in ("none", "tanh"):
            self.fail(node, f"approximate='{approximate}' is not supported (only 'none' and 'tanh')")
        self.activation(node, "gelu" if approximate == "none" else "geluTanh")

    def op_Celu(self, node, index):
        """`Celu`: celu with its alpha."""
        alpha = _attributes(node).get("alpha", 1.0)
        if alpha == 0:
            self.fail(node, "alpha must not be 0")
        self.activation(node, activation_json("celu", alpha=alpha))

    def op_ThresholdedRelu(self, node, index):
        """`ThresholdedRelu`: thresholdedRelu with its alpha."""
        self.activation(node, activation_json("thresholdedRelu", alpha=_attributes(node).get("alpha", 1.0)))

    def op_Swish(self, node, index):
        """`Swish` (x·sigmoid(αx)) with α 1: silu."""
        alpha = _attributes(node).get("alpha", 1.0)
        if alpha != 1:
            self.fail(node, f"alpha {alpha} is not supported (only 1: SiLU)")
        self.activation(node, "silu")
