"""Converts a Keras model (.keras or .h5, Functional or Sequential) to an Anvil model file.

    KERAS_BACKEND=torch .venv/bin/python Scripts/convert_keras.py model.keras out/ [--name NAME]
                                                       [--input-shape H,W]

Writes out/model.json and out/weights.bin (layout "tensorflow": Keras kernels are HWIO,
Dense kernels [in][out], Flatten is channels-last, exactly Anvil's "tensorflow" layout).
Needs `pip install keras h5py` and a Keras backend; the torch backend is used unless
KERAS_BACKEND says otherwise. Supported layers and errors: docs/converters.md.
"""

import os
import sys

os.environ.setdefault("KERAS_BACKEND", "torch")

import numpy as np  # noqa: E402

from . import cli  # noqa: E402
from .writer import ConversionError, ModelWriter, activation_json  # noqa: E402

FLOAT_MAX = 3.4028234663852886e38

# Layers that do nothing at inference.
PASS_THROUGH = {"Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianNoise",
                "GaussianDropout", "AlphaDropout", "ActivityRegularization", "InputLayer"}
NESTED = {"Functional", "Sequential", "Model"}


# ---------------------------------------------------------------------------------------
# The Keras graph as a list of nodes


class KerasNode:
    """One application of a Keras layer: its inputs are (layer name, node index, tensor index)."""

    def __init__(self, layer, node_index, inputs):
        """`inputs` are the (layer name, node index, tensor index) it reads."""
        self.layer = layer
        self.name = layer.name
        self.class_name = type(layer).__name__
        self.config = layer.get_config()
        self.node_index = node_index
        self.inputs = inputs

    @property
    def key(self):
        """(layer name, node index): the key of this application's output tensor."""
        return (self.name, self.node_index)

    def describe(self):
        """"layer '<name>' (<class>)", the start of every error message about it."""
        return f"layer '{self.name}' ({self.class_name})"


def _history_entries(value):
    """Every keras_history triple in a Keras 3 serialised argument structure."""
    found = []
    if isinstance(value, dict):
        if value.get("class_name") == "__keras_tensor__":
            history = value["config"]["keras_history"]
            found.append((history[0], int(history[1]), int(history[2])))
        else:
            for item in value.values():
                found.extend(_history_entries(item))
    elif isinstance(value, (list, tuple)):
        for item in value:
            found.extend(_history_entries(item))
    return found


def _inbound(node_config):
    """The inputs of one serialised inbound node (Keras 3 dict or Keras 2 list format)."""
    if isinstance(node_config, dict):
        return _history_entries(node_config.get("args", []))
    entries = []
    for item in node_config:  # Keras 2: [[layer, node, tensor, kwargs], ...]
        entries.append((item[0], int(item[1]), int(item[2])))
    return entries


def _refs(value):
    """input_layers / output_layers: one [name, node, tensor] or a list of them."""
    if len(value) == 3 and isinstance(value[0], str) and not isinstance(value[1], (list, tuple)):
        return [(value[0], int(value[1]), int(value[2]))]
    return [(v[0], int(v[1]), int(v[2])) for v in value]


def graph_of(model):
    """(input layers with shapes, nodes in topological order, output refs)."""
    import keras

    inputs = []  # (name, keras shape)
    nodes = []
    if isinstance(model, keras.Sequential):
        if not model.inputs:
            raise ConversionError("the Sequential model has no input shape; build it (or give it an Input) before saving")
        shape = tuple(model.inputs[0].shape)
        config = model.get_config()
        first = config["layers"][0] if config.get("layers") else None
        input_name = first["config"]["name"] if first and first["class_name"] == "InputLayer" else "input"
        inputs.append((input_name, shape))
        previous = (input_name, 0, 0)
        for layer in model.layers:
            if type(layer).__name__ == "InputLayer":
                continue
            nodes.append(KerasNode(layer, 0, [previous]))
            previous = (layer.name, 0, 0)
        return inputs, nodes, [previous]

    config = model.get_config()
    if "layers" not in config or "output_layers" not in config:
        raise ConversionError(f"model '{model.name}' ({type(model).__name__}) is neither Functional nor Sequential; "
                              "subclassed models have no graph to convert")
    layers = {layer.name: layer for layer in model.layers}
    input_refs = _refs(config["input_layers"])
    for entry in config["layers"]:
        name = entry.get("name") or entry["config"]["name"]
        if entry["class_name"] == "InputLayer":
            cfg = entry["config"]
            shape = cfg.get("batch_shape") or cfg.get("batch_input_shape")
            inputs.append((name, tuple(shape)))
            continue
        layer = layers[name]
        for index, inbound in enumerate(entry.get("inbound_nodes", [])):
            nodes.append(KerasNode(layer, index, _inbound(inbound)))
    order = [ref[0] for ref in input_refs]
    inputs.sort(key=lambda item: order.index(item[0]) if item[0] in order else len(order))
    # Topological order (the config is usually already ordered).
    produced = {(name, 0) for name, _ in inputs}
    ordered, pending = [], list(nodes)
    while pending:
        progress = False
        for node in list(pending):
            if all((name, ni) in produced for name, ni, _ in node.inputs):
                ordered.append(node)
                produced.add(node.key)
                pending.remove(node)
                progress = True
        if not progress:
            raise ConversionError(f"{pending[0].describe()} reads tensors that nothing produces")
    return inputs, ordered, _refs(config["output_layers"])


# ---------------------------------------------------------------------------------------
# Conversion


class Tensor:
    """An Anvil tensor: its name, shape ((h, w, c) an image, (l, c) a sequence, (n,) a vector; a
    height, width or length is None when it depends on an open input size) and facts used for folding."""

    def __init__(self, name, shape, nonnegative=False, padding=None):
        """`padding` is (top, bottom, left, right) of a ZeroPadding2D still to be folded, or None."""
        self.name = name
        self.shape = tuple(shape)
        self.nonnegative = nonnegative
        self.padding = padding  # (top, bottom, left, right) of a ZeroPadding2D not yet folded

    @property
    def spatial(self):
        """Whether the tensor is an image (h, w, c) rather than a vector."""
        return len(self.shape) == 3

    @property
    def hwc(self):
        """The shape as Anvil's (height, width, channels): a sequence is 1 x l x c, a vector 1 x 1 x n."""
        return (1,) * (3 - len(self.shape)) + self.shape


def _pair(value):
    """An int or a sequence as a (height, width) pair."""
    if isinstance(value, int):
        return (value, value)
    value = tuple(int(v) for v in value)
    return value if len(value) == 2 else (value[0], value[0])


def _same_pads(size, kernel, stride, dilation):
    """TensorFlow SAME padding along one axis: (before, after), the smaller half before."""
    extent = (kernel - 1) * dilation + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + extent - size, 0)
    return total // 2, total - total // 2


def _window_output(size, kernel, stride, dilation, before, after):
    """The output length of a window over `size` padded by `before` and `after`."""
    extent = (kernel - 1) * dilation + 1
    return (size + before + after - extent) // stride + 1


NONNEGATIVE_ACTIVATIONS = {"relu", "relu6", "sigmoid", "hardSigmoid", "softmax"}


class KerasConverter:
    """Converts a loaded Keras model into a ModelWriter (layout "tensorflow")."""
    def __init__(self, model, name=None, input_shape=None):
        """`input_shape` (H, W) fills in an input's open height and width (otherwise they stay open)."""
        import keras
        self.keras_major = int(keras.__version__.split(".")[0])
        self.model = model
        self.writer = ModelWriter(name or model.name, layout="tensorflow")
        self.input_shape = input_shape
        self.tensors = {}  # (layer name, node index) -> Tensor
        self.written_pads = {}  # (tensor name, padding) -> the Pad layer write_padding wrote for it
        self.first_emitted = {}  # (keras layer name, part) -> anvil name of its first application

    # -- helpers --------------------------------------------------------------------------

    def fail(self, node, message):
        """Raises the ConversionError naming the layer and its class."""
        raise ConversionError(f"{node.describe()}: {message}")

    def activation(self, node, function=None):
        """(Anvil activation JSON or None, extra layer type 'Softmax'/'LogSoftmax' or None)."""
        function = function if function is not None else getattr(node.layer, "activation", None)
        if function is None:
            return "none", None
        name = function if isinstance(function, str) else getattr(function, "__name__", str(function))
        hard_sigmoid_alpha = 1 / 6 if self.keras_major >= 3 else 0.2
        table = {
            "linear": ("none", None), "relu": ("relu", None), "relu6": ("relu6", None),
            "sigmoid": ("sigmoid", None), "tanh": ("tanh", None), "selu": ("selu", None),
            "elu": (activation_json("elu", alpha=1.0), None),
            "hard_sigmoid": (activation_json("hardSigmoid", alpha=hard_sigmoid_alpha, beta=0.5), None),
            "hard_swish": ("hardSwish", None), "hard_silu": ("hardSwish", None),
            "leaky_relu": (activation_json("leakyRelu", alpha=0.2), None),
            "silu": ("silu", None), "swish": ("silu", None), "gelu": ("gelu", None), "softplus": ("softplus", None),
            "softsign": ("softsign", None), "mish": ("mish", None), "exponential": ("exponential", None),
            "celu": (activation_json("celu", alpha=1.0), None),
            "softmax": ("none", "Softmax"), "log_softmax": ("none", "LogSoftmax"),
        }
        if name not in table:
            self.fail(node, f"activation '{name}' is not supported (Anvil has: {', '.join(sorted(table))})")
        return table[name]

    @staticmethod
    def _is_nonnegative(activation):
        """Whether `activation` never outputs negative values (so zero padding equals -inf padding for a max)."""
        name = activation if isinstance(activation, str) else activation.get("type")
        return name in NONNEGATIVE_ACTIVATIONS

    def emit(self, node, part, layer_type, inputs, parameters=None, **options):
        """Writes one Anvil layer for `node` (a later application of a shared Keras layer
        refers to the first one's parameters). Returns the Anvil name."""
        base = node.name if part is None else f"{node.name}_{part}"
        key = (node.name, part)
        if node.node_index == 0 or key not in self.first_emitted:
            name = self.writer.unique_name(base)
            self.writer.add_layer(name, layer_type, inputs, **options)
            for suffix, values in (parameters or {}).items():
                self.writer.add_tensor(f"{name}_{suffix}", values)
            self.first_emitted[key] = name
            return name
        name = self.writer.unique_name(f"{base}_{node.node_index + 1}")
        if parameters:
            self.writer.add_layer(name, layer_type, inputs, sharesParametersWith=self.first_emitted[key])
        else:
            self.writer.add_layer(name, layer_type, inputs, **options)
        return name

    def source(self, node, position=0, allow_padding=False):
        """The tensor the node reads at `position`; an error for a second layer output or an unfolded ZeroPadding2D."""
        ref = node.inputs[position]
        tensor = self.tensors[(ref[0], ref[1])]
        if ref[2] != 0:
            self.fail(node, f"reads output {ref[2]} of layer '{ref[0]}'; only single-output layers are supported")
        if tensor.padding is not None and not allow_padding:
            return self.write_padding(tensor)
        return tensor

    def write_padding(self, tensor):
        """A ZeroPadding2D no layer folded: a Pad layer of its own (written once per padded tensor)."""
        written = self.written_pads
        key = (tensor.name, tensor.padding)
        if key not in written:
            top, bottom, left, right = tensor.padding
            name = self.writer.unique_name(f"{tensor.name}_pad")
            self.writer.add_layer(name, "Pad", [tensor.name], pads=[top, left, bottom, right])
            h, w, c = tensor.shape
            written[key] = Tensor(name, (None if h is None else h + top + bottom, None if w is None else w + left + right, c),
                                  nonnegative=tensor.nonnegative)
        return written[key]

    def weights(self, node):
        """The layer's weights as float32 arrays, in Keras's order."""
        return [np.asarray(w, dtype=np.float32) for w in node.layer.get_weights()]

    def check_channels_last(self, node):
        """An error unless the layer's data_format is channels_last."""
        if node.config.get("data_format", "channels_last") != "channels_last":
            self.fail(node, f"data_format '{node.config.get('data_format')}' is not supported; it must be 'channels_last' (Anvil is NHWC)")

    def spatial_input(self, node, tensor):
        """An error unless `tensor` is an image."""
        if not tensor.spatial:
            self.fail(node, f"needs a 4-D (image) input, got a vector of {tensor.shape[0]}")

    # -- windows (convolution / pooling) with ZeroPadding2D folding ------------------------

    def window(self, node, tensor, kernel, stride, dilation, padding, pooling=None):
        """(anvil padding, output h, output w, countIncludesPadding or None) for a window layer."""
        h, w, _ = tensor.shape
        if padding not in ("same", "valid"):
            self.fail(node, f"padding '{padding}' is not supported (same or valid)")
        if tensor.padding is None:
            # An open size (None) stays open: Anvil infers it per prediction.
            if padding == "same":
                oh = None if h is None else -(-h // stride[0])
                ow = None if w is None else -(-w // stride[1])
            else:
                oh = None if h is None else _window_output(h, kernel[0], stride[0], dilation[0], 0, 0)
                ow = None if w is None else _window_output(w, kernel[1], stride[1], dilation[1], 0, 0)
            if (oh is not None and oh < 1) or (ow is not None and ow < 1):
                self.fail(node, f"the window {kernel} does not fit the input {tensor.shape}")
            return padding, oh, ow, None
        if None in (h, w):
            self.fail(node, "cannot fold the preceding ZeroPadding2D on an open input size; pass --input-shape H,W")
        top, bottom, left, right = tensor.padding
        ph, pw = h + top + bottom, w + left + right  # the size Keras sees
        same = (0, 0, 0, 0)
        if padding == "same":
            st, sb = _same_pads(ph, kernel[0], stride[0], dilation[0])
            sl, sr = _same_pads(pw, kernel[1], stride[1], dilation[1])
            same = (st, sb, sl, sr)
        count_padding = None
        if pooling == "average":
            if any(same):
                self.fail(node, "cannot fold the preceding ZeroPadding2D: the pooling's own 'same' padding is "
                                "excluded from the average but the zero padding is included")
            count_padding = True
        elif pooling == "max" and not tensor.nonnegative:
            self.fail(node, "cannot fold the preceding ZeroPadding2D into max pooling: its input may be negative, "
                            "and Anvil's pooling pads with -inf, not zeros")
        pads = [top + same[0], left + same[2], bottom + same[1], right + same[3]]
        if pooling is not None and (max(pads[0], pads[2]) >= kernel[0] or max(pads[1], pads[3]) >= kernel[1]):
            self.fail(node, f"cannot fold the preceding ZeroPadding2D: padding {pads} is not smaller than the window {kernel}")
        oh = _window_output(h, kernel[0], stride[0], dilation[0], pads[0], pads[2])
        ow = _window_output(w, kernel[1], stride[1], dilation[1], pads[1], pads[3])
        return pads, oh, ow, count_padding

    # -- layers ---------------------------------------------------------------------------

    def convert(self):
        """Converts every node of the graph in order; returns the ModelWriter, outputs set and pruned."""
        inputs, nodes, outputs = graph_of(self.model)
        for name, shape in inputs:
            shape = list(shape)[1:]
            if len(shape) == 3:
                # An unknown height/width stays open (null in the model file) unless --input-shape gives it.
                if (shape[0] is None or shape[1] is None) and self.input_shape is not None:
                    shape[0], shape[1] = self.input_shape
                if shape[2] is None:
                    raise ConversionError(f"input '{name}' has an unknown number of channels")
                anvil_shape = tuple(None if v is None else int(v) for v in shape)
            elif len(shape) == 2 and shape[1] is not None:
                # a sequence (length, channels); an unknown length stays open
                anvil_shape = (None if shape[0] is None else int(shape[0]), int(shape[1]))
            elif len(shape) == 1 and shape[0] is not None:
                anvil_shape = (int(shape[0]),)
            else:
                raise ConversionError(f"input '{name}' has shape {tuple(shape)}; Anvil takes (height, width, channels) images or vectors")
            anvil_name = self.writer.unique_name(name)
            self.writer.add_input(anvil_name, anvil_shape if len(anvil_shape) >= 2 else (1, 1, anvil_shape[0]))
            self.tensors[(name, 0)] = Tensor(anvil_name, anvil_shape)
        for node in nodes:
            handler = getattr(self, f"layer_{node.class_name}", None)
            if node.class_name in PASS_THROUGH:
                handler = self.pass_through
            if handler is None:
                if node.class_name in NESTED:
                    self.fail(node, "nested models are not supported; flatten the model into one Functional graph")
                self.fail(node, "this layer type is not supported by the Anvil converter (see docs/converters.md)")
            self.tensors[node.key] = handler(node)
        names = []
        for layer, node_index, tensor_index in outputs:
            tensor = self.tensors[(layer, node_index)]
            if tensor.padding is not None:
                tensor = self.write_padding(tensor)
            names.append(tensor.name)
        self.writer.set_outputs(names)
        self.writer.prune()
        return self.writer

    def pass_through(self, node):
        """A layer that does nothing at inference (Dropout, ...): its input, padding and all."""
        return self.source(node, allow_padding=True)

    def conv_common(self, node):
        """What every convolution needs: (input, kernel, stride, dilation, Anvil padding, output h, output w)."""
        self.check_channels_last(node)
        tensor = self.source(node, allow_padding=True)
        self.spatial_input(node, tensor)
        kernel = _pair(node.config["kernel_size"])
        stride = _pair(node.config.get("strides", 1))
        dilation = _pair(node.config.get("dilation_rate", 1))
        padding, oh, ow, _ = self.window(node, tensor, kernel, stride, dilation, node.config.get("padding", "valid"))
        return tensor, kernel, stride, dilation, padding, oh, ow

    def finish_activation(self, node, name, shape, activation, extra):
        """The layer's output tensor, after the Softmax/LogSoftmax layer its activation may need."""
        nonnegative = self._is_nonnegative(activation)
        if extra is not None:
            name = self.emit(node, extra.lower(), extra, [name])
            nonnegative = extra == "Softmax"
        return Tensor(name, shape, nonnegative=nonnegative)

    def layer_Conv2D(self, node):
        """`Conv2D`: Convolution (kernel HWIO, the tensorflow layout), its activation fused."""
        tensor, kernel, stride, dilation, padding, oh, ow = self.conv_common(node)
        activation, extra = self.activation(node)
        weights = self.weights(node)
        groups = int(node.config.get("groups", 1))
        filters = int(node.config["filters"])
        parameters = {"W": weights[0]}
        if node.config.get("use_bias", True):
            parameters["b"] = weights[1]
        name = self.emit(node, None, "Convolution", [tensor.name], parameters, kernel=kernel, channels=filters,
                         stride=stride, padding=padding, dilation=dilation, groups=groups,
                         bias=bool(node.config.get("use_bias", True)), activation=activation)
        return self.finish_activation(node, name, (oh, ow, filters), activation, extra)

    def layer_DepthwiseConv2D(self, node):
        """`DepthwiseConv2D`: DepthwiseConvolution with the depth multiplier."""
        tensor, kernel, stride, dilation, padding, oh, ow = self.conv_common(node)
        activation, extra = self.activation(node)
        weights = self.weights(node)
        multiplier = int(node.config.get("depth_multiplier", 1))
        parameters = {"W": weights[0]}  # (kh, kw, c, m): Anvil's tensorflow depthwise layout
        if node.config.get("use_bias", True):
            parameters["b"] = weights[1]
        name = self.emit(node, None, "DepthwiseConvolution", [tensor.name], parameters, kernel=kernel,
                         multiplier=multiplier, stride=stride, padding=padding, dilation=dilation,
                         bias=bool(node.config.get("use_bias", True)), activation=activation)
        return self.finish_activation(node, name, (oh, ow, tensor.shape[2] * multiplier), activation, extra)

    def layer_SeparableConv2D(self, node):
        """`SeparableConv2D`: a DepthwiseConvolution (`<name>_depthwise`, no bias) and a 1x1 Convolution."""
        tensor, kernel, stride, dilation, padding, oh, ow = self.conv_common(node)
        activation, extra = self.activation(node)
        weights = self.weights(node)
        multiplier = int(node.config.get("depth_multiplier", 1))
        filters = int(node.config["filters"])
        depthwise = self.emit(node, "depthwise", "DepthwiseConvolution", [tensor.name], {"W": weights[0]},
                              kernel=kernel, multiplier=multiplier, stride=stride, padding=padding,
                              dilation=dilation, bias=False, activation="none")
        parameters = {"W": weights[1]}  # (1, 1, c*m, filters)
        if node.config.get("use_bias", True):
            parameters["b"] = weights[2]
        name = self.emit(node, None, "Convolution", [depthwise], parameters, kernel=[1, 1], channels=filters,
                         stride=[1, 1], padding="valid", bias=bool(node.config.get("use_bias", True)),
                         activation=activation)
        return self.finish_activation(node, name, (oh, ow, filters), activation, extra)

    def pooling(self, node, kind):
        """`MaxPooling2D` / `AveragePooling2D` (`kind` "max" or "average"), a preceding ZeroPadding2D folded."""
        self.check_channels_last(node)
        tensor = self.source(node, allow_padding=True)
        self.spatial_input(node, tensor)
        kernel = _pair(node.config["pool_size"])
        stride = _pair(node.config.get("strides") or kernel)
        padding, oh, ow, count = self.window(node, tensor, kernel, stride, (1, 1), node.config.get("padding", "valid"),
                                             pooling=kind)
        options = {"kernel": kernel, "stride": stride, "padding": padding}
        if kind == "average":
            options["countIncludesPadding"] = bool(count)
        name = self.emit(node, None, "MaxPooling" if kind == "max" else "AveragePooling", [tensor.name], **options)
        return Tensor(name, (oh, ow, tensor.shape[2]), nonnegative=tensor.nonnegative)

    def layer_MaxPooling2D(self, node):
        """`MaxPooling2D`: MaxPooling."""
        return self.pooling(node, "max")

    def layer_AveragePooling2D(self, node):
        """`AveragePooling2D`: AveragePooling, padding excluded from the average as in Keras."""
        return self.pooling(node, "average")

    def global_pooling(self, node, layer_type):
        """A global pooling layer of `layer_type`; the output is a vector."""
        self.check_channels_last(node)
        tensor = self.source(node)
        self.spatial_input(node, tensor)
        name = self.emit(node, None, layer_type, [tensor.name])
        return Tensor(name, (tensor.shape[2],), nonnegative=tensor.nonnegative)

    def layer_GlobalAveragePooling2D(self, node):
        """`GlobalAveragePooling2D`: GlobalAveragePooling."""
        return self.global_pooling(node, "GlobalAveragePooling")

    def layer_GlobalMaxPooling2D(self, node):
        """`GlobalMaxPooling2D`: GlobalMaxPooling."""
        return self.global_pooling(node, "GlobalMaxPooling")

    # -- 1-D layers on sequences (length, channels): height-1 windows ------------------------

    def sequence_input(self, node):
        """The layer's input, which must be a sequence (length, channels)."""
        self.check_channels_last(node)
        tensor = self.source(node)
        if len(tensor.shape) != 2:
            self.fail(node, f"needs a 3-D (N, length, channels) input, got shape {tensor.shape}")
        return tensor

    def window_1d(self, node, length, kernel, stride, dilation):
        """(Anvil padding, output length) of a 1-D window with Keras' `same`/`valid` padding."""
        padding = node.config.get("padding", "valid")
        if padding not in ("same", "valid"):
            self.fail(node, f"padding '{padding}' is not supported (same or valid)")
        if length is None:  # an open length stays open: Anvil infers it per prediction
            return padding, None
        out = -(-length // stride) if padding == "same" else _window_output(length, kernel, stride, dilation, 0, 0)
        if out < 1:
            self.fail(node, f"the window {kernel} does not fit the length {length}")
        return padding, out

    @staticmethod
    def _one(value):
        """An int or a one-element sequence as an int."""
        return int(value if isinstance(value, int) else value[0])

    def layer_Conv1D(self, node):
        """`Conv1D`: Convolution with a (1, k) window (kernel (k, in, out) is the tensorflow layout with kh 1)."""
        tensor = self.sequence_input(node)
        k, s = self._one(node.config["kernel_size"]), self._one(node.config.get("strides", 1))
        d = self._one(node.config.get("dilation_rate", 1))
        padding, out = self.window_1d(node, tensor.shape[0], k, s, d)
        activation, extra = self.activation(node)
        weights = self.weights(node)
        filters, groups = int(node.config["filters"]), int(node.config.get("groups", 1))
        use_bias = bool(node.config.get("use_bias", True))
        parameters = {"W": weights[0]}
        if use_bias:
            parameters["b"] = weights[1]
        name = self.emit(node, None, "Convolution", [tensor.name], parameters, kernel=[1, k], channels=filters,
                         stride=[1, s], padding=padding, dilation=[1, d], groups=groups, bias=use_bias,
                         activation=activation)
        return self.finish_activation(node, name, (out, filters), activation, extra)

    def pooling_1d(self, node, layer_type):
        """`MaxPooling1D` / `AveragePooling1D`: pooling with a (1, k) window."""
        tensor = self.sequence_input(node)
        k = self._one(node.config["pool_size"])
        s = self._one(node.config.get("strides") or k)
        padding, out = self.window_1d(node, tensor.shape[0], k, s, 1)
        options = {"kernel": [1, k], "stride": [1, s], "padding": padding}
        if layer_type == "AveragePooling":
            options["countIncludesPadding"] = False
        name = self.emit(node, None, layer_type, [tensor.name], **options)
        return Tensor(name, (out, tensor.shape[1]), nonnegative=tensor.nonnegative)

    def layer_MaxPooling1D(self, node):
        """`MaxPooling1D`: MaxPooling over a (1, k) window."""
        return self.pooling_1d(node, "MaxPooling")

    def layer_AveragePooling1D(self, node):
        """`AveragePooling1D`: AveragePooling over a (1, k) window, padding excluded as in Keras."""
        return self.pooling_1d(node, "AveragePooling")

    def global_pooling_1d(self, node, layer_type):
        """A global pooling over the length; the output is a vector."""
        tensor = self.sequence_input(node)
        if node.config.get("keepdims", False):
            self.fail(node, "keepdims=True is not supported")
        name = self.emit(node, None, layer_type, [tensor.name])
        return Tensor(name, (tensor.shape[1],), nonnegative=tensor.nonnegative)

    def layer_GlobalAveragePooling1D(self, node):
        """`GlobalAveragePooling1D`: GlobalAveragePooling."""
        return self.global_pooling_1d(node, "GlobalAveragePooling")

    def layer_GlobalMaxPooling1D(self, node):
        """`GlobalMaxPooling1D`: GlobalMaxPooling."""
        return self.global_pooling_1d(node, "GlobalMaxPooling")

    def layer_Dense(self, node):
        """`Dense`: Dense on a vector, a 1x1 Convolution on an image (Keras applies it per pixel)."""
        tensor = self.source(node)
        activation, extra = self.activation(node)
        weights = self.weights(node)
        units = int(node.config["units"])
        use_bias = bool(node.config.get("use_bias", True))
        parameters = {"W": weights[0]}
        if use_bias:
            parameters["b"] = weights[1]
        if tensor.spatial:  # Keras applies Dense to the last axis of every pixel: a 1x1 convolution
            name = self.emit(node, None, "Convolution", [tensor.name], parameters, kernel=[1, 1], channels=units,
                             padding="valid", bias=use_bias, activation=activation)
        else:  # a vector, or a sequence: Anvil's Dense works per position, as Keras does
            name = self.emit(node, None, "Dense", [tensor.name], parameters, neurons=units, bias=use_bias,
                             activation=activation)
        return self.finish_activation(node, name, tensor.shape[:-1] + (units,), activation, extra)

    def layer_Flatten(self, node):
        """`Flatten`: Flatten in hwc order (nothing for a vector)."""
        self.check_channels_last(node)
        tensor = self.source(node)
        if len(tensor.shape) == 1:
            return tensor
        if None in tensor.shape:
            self.fail(node, "the flattened size depends on the open input height/width; pass --input-shape H,W")
        name = self.emit(node, None, "Flatten", [tensor.name], order="hwc")
        return Tensor(name, (int(np.prod(tensor.shape)),), nonnegative=tensor.nonnegative)

    def activation_layer(self, node, activation, extra=None):
        """An Activation layer (or a Softmax/LogSoftmax `extra` layer); "none" passes the input through."""
        tensor = self.source(node)
        if extra is not None:
            self.check_axis(node, tensor, node.config.get("axis", -1))
            name = self.emit(node, None, extra, [tensor.name])
            return Tensor(name, tensor.shape, nonnegative=extra == "Softmax")
        if activation == "none":
            return tensor
        name = self.emit(node, None, "Activation", [tensor.name], function=activation)
        return Tensor(name, tensor.shape, nonnegative=self._is_nonnegative(activation))

    def check_axis(self, node, tensor, axis):
        """An error unless `axis` is the channel axis (-1)."""
        axes = axis if isinstance(axis, (list, tuple)) else [axis]
        rank = len(tensor.shape) + 1
        if [a % rank for a in axes] != [rank - 1]:
            self.fail(node, f"axis {axis} is not supported; Anvil works over the channels (axis -1)")

    def layer_Activation(self, node):
        """`Activation`: its function as an Activation, Softmax or LogSoftmax layer."""
        activation, extra = self.activation(node, node.config["activation"])
        return self.activation_layer(node, activation, extra)

    def layer_Softmax(self, node):
        """`Softmax` over the channels."""
        return self.activation_layer(node, "none", "Softmax")

    def layer_ReLU(self, node):
        """`ReLU` with max_value and negative_slope: relu, relu6, clip, leakyRelu (then clip when both are set)."""
        maximum = node.config.get("max_value")
        slope = float(node.config.get("negative_slope", 0.0) or 0.0)
        if float(node.config.get("threshold", 0.0) or 0.0) != 0.0:
            self.fail(node, "a non-zero threshold is not supported")
        if slope == 0.0:
            if maximum is None:
                return self.activation_layer(node, "relu")
            if float(maximum) == 6.0:
                return self.activation_layer(node, "relu6")
            return self.activation_layer(node, activation_json("clip", min=0.0, max=float(maximum)))
        tensor = self.source(node)
        leaky = activation_json("leakyRelu", alpha=slope)
        if maximum is None:
            name = self.emit(node, None, "Activation", [tensor.name], function=leaky)
            return Tensor(name, tensor.shape)
        first = self.emit(node, "leaky", "Activation", [tensor.name], function=leaky)
        name = self.emit(node, None, "Activation", [first], function=activation_json("clip", min=-FLOAT_MAX, max=float(maximum)))
        return Tensor(name, tensor.shape)

    def layer_LeakyReLU(self, node):
        """`LeakyReLU`: leakyRelu with its slope."""
        slope = node.config.get("negative_slope", node.config.get("alpha", 0.3))
        return self.activation_layer(node, activation_json("leakyRelu", alpha=float(slope)))

    def layer_ELU(self, node):
        """`ELU`: elu with its alpha."""
        return self.activation_layer(node, activation_json("elu", alpha=float(node.config.get("alpha", 1.0))))

    def layer_PReLU(self, node):
        """`PReLU`: one slope per channel; slopes varying over height or width are an error."""
        tensor = self.source(node)
        alpha = self.weights(node)[0]
        channels = tensor.shape[-1]
        flat = alpha.reshape(-1, alpha.shape[-1]) if alpha.ndim > 1 else alpha.reshape(1, -1)
        if flat.shape[-1] != channels:
            if flat.size == 1:
                flat = np.full((1, channels), flat.reshape(-1)[0], dtype=np.float32)
            else:
                self.fail(node, f"slopes of shape {alpha.shape} are not one per channel")
        if not np.all(flat == flat[0:1]):
            self.fail(node, "slopes that vary over height/width are not supported; Anvil's PReLU has one slope "
                            "per channel (use shared_axes=[1, 2])")
        name = self.emit(node, None, "PReLU", [tensor.name], {"slopes": flat[0]})
        return Tensor(name, tensor.shape)

    def layer_Rescaling(self, node):
        """`Rescaling` by scalars: the linear activation scale·x + offset."""
        scale, offset = node.config.get("scale", 1.0), node.config.get("offset", 0.0)
        if np.ndim(scale) or np.ndim(offset):
            self.fail(node, "only scalar scale and offset are supported")
        return self.activation_layer(node, activation_json("linear", a=float(scale), b=float(offset)))

    def layer_BatchNormalization(self, node):
        """`BatchNormalization` over the channels; γ = 1 / β = 0 when scale/center are off."""
        tensor = self.source(node)
        self.check_axis(node, tensor, node.config.get("axis", -1))
        weights = self.weights(node)
        channels = tensor.shape[-1]
        gamma = weights.pop(0) if node.config.get("scale", True) else np.ones(channels, np.float32)
        beta = weights.pop(0) if node.config.get("center", True) else np.zeros(channels, np.float32)
        mean, variance = weights[0], weights[1]
        name = self.emit(node, None, "BatchNormalization", [tensor.name],
                         {"gamma": gamma, "beta": beta, "mean": mean, "variance": variance},
                         epsilon=float(node.config.get("epsilon", 0.001)))
        return Tensor(name, tensor.shape)

    def layer_Add(self, node):
        """`Add` of equally shaped tensors."""
        sources = [self.source(node, i) for i in range(len(node.inputs))]
        if len({s.shape for s in sources}) != 1:
            return self.merge(node, "add")
        name = self.emit(node, None, "Add", [s.name for s in sources])
        return Tensor(name, sources[0].shape, nonnegative=all(s.nonnegative for s in sources))

    def merge(self, node, operation):
        """Multiply / Subtract / Maximum / Minimum / Average, and Add of differently shaped
        tensors: Elementwise with broadcasting over (height, width, channels)."""
        sources = [self.source(node, i) for i in range(len(node.inputs))]
        # Trailing axes align, as Keras broadcasts: a vector (n,) with the channels of an image.
        shape = [1, 1, 1]
        for source in sources:
            for axis, size in enumerate(source.hwc):
                # None is an open size: it broadcasts with 1 and with itself (Anvil checks each size).
                if size == 1 or size == shape[axis]:
                    continue
                if shape[axis] != 1:
                    self.fail(node, f"shapes {[s.shape for s in sources]} do not broadcast (each axis equal or 1)")
                shape[axis] = size
        name = self.emit(node, None, "Elementwise", [s.name for s in sources], operation=operation)
        rank = max(len(s.shape) for s in sources)
        return Tensor(name, tuple(shape[3 - rank:]))

    def layer_Multiply(self, node):
        """`Multiply`: Elementwise multiply (a squeeze-and-excitation gate broadcasts)."""
        return self.merge(node, "multiply")

    def layer_Subtract(self, node):
        """`Subtract`: Elementwise subtract."""
        return self.merge(node, "subtract")

    def layer_Maximum(self, node):
        """`Maximum`: Elementwise maximum."""
        return self.merge(node, "maximum")

    def layer_Minimum(self, node):
        """`Minimum`: Elementwise minimum."""
        return self.merge(node, "minimum")

    def layer_Average(self, node):
        """`Average`: Elementwise mean."""
        return self.merge(node, "mean")

    def layer_Concatenate(self, node):
        """`Concatenate` along the channels."""
        sources = [self.source(node, i) for i in range(len(node.inputs))]
        self.check_axis(node, sources[0], node.config.get("axis", -1))
        if len({s.shape[:-1] for s in sources}) != 1:
            self.fail(node, f"inputs differ in height/width: {[s.shape for s in sources]}")
        name = self.emit(node, None, "Concatenate", [s.name for s in sources])
        shape = sources[0].shape[:-1] + (sum(s.shape[-1] for s in sources),)
        return Tensor(name, shape, nonnegative=all(s.nonnegative for s in sources))

    def resize(self, node, height, width, nearest_allowed=False, antialias=False, tensor=None):
        """A Resize of `tensor` (the node's input by default) to height x width as Keras's torch
        backend computes it (torch's interpolate, align_corners False): bilinear and bicubic (a = −0.75,
        edge taps clamped) with half-pixel coordinates; nearest as torch's "nearest-exact" (source
        floor((x + 0.5)·in/out): half-pixel rounding half up), or, for an integer upsampling
        (`nearest_allowed`, Keras repeats the rows), asymmetric rounding down; other interpolations
        are errors. `antialias` (bilinear and bicubic; nearest ignores it, as Keras does): torch's
        antialiased filter, widened by 1 / scale when downsampling, taps outside the image dropped,
        bicubic with a = −0.5."""
        if tensor is None:
            tensor = self.source(node)
            self.spatial_input(node, tensor)
        interpolation = node.config.get("interpolation", "nearest")
        options = self.resize_options(node, interpolation, nearest_allowed)
        if antialias and interpolation in ("bilinear", "bicubic"):
            options.update(antialias=True, excludeOutside=True)
            if interpolation == "bicubic":
                options["cubicCoefficient"] = -0.5
        name = self.emit(node, None, "Resize", [tensor.name], size=[height, width], **options)
        return Tensor(name, (height, width, tensor.shape[2]), nonnegative=tensor.nonnegative and interpolation != "bicubic")

    def resize_options(self, node, interpolation, repeat=False):
        """The Resize options (all but the size) of a Keras interpolation; `repeat`: nearest is an
        integer upsampling that repeats rows and columns."""
        if interpolation == "nearest" and repeat:
            return dict(coordinates="asymmetric", mode="nearest", nearestRounding="floor")
        if interpolation == "nearest":
            return dict(coordinates="halfPixel", mode="nearest", nearestRounding="roundPreferCeil")
        if interpolation == "bilinear":
            return dict(coordinates="halfPixel")
        if interpolation == "bicubic":
            return dict(coordinates="halfPixel", mode="cubic", cubicCoefficient=-0.75)
        self.fail(node, f"interpolation '{interpolation}' is not supported (nearest, bilinear or bicubic)")

    def layer_UpSampling2D(self, node):
        """`UpSampling2D` (nearest, bilinear or bicubic): Resize to the input size times the factors."""
        self.check_channels_last(node)
        tensor = self.source(node)
        self.spatial_input(node, tensor)
        sh, sw = _pair(node.config.get("size", 2))
        if None in tensor.shape[:2]:
            # An open size: Resize by the factors (the same samples as resizing to in × factor:
            # half-pixel bilinear, or asymmetric nearest rounding down, for an integer factor).
            interpolation = node.config.get("interpolation", "nearest")
            options = self.resize_options(node, interpolation, repeat=True)
            name = self.emit(node, None, "Resize", [tensor.name], scale=[float(sh), float(sw)], **options)
            height, width = (None if v is None else v * f for v, f in zip(tensor.shape[:2], (sh, sw)))
            return Tensor(name, (height, width, tensor.shape[2]),
                          nonnegative=tensor.nonnegative and interpolation != "bicubic")
        return self.resize(node, tensor.shape[0] * sh, tensor.shape[1] * sw, nearest_allowed=True)

    def layer_Conv2DTranspose(self, node):
        """`Conv2DTranspose`: TransposedConvolution (kernel [kh][kw][out][in], the tensorflow layout) with
        explicit pads and output padding reproducing Keras's output window (valid: in·s + max(k − s, 0),
        same: in·s, or with output_padding its own rule)."""
        self.check_channels_last(node)
        tensor = self.source(node)
        self.spatial_input(node, tensor)
        kernel = _pair(node.config["kernel_size"])
        stride = _pair(node.config.get("strides", 1))
        dilation = _pair(node.config.get("dilation_rate", 1))
        padding = node.config.get("padding", "valid")
        extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
        output_padding = node.config.get("output_padding")
        output_padding = [None, None] if output_padding is None else list(_pair(output_padding))
        h, w, _ = tensor.shape
        if padding not in ("same", "valid"):
            self.fail(node, f"padding '{padding}' is not supported (same or valid)")
        before, after, op, sizes = [], [], [], []
        for size, s, e, o, d in zip((h, w), stride, extent, output_padding, dilation):
            # Keras's padding of the dilated input (its JAX form), as crops of the full output (in − 1)·s + e.
            if padding == "valid":
                o = max(e, s) - e if o is None else o
                left, right = e - 1, e - 1 + o
            else:
                total = s + e - 2 if o is None else e + e % 2 - 2 + o
                left = min(total // 2 + total % 2, e - 1)
                right = total - left
            crop_left, crop_right = e - 1 - left, e - 1 - right
            before.append(crop_left)
            after.append(max(crop_right, 0))
            op.append(max(-crop_right, 0))
            sizes.append(None if size is None else (size - 1) * s + e - crop_left - crop_right)  # None: open
            if crop_left < 0 or op[-1] >= max(s, d):
                self.fail(node, f"output_padding {output_padding} gives an output Anvil cannot express")
        pads = [before[0], before[1], after[0], after[1]]
        oh, ow = sizes
        activation, extra = self.activation(node)
        weights = self.weights(node)
        filters = int(node.config["filters"])
        parameters = {"W": weights[0]}
        if node.config.get("use_bias", True):
            parameters["b"] = weights[1]
        name = self.emit(node, None, "TransposedConvolution", [tensor.name], parameters, kernel=kernel, channels=filters,
                         stride=stride, padding=pads, outputPadding=op, dilation=dilation,
                         bias=bool(node.config.get("use_bias", True)), activation=activation)
        return self.finish_activation(node, name, (oh, ow, filters), activation, extra)

    def normalization(self, node, layer_type, **options):
        """LayerNormalization / GroupNormalization over the channels (γ = 1 / β = 0 when scale/center are off)."""
        tensor = self.source(node)
        axis = node.config.get("axis", -1)
        axis = axis[0] if isinstance(axis, (list, tuple)) and len(axis) == 1 else axis
        self.check_axis(node, tensor, axis)
        if node.config.get("rms_scaling"):
            self.fail(node, "rms_scaling=True is not supported")
        weights = self.weights(node)
        channels = tensor.shape[-1]
        gamma = weights.pop(0) if node.config.get("scale", True) else np.ones(channels, np.float32)
        beta = weights.pop(0) if node.config.get("center", True) else np.zeros(channels, np.float32)
        name = self.emit(node, None, layer_type, [tensor.name], {"gamma": gamma, "beta": beta},
                         epsilon=float(node.config.get("epsilon", 0.001)), **options)
        return Tensor(name, tensor.shape)

    def layer_LayerNormalization(self, node):
        """`LayerNormalization` over the last axis (the channels): LayerNormalization."""
        return self.normalization(node, "LayerNormalization")

    def layer_GroupNormalization(self, node):
        """`GroupNormalization` over channel groups: GroupNormalization."""
        tensor = self.source(node)
        groups = int(node.config.get("groups", 32))
        if tensor.shape[-1] % groups:
            self.fail(node, f"groups {groups} must divide {tensor.shape[-1]} channels")
        return self.normalization(node, "GroupNormalization", groups=groups)

    def layer_Resizing(self, node):
        """`Resizing` (bilinear, nearest or bicubic; antialias; crop_to_aspect_ratio: the centred
        window of the target's aspect ratio, as Slice layers, then the resize): Resize to the size."""
        self.check_channels_last(node)
        if node.config.get("pad_to_aspect_ratio"):
            self.fail(node, "pad_to_aspect_ratio=True is not supported")
        height, width = int(node.config["height"]), int(node.config["width"])
        tensor = self.source(node)
        self.spatial_input(node, tensor)
        if node.config.get("crop_to_aspect_ratio"):
            tensor = self.crop_to_aspect_ratio(node, tensor, height, width)
        return self.resize(node, height, width, antialias=bool(node.config.get("antialias")), tensor=tensor)

    def crop_to_aspect_ratio(self, node, tensor, height, width):
        """The centred crop Keras takes before resizing to height x width (its torch backend's rule:
        the largest window of the target's aspect ratio, start rounded down): a Slice per cropped axis."""
        h, w, c = tensor.shape
        if h is None or w is None:
            self.fail(node, "crop_to_aspect_ratio on an open input size; pass --input-shape H,W,C")
        crop_h = max(min(h, int(float(w * height) / width)), 1)
        crop_w = max(min(w, int(float(h * width) / height)), 1)
        shape = [h, w, c]
        for axis, crop, part in ((1, crop_h, "crop_h"), (2, crop_w, "crop_w")):
            if crop < shape[axis - 1]:
                start = int(float(shape[axis - 1] - crop) / 2)
                name = self.emit(node, part, "Slice", [tensor.name], axis=axis, start=start, end=start + crop)
                shape[axis - 1] = crop
                tensor = Tensor(name, shape, nonnegative=tensor.nonnegative)
        return tensor

    def layer_ZeroPadding2D(self, node):
        """`ZeroPadding2D`: no layer; the padding rides on the tensor until the next layer folds it."""
        self.check_channels_last(node)
        tensor = self.source(node, allow_padding=True)
        self.spatial_input(node, tensor)
        padding = node.config.get("padding", 1)
        if isinstance(padding, int):
            (top, bottom), (left, right) = (padding, padding), (padding, padding)
        else:
            (top, bottom), (left, right) = [_pair(p) for p in padding]
        previous = tensor.padding or (0, 0, 0, 0)
        pads = (previous[0] + top, previous[1] + bottom, previous[2] + left, previous[3] + right)
        return Tensor(tensor.name, tensor.shape, nonnegative=tensor.nonnegative, padding=pads)


def convert_file(path, output_directory, name=None, input_shape=None):
    """Loads a .keras/.h5 file and converts it into `output_directory`; returns the ModelWriter."""
    import keras
    model = cli.load("Keras", path, lambda: keras.models.load_model(path, compile=False))
    writer = KerasConverter(model, name=name, input_shape=input_shape).convert()
    writer.write(output_directory)
    return writer


def main(argv=None):
    """The `convert_keras` command line; returns the exit status."""
    return cli.file_main("keras", __doc__.split("\n")[0], [("model", "a .keras or .h5 file")],
                         "a model file and an output directory",
                         ("HW", "H,W for inputs whose size Keras leaves open"), convert_file, argv)


if __name__ == "__main__":
    sys.exit(main())
