"""Converts a Caffe network (.prototxt + .caffemodel) to an Anvil model file, without Caffe.

    .venv/bin/python Scripts/convert_caffe.py deploy.prototxt weights.caffemodel out/ [--name NAME]
                                     [--input-shape C,H,W]

Writes out/model.json and out/weights.bin with layout "pytorch" (Caffe's blobs are OIHW and
InnerProduct flattens C,H,W, exactly Anvil's "pytorch" layout). The prototxt text format and
the caffemodel protobuf wire format are parsed here; only numpy is needed. Both the current
format (`layer { type: "Convolution" }`) and the V1 format of the 2014 model-zoo files
(`layers { type: CONVOLUTION }`, `input_dim`) are read. Supported layers: docs/converters.md.
"""

import struct
import sys

import numpy as np

from . import cli
from .writer import ConversionError, ModelWriter, activation_json


# ---------------------------------------------------------------------------------------
# Protobuf text format (prototxt)


class Enum(str):
    """An unquoted identifier value in text format (`pool: MAX`)."""


class TextMessage:
    """A parsed text-format message: field name -> list of values (repeated or not)."""

    def __init__(self):
        """An empty message."""
        self.fields = {}

    def add(self, name, value):
        """Appends one value of field `name` (fields repeat in protobuf)."""
        self.fields.setdefault(name, []).append(value)

    def all(self, name):
        """Every value of field `name`, in file order ([] when absent)."""
        return self.fields.get(name, [])

    def get(self, name, default=None):
        """The last value of field `name`, or `default`."""
        values = self.fields.get(name)
        return values[-1] if values else default

    def has(self, name):
        """Whether field `name` is present."""
        return name in self.fields

    def message(self, name):
        """The sub-message `name`, or an empty one when absent."""
        value = self.get(name)
        return value if isinstance(value, TextMessage) else TextMessage()


def _tokenize(text, source):
    """Splits prototxt text into (kind, value, line) tokens, punctuation being its own kind;
    an unterminated string is an error naming `source` and the line."""
    tokens, i, line, n = [], 0, 1, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
        elif ch.isspace():
            i += 1
        elif ch == "#":
            while i < n and text[i] != "\n":
                i += 1
        elif ch in "{}:[],;<>":
            tokens.append((ch, None, line))
            i += 1
        elif ch in "\"'":
            quote, i, chunk = ch, i + 1, []
            while i < n and text[i] != quote:
                if text[i] == "\\" and i + 1 < n:
                    escaped = text[i + 1]
                    chunk.append({"n": "\n", "t": "\t", "r": "\r"}.get(escaped, escaped))
                    i += 2
                else:
                    if text[i] == "\n":
                        raise ConversionError(f"{source}:{line}: unterminated string")
                    chunk.append(text[i])
                    i += 1
            if i >= n:
                raise ConversionError(f"{source}:{line}: unterminated string")
            i += 1
            # adjacent string literals concatenate
            if tokens and tokens[-1][0] == "string":
                tokens[-1] = ("string", tokens[-1][1] + "".join(chunk), tokens[-1][2])
            else:
                tokens.append(("string", "".join(chunk), line))
        else:
            start = i
            while i < n and not text[i].isspace() and text[i] not in "{}:[],;<>#\"'":
                i += 1
            tokens.append(("word", text[start:i], line))
    return tokens


def _scalar(kind, value, source, line):
    """A scalar token as its Python value: str for strings, Enum for bare words, int or float for numbers."""
    if kind == "string":
        return value
    lowered = value.lower()
    try:
        if lowered.startswith(("0x", "-0x")):
            return int(value, 16)
        if all(c in "+-0123456789" for c in value):
            return int(value)
        return float(value.rstrip("fF")) if lowered not in ("inf", "-inf", "nan") else float(lowered)
    except ValueError:
        if value.replace("_", "").isalnum():
            return Enum(value)
        raise ConversionError(f"{source}:{line}: cannot read value '{value}'")


def parse_prototxt(text, source="prototxt"):
    """Parses protobuf text format into nested ``TextMessage``s."""
    tokens = _tokenize(text, source)
    position = 0

    def peek():
        """The next token, or (None, None, last line) at the end."""
        return tokens[position] if position < len(tokens) else (None, None, tokens[-1][2] if tokens else 1)

    def parse_message(closing):
        """Parses fields up to `closing` ('}' or the end of the text) into a TextMessage."""
        nonlocal position
        message = TextMessage()
        while True:
            kind, value, line = peek()
            if kind is None:
                if closing is None:
                    return message
                raise ConversionError(f"{source}: missing '{closing}' at end of file")
            if kind == closing:
                position += 1
                return message
            if kind in (",", ";"):
                position += 1
                continue
            if kind != "word":
                raise ConversionError(f"{source}:{line}: expected a field name, found '{value or kind}'")
            name = value
            position += 1
            kind, value, line = peek()
            if kind == ":":
                position += 1
                kind, value, line = peek()
            if kind in ("{", "<"):
                position += 1
                message.add(name, parse_message("}" if kind == "{" else ">"))
            elif kind == "[":
                position += 1
                while True:
                    kind, value, line = peek()
                    if kind == "]":
                        position += 1
                        break
                    if kind == ",":
                        position += 1
                        continue
                    if kind in ("{", "<"):
                        position += 1
                        message.add(name, parse_message("}" if kind == "{" else ">"))
                    elif kind in ("word", "string"):
                        position += 1
                        message.add(name, _scalar(kind, value, source, line))
                    else:
                        raise ConversionError(f"{source}:{line}: unexpected '{kind}' in a list")
            elif kind in ("word", "string"):
                position += 1
                message.add(name, _scalar(kind, value, source, line))
            else:
                raise ConversionError(f"{source}:{line}: expected a value for '{name}'")

    return parse_message(None)


# ---------------------------------------------------------------------------------------
# Protobuf wire format (caffemodel)


def _varint(data, position):
    """Decodes a base-128 varint at `position`; returns (value, position after it)."""
    result, shift = 0, 0
    while True:
        if position >= len(data):
            raise ConversionError("caffemodel: truncated varint")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, position
        shift += 7
        if shift > 70:
            raise ConversionError("caffemodel: varint too long")


def parse_wire(data):
    """Decodes one message: field number -> list of (wire type, value); value is an int
    for varints and fixed types, a memoryview for length-delimited fields."""
    data = memoryview(data)
    fields, position, end = {}, 0, len(data)
    while position < end:
        key, position = _varint(data, position)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, position = _varint(data, position)
        elif wire == 1:
            if position + 8 > end:
                raise ConversionError("caffemodel: truncated 64-bit field")
            value = bytes(data[position:position + 8])
            position += 8
        elif wire == 2:
            length, position = _varint(data, position)
            if position + length > end:
                raise ConversionError(f"caffemodel: field {number} runs past the end of its message")
            value = data[position:position + length]
            position += length
        elif wire == 5:
            if position + 4 > end:
                raise ConversionError("caffemodel: truncated 32-bit field")
            value = bytes(data[position:position + 4])
            position += 4
        else:
            raise ConversionError(f"caffemodel: unsupported wire type {wire} (field {number}); not a caffemodel?")
        fields.setdefault(number, []).append((wire, value))
    return fields


def _wire_string(fields, number, default=""):
    """The last length-delimited field `number` decoded as UTF-8, or `default`."""
    values = fields.get(number)
    return bytes(values[-1][1]).decode("utf-8", "replace") if values else default


def _wire_floats(fields, number, fmt, size):
    """A repeated float/double field, packed or not."""
    chunks = []
    for wire, value in fields.get(number, []):
        if wire == 2:
            if len(value) % size:
                raise ConversionError("caffemodel: packed float data has a partial value")
            chunks.append(np.frombuffer(value, dtype=fmt))
        else:
            chunks.append(np.frombuffer(value, dtype=fmt))
    if not chunks:
        return None
    return np.concatenate(chunks) if len(chunks) > 1 else chunks[0]


def _wire_ints(fields, number):
    """Every varint of field `number`, packed or not, as Python ints."""
    result = []
    for wire, value in fields.get(number, []):
        if wire == 2:
            position = 0
            while position < len(value):
                item, position = _varint(value, position)
                result.append(item)
        else:
            result.append(value)
    return [v - (1 << 64) if v >= 1 << 63 else v for v in result]


def parse_blob(data):
    """BlobProto -> float32 array with its shape (shape field 7, or legacy num/channels/height/width)."""
    fields = parse_wire(data)
    values = _wire_floats(fields, 5, "<f4", 4)
    if values is None:
        values = _wire_floats(fields, 8, "<f8", 8)
    if values is None:
        values = np.zeros(0, np.float32)
    if 7 in fields:
        shape = _wire_ints(parse_wire(fields[7][-1][1]), 1)
    else:
        legacy = [(_wire_ints(fields, n) or [None])[-1] for n in (1, 2, 3, 4)]
        shape = [v for v in legacy if v is not None] or [values.size]
    if int(np.prod(shape, dtype=np.int64)) != values.size:
        raise ConversionError(f"caffemodel: a blob of shape {shape} holds {values.size} values")
    return values.astype(np.float32).reshape(shape)


def parse_caffemodel(data):
    """Layer name -> list of blobs, from NetParameter field 100 (layer) or 2 (V1 layers)."""
    net = parse_wire(data)
    layers = {}
    for number, name_field, blob_field in ((100, 1, 7), (2, 4, 6)):
        for _, layer_bytes in net.get(number, []):
            layer = parse_wire(layer_bytes)
            name = _wire_string(layer, name_field)
            blobs = [parse_blob(b) for _, b in layer.get(blob_field, [])]
            if blobs:
                layers[name] = blobs
    return layers


# A minimal writer of the same wire format, used by the self-test and the fixture builder.

def _encode_varint(value):
    """Encodes a non-negative int (or a negative one as 64-bit two's complement) as a varint."""
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number, wire, payload):
    """One protobuf field: its key (number and wire type) followed by `payload`."""
    key = _encode_varint((number << 3) | wire)
    if wire == 2:
        return key + _encode_varint(len(payload)) + payload
    return key + payload


def encode_blob(array, legacy=False):
    """A BlobProto of `array`: shape (or the V1 num/channels/height/width when `legacy`) and packed floats."""
    array = np.asarray(array, dtype=np.float32)
    out = b""
    if legacy:  # num, channels, height, width (4-D, padded with leading 1s)
        dims = [1] * (4 - array.ndim) + list(array.shape)
        for number, dim in zip((1, 2, 3, 4), dims):
            out += _field(number, 0, _encode_varint(int(dim)))
    else:
        shape = b"".join(_encode_varint(int(d)) for d in array.shape)
        out += _field(7, 2, _field(1, 2, shape))
    out += _field(5, 2, array.astype("<f4").tobytes())
    return out


def encode_caffemodel(layers, v1=False, name="net"):
    """`layers`: list of (name, type string, [arrays]) -> NetParameter bytes."""
    out = _field(1, 2, name.encode())
    for layer_name, layer_type, blobs in layers:
        if v1:
            body = _field(4, 2, layer_name.encode()) + b"".join(_field(6, 2, encode_blob(b, legacy=True)) for b in blobs)
            out += _field(2, 2, body)
        else:
            body = _field(1, 2, layer_name.encode()) + _field(2, 2, layer_type.encode())
            body += b"".join(_field(7, 2, encode_blob(b)) for b in blobs)
            out += _field(100, 2, body)
    return out


# ---------------------------------------------------------------------------------------
# Conversion

V1_TYPES = {
    "CONVOLUTION": "Convolution", "POOLING": "Pooling", "INNER_PRODUCT": "InnerProduct", "RELU": "ReLU",
    "SIGMOID": "Sigmoid", "TANH": "TanH", "SOFTMAX": "Softmax", "DROPOUT": "Dropout", "CONCAT": "Concat",
    "ELTWISE": "Eltwise", "LRN": "LRN", "DATA": "Data", "IMAGE_DATA": "ImageData", "MEMORY_DATA": "MemoryData",
    "HDF5_DATA": "HDF5Data", "WINDOW_DATA": "WindowData", "DUMMY_DATA": "DummyData", "FLATTEN": "Flatten",
    "SPLIT": "Split", "SOFTMAX_LOSS": "SoftmaxWithLoss", "ACCURACY": "Accuracy", "SILENCE": "Silence",
    "POWER": "Power", "ABSVAL": "AbsVal", "BNLL": "BNLL", "DECONVOLUTION": "Deconvolution", "SLICE": "Slice",
    "EUCLIDEAN_LOSS": "EuclideanLoss", "THRESHOLD": "Threshold", "ARGMAX": "ArgMax", "MVN": "MVN",
    "EXP": "Exp", "IM2COL": "Im2col",
}
DATA_LAYERS = {"Data", "ImageData", "MemoryData", "HDF5Data", "WindowData", "DummyData", "AnnotatedData",
               "VideoData", "Python"}
SKIPPED = {"Accuracy", "SoftmaxWithLoss", "EuclideanLoss", "SigmoidCrossEntropyLoss", "HingeLoss",
           "InfogainLoss", "MultinomialLogisticLoss", "ContrastiveLoss", "Silence"}
UNSUPPORTED_REASONS = {
    "Crop": "Crop is not an Anvil layer",
}


class Tensor:
    """A Caffe blob as an Anvil tensor: its name, shape and a BatchNorm waiting for its Scale."""
    def __init__(self, name, shape, pending_bn=None):
        """`shape` is (H, W, C) for images, (F,) for vectors."""
        self.name = name            # Anvil tensor name
        self.shape = tuple(shape)   # (h, w, c) or (n,)
        self.pending_bn = pending_bn  # (layer name, mean, variance, epsilon) of a BatchNorm not yet written
        self.read = False

    @property
    def spatial(self):
        """Whether the tensor is an image (H, W, C) rather than a vector."""
        return len(self.shape) == 3


def _repeated_pair(param, name, name_h, name_w, default):
    """(height, width) of a convolution or pooling option given as `name` (one or two values) or `name_h`/`name_w`."""
    if param.has(name_h) or param.has(name_w):
        return (int(param.get(name_h, default)), int(param.get(name_w, default)))
    values = [int(v) for v in param.all(name)]
    if not values:
        return (default, default)
    if len(values) == 1:
        return (values[0], values[0])
    if len(values) == 2:
        return (values[0], values[1])
    raise ConversionError(f"{name} has {len(values)} values; only 2-D is supported")


class CaffeConverter:
    """Converts a parsed prototxt and its caffemodel blobs into a ModelWriter (layout "pytorch")."""
    def __init__(self, net, blobs, name=None, input_shape=None):
        """`net` is the parsed prototxt, `blobs` maps layer names to their float arrays."""
        self.net = net
        self.blobs = blobs
        self.input_shape = input_shape
        self.writer = ModelWriter(name or net.get("name") or "caffe", layout="pytorch")
        self.tensors = {}   # Caffe blob name -> Tensor (latest version)
        self.produced = []  # every Tensor produced by a layer, in order

    def fail(self, layer, message):
        """Raises the ConversionError naming `layer` and its type."""
        raise ConversionError(f"layer '{layer.get('name', '?')}' ({self.type_of(layer)}): {message}")

    @staticmethod
    def type_of(layer):
        """The layer's type name, with V1 enum names (CONVOLUTION) mapped to current ones."""
        kind = layer.get("type", "")
        return V1_TYPES.get(str(kind), str(kind)) if isinstance(kind, Enum) else str(kind)

    # -- inputs ---------------------------------------------------------------------------

    def add_input(self, name, dims):
        """Adds an Anvil input for N,C,H,W, C,H,W or N,F `dims`; --input-shape replaces the first one's."""
        dims = [int(d) for d in dims]
        if len(dims) == 4:
            shape = (dims[2], dims[3], dims[1])
        elif len(dims) == 2:
            shape = (dims[1],)
        elif len(dims) == 3:
            shape = (dims[1], dims[2], dims[0])
        else:
            raise ConversionError(f"input '{name}' has shape {dims}; expected N,C,H,W or N,F")
        if self.input_shape is not None and len(self.inputs_added()) == 0:
            c, h, w = self.input_shape
            shape = (h, w, c)
        anvil = self.writer.unique_name(name)
        self.writer.add_input(anvil, shape if len(shape) == 3 else (1, 1, shape[0]))
        self.tensors[name] = Tensor(anvil, shape)

    def inputs_added(self):
        """The inputs written so far."""
        return self.writer.inputs

    def top_level_inputs(self):
        """Adds the inputs declared at the top level (`input` with `input_dim` or `input_shape`)."""
        names = [str(v) for v in self.net.all("input")]
        dims = [int(v) for v in self.net.all("input_dim")]
        shapes = self.net.all("input_shape")
        for i, name in enumerate(names):
            if i < len(shapes):
                self.add_input(name, shapes[i].all("dim"))
            elif len(dims) >= 4 * (i + 1):
                self.add_input(name, dims[4 * i:4 * i + 4])
            elif self.input_shape is not None:
                self.add_input(name, [1, *self.input_shape])
            else:
                raise ConversionError(f"input '{name}' has no input_dim/input_shape; pass --input-shape C,H,W")

    # -- helpers --------------------------------------------------------------------------

    def source(self, layer, index=0, mark_read=True):
        """The tensor bottom `index` of `layer` names; an error when no earlier layer produced it."""
        bottoms = [str(b) for b in layer.all("bottom")]
        if index >= len(bottoms):
            self.fail(layer, f"needs at least {index + 1} bottom blob(s)")
        name = bottoms[index]
        if name not in self.tensors:
            self.fail(layer, f"reads blob '{name}', which no earlier layer or input produces")
        tensor = self.materialize(self.tensors[name])
        self.tensors[name] = tensor
        tensor.read = tensor.read or mark_read
        return tensor

    def materialize(self, tensor):
        """Writes a BatchNorm that no Scale layer followed (gamma 1, beta 0)."""
        if tensor.pending_bn is None:
            return tensor
        layer_name, mean, variance, epsilon, source = tensor.pending_bn
        channels = mean.size
        name = self.add(layer_name, "BatchNormalization", [source], epsilon=epsilon,
                        parameters={"gamma": np.ones(channels), "beta": np.zeros(channels), "mean": mean,
                                    "variance": variance})
        result = Tensor(name, tensor.shape)
        self.produced.append(result)
        return result

    def add(self, wanted, layer_type, inputs, parameters=None, **options):
        """Writes one layer named after `wanted` with its parameter tensors; returns the Anvil name."""
        name = self.writer.unique_name(wanted)
        self.writer.add_layer(name, layer_type, inputs, **options)
        for suffix, values in (parameters or {}).items():
            self.writer.add_tensor(f"{name}_{suffix}", values)
        return name

    def output(self, layer, tensor, index=0):
        """Records `tensor` as the blob named by top `index` of `layer`."""
        tops = [str(t) for t in layer.all("top")]
        if index >= len(tops):
            self.fail(layer, "has no top blob")
        self.tensors[tops[index]] = tensor
        self.produced.append(tensor)
        return tensor

    def layer_blobs(self, layer, count_min, count_max=None):
        """The layer's blobs from the caffemodel; an error when missing or too few/many."""
        name = str(layer.get("name"))
        blobs = self.blobs.get(name)
        if blobs is None:
            self.fail(layer, "the caffemodel has no weights for this layer")
        if len(blobs) < count_min or (count_max is not None and len(blobs) > count_max):
            self.fail(layer, f"the caffemodel has {len(blobs)} blob(s) for it; expected {count_min}"
                             + (f"-{count_max}" if count_max and count_max != count_min else ""))
        return blobs

    def check_size(self, layer, what, array, expected):
        """An error naming the layer when blob `what` does not hold `expected` values."""
        if array.size != expected:
            self.fail(layer, f"{what} has {array.size} values (shape {list(array.shape)}); expected {expected}")

    # -- conversion -----------------------------------------------------------------------

    def convert(self):
        """Converts every layer of the test phase in order and returns the ModelWriter, outputs set and pruned."""
        self.top_level_inputs()
        layers = self.net.all("layer") or self.net.all("layers")
        if self.net.all("layer") and self.net.all("layers"):
            raise ConversionError("the prototxt mixes 'layer' and V1 'layers' entries")
        for layer in layers:
            if not self.in_test_phase(layer):
                continue
            kind = self.type_of(layer)
            if kind in SKIPPED:
                continue
            handler = getattr(self, f"layer_{kind}", None)
            if kind in DATA_LAYERS:
                handler = self.data_layer
            if handler is None:
                reason = UNSUPPORTED_REASONS.get(kind, "this layer type is not supported by the Anvil converter "
                                                       "(see docs/converters.md)")
                self.fail(layer, reason)
            handler(layer)
        for name, tensor in list(self.tensors.items()):
            self.tensors[name] = self.materialize(tensor) if not tensor.read else tensor
        inputs = {i["name"] for i in self.writer.inputs}
        outputs = []
        for tensor in self.tensors.values():
            if not tensor.read and tensor.name not in inputs and tensor.name not in outputs:
                outputs.append(tensor.name)
        if not outputs:
            raise ConversionError("the network has no output blob (every blob is read by a later layer)")
        self.writer.set_outputs(outputs)
        self.writer.prune()
        return self.writer

    @staticmethod
    def in_test_phase(layer):
        """Whether the layer runs at inference (no `include { phase: TRAIN }`)."""
        for rule in layer.all("include"):
            if rule.has("phase") and str(rule.get("phase")) != "TEST":
                return False
        for rule in layer.all("exclude"):
            if rule.has("phase") and str(rule.get("phase")) == "TEST":
                return False
        return True

    def data_layer(self, layer):
        """A data layer: an input whose size only --input-shape gives."""
        tops = [str(t) for t in layer.all("top")]
        if not tops:
            return
        if self.input_shape is None:
            self.fail(layer, "a data layer does not say its image size; pass --input-shape C,H,W")
        self.add_input(tops[0], [1, *self.input_shape])

    def layer_Input(self, layer):
        """`Input`: an input per top, of the shape in input_param."""
        shapes = layer.message("input_param").all("shape")
        for i, top in enumerate(str(t) for t in layer.all("top")):
            if i < len(shapes):
                self.add_input(top, shapes[i].all("dim"))
            elif self.input_shape is not None:
                self.add_input(top, [1, *self.input_shape])
            else:
                self.fail(layer, f"no shape for top '{top}'; pass --input-shape C,H,W")

    def convolution_param(self, layer):
        """What `Convolution` and `Deconvolution` share: the input tensor, convolution_param checked
        against it, and the weight (and bias) blobs. The weight blob holds num_output × channels /
        group × kh × kw values in both ([out][in / group][kh][kw] and [in][out / group][kh][kw])."""
        tensor = self.source(layer)
        if not tensor.spatial:
            self.fail(layer, "needs an image (N,C,H,W) input")
        param = layer.message("convolution_param")
        if int(param.get("axis", 1)) != 1:
            self.fail(layer, "only axis 1 is supported")
        outputs = int(param.get("num_output", 0))
        kernel = _repeated_pair(param, "kernel_size", "kernel_h", "kernel_w", 0)
        stride = _repeated_pair(param, "stride", "stride_h", "stride_w", 1)
        pad = _repeated_pair(param, "pad", "pad_h", "pad_w", 0)
        dilation = _repeated_pair(param, "dilation", "dilation_h", "dilation_w", 1)
        groups = int(param.get("group", 1))
        bias = str(param.get("bias_term", "true")).lower() not in ("false", "0")
        c = tensor.shape[2]
        if outputs <= 0 or min(kernel) <= 0:
            self.fail(layer, "num_output and kernel_size must be positive")
        if c % groups or outputs % groups:
            self.fail(layer, f"group {groups} must divide the input channels {c} and num_output {outputs}")
        blobs = self.layer_blobs(layer, 1 + bias, 1 + bias)
        self.check_size(layer, "the weight blob", blobs[0], outputs * (c // groups) * kernel[0] * kernel[1])
        parameters = {"W": blobs[0]}
        if bias:
            self.check_size(layer, "the bias blob", blobs[1], outputs)
            parameters["b"] = blobs[1]
        return tensor, outputs, kernel, stride, pad, dilation, groups, bias, parameters

    def layer_Convolution(self, layer):
        """`Convolution`: Convolution with explicit padding, or DepthwiseConvolution when group equals the input channels."""
        tensor, outputs, kernel, stride, pad, dilation, groups, bias, parameters = self.convolution_param(layer)
        h, w, c = tensor.shape
        oh = (h + 2 * pad[0] - ((kernel[0] - 1) * dilation[0] + 1)) // stride[0] + 1
        ow = (w + 2 * pad[1] - ((kernel[1] - 1) * dilation[1] + 1)) // stride[1] + 1
        if oh < 1 or ow < 1:
            self.fail(layer, f"the kernel {kernel} does not fit the input {h}x{w} with pad {pad}")
        padding = [pad[0], pad[1], pad[0], pad[1]]
        common = dict(kernel=kernel, stride=stride, padding=padding, dilation=dilation, bias=bias)
        name = str(layer.get("name"))
        if groups > 1 and groups == c:
            name = self.add(name, "DepthwiseConvolution", [tensor.name], parameters, multiplier=outputs // c, **common)
        else:
            name = self.add(name, "Convolution", [tensor.name], parameters, channels=outputs, groups=groups, **common)
        self.output(layer, Tensor(name, (oh, ow, outputs)))

    def layer_Deconvolution(self, layer):
        """`Deconvolution`: TransposedConvolution (weights [in][out / group][kh][kw], the pytorch layout)."""
        tensor, outputs, kernel, stride, pad, dilation, groups, bias, parameters = self.convolution_param(layer)
        h, w, _ = tensor.shape
        oh = (h - 1) * stride[0] + (kernel[0] - 1) * dilation[0] + 1 - 2 * pad[0]
        ow = (w - 1) * stride[1] + (kernel[1] - 1) * dilation[1] + 1 - 2 * pad[1]
        if oh < 1 or ow < 1:
            self.fail(layer, f"pad {pad} leaves no output for the input {h}x{w}")
        name = self.add(str(layer.get("name")), "TransposedConvolution", [tensor.name], parameters, kernel=kernel,
                        channels=outputs, stride=stride, padding=[pad[0], pad[1], pad[0], pad[1]], dilation=dilation,
                        groups=groups, bias=bias)
        self.output(layer, Tensor(name, (oh, ow, outputs)))

    def layer_LRN(self, layer):
        """`LRN` across channels (odd local_size): LocalResponseNormalization; WITHIN_CHANNEL is an error."""
        tensor = self.source(layer)
        param = layer.message("lrn_param")
        if str(param.get("norm_region", "ACROSS_CHANNELS")) not in ("ACROSS_CHANNELS", "0"):
            self.fail(layer, "norm_region WITHIN_CHANNEL is not supported (only ACROSS_CHANNELS)")
        size = int(param.get("local_size", 5))
        if size % 2 == 0:
            self.fail(layer, f"local_size {size} must be odd (as Caffe requires)")
        name = self.add(str(layer.get("name")), "LocalResponseNormalization", [tensor.name], size=size,
                        alpha=float(param.get("alpha", 1.0)), beta=float(param.get("beta", 0.75)),
                        bias=float(param.get("k", 1.0)))
        self.output(layer, Tensor(name, tensor.shape))

    def layer_Pooling(self, layer):
        """`Pooling` MAX/AVE: ceil-mode pooling (Caffe rounds up), AVE counting the padding; global pooling when asked."""
        tensor = self.source(layer)
        if not tensor.spatial:
            self.fail(layer, "needs an image (N,C,H,W) input")
        param = layer.message("pooling_param")
        method = str(param.get("pool", "MAX"))
        if method not in ("MAX", "AVE", "0", "1"):
            self.fail(layer, f"pooling method {method} is not supported (MAX or AVE)")
        average = method in ("AVE", "1")
        h, w, c = tensor.shape
        name = str(layer.get("name"))
        if str(param.get("global_pooling", "false")).lower() in ("true", "1"):
            name = self.add(name, "GlobalAveragePooling" if average else "GlobalMaxPooling", [tensor.name])
            self.output(layer, Tensor(name, (1, 1, c)))
            return
        kernel = _repeated_pair(param, "kernel_size", "kernel_h", "kernel_w", 0)
        stride = _repeated_pair(param, "stride", "stride_h", "stride_w", 1)
        pad = _repeated_pair(param, "pad", "pad_h", "pad_w", 0)
        ceil = str(param.get("round_mode", "CEIL")) in ("CEIL", "0")
        if min(kernel) <= 0:
            self.fail(layer, "kernel_size must be positive")
        if pad[0] >= kernel[0] or pad[1] >= kernel[1]:
            self.fail(layer, f"pad {pad} must be smaller than the kernel {kernel}")

        def caffe_size(size, k, s, p):  # Caffe's PoolingLayer::Reshape
            """The output length Caffe computes (rounded up, the last window starting inside the input)."""
            span = size + 2 * p - k
            out = (-(-span // s) if ceil else span // s) + 1
            if p and (out - 1) * s >= size + p:
                out -= 1
            return out

        def anvil_size(size, k, s, p):  # Anvil's ceil-mode rule (docs/model-format.md, as ONNX)
            """The output length of Anvil's ceil mode."""
            span = size + 2 * p - k
            out = (-(-span // s) if ceil else span // s) + 1
            if ceil and (out - 1) * s >= size + p:
                out -= 1
            return out

        oh, ow = caffe_size(h, kernel[0], stride[0], pad[0]), caffe_size(w, kernel[1], stride[1], pad[1])
        if (oh, ow) != (anvil_size(h, kernel[0], stride[0], pad[0]), anvil_size(w, kernel[1], stride[1], pad[1])):
            self.fail(layer, f"Caffe's output size {oh}x{ow} (a last window wholly outside the input) cannot be "
                             "expressed in Anvil")
        if oh < 1 or ow < 1:
            self.fail(layer, f"the window {kernel} does not fit the input {h}x{w}")
        options = dict(kernel=kernel, stride=stride, padding=[pad[0], pad[1], pad[0], pad[1]], ceilMode=ceil)
        if average:
            name = self.add(name, "AveragePooling", [tensor.name], countIncludesPadding=True, **options)
        else:
            name = self.add(name, "MaxPooling", [tensor.name], **options)
        self.output(layer, Tensor(name, (oh, ow, c)))

    def layer_InnerProduct(self, layer):
        """`InnerProduct`: Dense, its [out][C][H][W] weights in the pytorch layout."""
        tensor = self.source(layer)
        param = layer.message("inner_product_param")
        if int(param.get("axis", 1)) != 1:
            self.fail(layer, "only axis 1 is supported")
        outputs = int(param.get("num_output", 0))
        bias = str(param.get("bias_term", "true")).lower() not in ("false", "0")
        inputs = int(np.prod(tensor.shape))
        blobs = self.layer_blobs(layer, 1 + bias, 1 + bias)
        weights = blobs[0]
        self.check_size(layer, "the weight blob", weights, outputs * inputs)
        if str(param.get("transpose", "false")).lower() in ("true", "1"):
            weights = weights.reshape(inputs, outputs).T
        parameters = {"W": weights}
        if bias:
            self.check_size(layer, "the bias blob", blobs[1], outputs)
            parameters["b"] = blobs[1]
        name = self.add(str(layer.get("name")), "Dense", [tensor.name], parameters, neurons=outputs, bias=bias)
        self.output(layer, Tensor(name, (outputs,)))

    def activation(self, layer, function):
        """An Activation layer applying `function` to the layer's bottom."""
        tensor = self.source(layer)
        name = self.add(str(layer.get("name")), "Activation", [tensor.name], function=function)
        self.output(layer, Tensor(name, tensor.shape))

    def layer_ReLU(self, layer):
        """`ReLU`: relu, or leakyRelu with negative_slope."""
        slope = float(layer.message("relu_param").get("negative_slope", 0.0))
        self.activation(layer, "relu" if slope == 0 else activation_json("leakyRelu", alpha=slope))

    def layer_Sigmoid(self, layer):
        """`Sigmoid`: a sigmoid activation."""
        self.activation(layer, "sigmoid")

    def layer_TanH(self, layer):
        """`TanH`: a tanh activation."""
        self.activation(layer, "tanh")

    def layer_ELU(self, layer):
        """`ELU`: an elu activation with its alpha."""
        self.activation(layer, activation_json("elu", alpha=float(layer.message("elu_param").get("alpha", 1.0))))

    def layer_Power(self, layer):
        """`Power` with power 1: the linear activation scale·x + shift."""
        param = layer.message("power_param")
        if float(param.get("power", 1.0)) != 1.0:
            self.fail(layer, "only power 1 (a linear scale and shift) is supported")
        self.activation(layer, activation_json("linear", a=float(param.get("scale", 1.0)), b=float(param.get("shift", 0.0))))

    def layer_PReLU(self, layer):
        """`PReLU`: one slope per channel (a shared slope repeated)."""
        tensor = self.source(layer)
        slopes = self.layer_blobs(layer, 1, 1)[0].reshape(-1)
        channels = tensor.shape[-1]
        if slopes.size == 1:
            slopes = np.full(channels, slopes[0], np.float32)
        self.check_size(layer, "the slope blob", slopes, channels)
        name = self.add(str(layer.get("name")), "PReLU", [tensor.name], {"slopes": slopes})
        self.output(layer, Tensor(name, tensor.shape))

    def layer_Softmax(self, layer):
        """`Softmax` over the channels (axis 1)."""
        tensor = self.source(layer)
        if int(layer.message("softmax_param").get("axis", 1)) != 1:
            self.fail(layer, "only axis 1 (channels) is supported")
        name = self.add(str(layer.get("name")), "Softmax", [tensor.name])
        self.output(layer, Tensor(name, tensor.shape))

    def layer_BatchNorm(self, layer):
        """`BatchNorm`: statistics divided by the scale factor, γ = 1 and β = 0 until a Scale fills them."""
        tensor = self.source(layer)
        param = layer.message("batch_norm_param")
        epsilon = float(param.get("eps", 1e-5))
        blobs = self.layer_blobs(layer, 3, 3)
        channels = tensor.shape[-1]
        self.check_size(layer, "the mean blob", blobs[0], channels)
        self.check_size(layer, "the variance blob", blobs[1], channels)
        factor = float(blobs[2].reshape(-1)[0])
        factor = 0.0 if factor == 0 else 1.0 / factor
        mean, variance = blobs[0].reshape(-1) * factor, blobs[1].reshape(-1) * factor
        pending = Tensor(tensor.name, tensor.shape,
                         pending_bn=(str(layer.get("name")), mean, variance, epsilon, tensor.name))
        self.output(layer, pending)

    def layer_Scale(self, layer):
        """`Scale`: completes the BatchNorm before it (γ, β), or stands alone as a BatchNormalization with mean 0, variance 1."""
        if len(layer.all("bottom")) != 1:
            self.fail(layer, "a Scale with a second bottom (a learned scale blob input) is not supported")
        param = layer.message("scale_param")
        if int(param.get("axis", 1)) != 1 or int(param.get("num_axes", 1)) != 1:
            self.fail(layer, "only axis 1, num_axes 1 (one scale per channel) is supported")
        bias = str(param.get("bias_term", "false")).lower() in ("true", "1")
        name = str(layer.get("bottom"))
        raw = self.tensors.get(name)
        if raw is None:
            self.fail(layer, f"reads blob '{name}', which no earlier layer or input produces")
        blobs = self.layer_blobs(layer, 1 + bias, 1 + bias)
        channels = raw.shape[-1]
        gamma = blobs[0].reshape(-1)
        beta = blobs[1].reshape(-1) if bias else np.zeros(channels, np.float32)
        self.check_size(layer, "the scale blob", gamma, channels)
        self.check_size(layer, "the bias blob", beta, channels)
        if raw.pending_bn is not None:  # BatchNorm + Scale: one Anvil BatchNormalization
            bn_name, mean, variance, epsilon, source = raw.pending_bn
            raw.read = True
            written = self.add(bn_name, "BatchNormalization", [source], epsilon=epsilon,
                               parameters={"gamma": gamma, "beta": beta, "mean": mean, "variance": variance})
        else:  # a Scale alone: gamma * x + beta, as a BatchNormalization with mean 0, variance 1, epsilon 0
            tensor = self.source(layer)
            written = self.add(str(layer.get("name")), "BatchNormalization", [tensor.name], epsilon=0.0,
                               parameters={"gamma": gamma, "beta": beta, "mean": np.zeros(channels),
                                           "variance": np.ones(channels)})
        self.output(layer, Tensor(written, raw.shape))

    def layer_Bias(self, layer):
        """`Bias`: a BatchNormalization with mean 0, variance 1, γ 1 and the bias as β."""
        if len(layer.all("bottom")) != 1:
            self.fail(layer, "a Bias with a second bottom is not supported")
        tensor = self.source(layer)
        beta = self.layer_blobs(layer, 1, 1)[0].reshape(-1)
        channels = tensor.shape[-1]
        self.check_size(layer, "the bias blob", beta, channels)
        name = self.add(str(layer.get("name")), "BatchNormalization", [tensor.name], epsilon=0.0,
                        parameters={"gamma": np.ones(channels), "beta": beta, "mean": np.zeros(channels),
                                    "variance": np.ones(channels)})
        self.output(layer, Tensor(name, tensor.shape))

    def layer_Eltwise(self, layer):
        """`Eltwise` of two or more bottoms of one shape. SUM: Add (coefficients all 1), Elementwise
        subtract (two bottoms, coefficients 1 and −1 in either order), otherwise each bottom whose
        coefficient is not 1 scaled by a linear Activation, then Add. PROD: Elementwise multiply;
        MAX: Elementwise maximum (every bottom one operand)."""
        param = layer.message("eltwise_param")
        operation = {"0": "PROD", "1": "SUM", "2": "MAX"}.get(str(param.get("operation", "SUM")),
                                                               str(param.get("operation", "SUM")))
        if operation not in ("SUM", "PROD", "MAX"):
            self.fail(layer, f"operation {operation} is not supported (SUM, PROD or MAX)")
        coefficients = [float(v) for v in param.all("coeff")]
        sources = [self.source(layer, i) for i in range(len(layer.all("bottom")))]
        if len(sources) < 2 or len({s.shape for s in sources}) != 1:
            self.fail(layer, f"needs two or more bottoms of one shape, got {[s.shape for s in sources]}")
        if coefficients and operation != "SUM":
            self.fail(layer, f"coefficients {coefficients} are given for {operation}; Caffe takes them for SUM only")
        if coefficients and len(coefficients) != len(sources):
            self.fail(layer, f"{len(coefficients)} coefficients for {len(sources)} bottoms; Caffe needs one per bottom")
        wanted = str(layer.get("name"))
        if operation in ("PROD", "MAX"):
            name = self.add(wanted, "Elementwise", [s.name for s in sources],
                            operation="multiply" if operation == "PROD" else "maximum")
        elif all(c == 1.0 for c in coefficients):
            name = self.add(wanted, "Add", [s.name for s in sources])
        elif sorted(coefficients) == [-1.0, 1.0]:
            first, second = sources if coefficients[0] == 1.0 else sources[::-1]
            name = self.add(wanted, "Elementwise", [first.name, second.name], operation="subtract")
        else:
            operands = []
            for index, (source, coefficient) in enumerate(zip(sources, coefficients)):
                if coefficient == 1.0:
                    operands.append(source.name)
                else:
                    operands.append(self.add(f"{wanted}_coeff{index}", "Activation", [source.name],
                                             function=activation_json("linear", a=coefficient, b=0.0)))
            name = self.add(wanted, "Add", operands)
        self.output(layer, Tensor(name, sources[0].shape))

    def layer_Concat(self, layer):
        """`Concat` along the channels: Concatenate."""
        param = layer.message("concat_param")
        axis = int(param.get("axis", param.get("concat_dim", 1)))
        sources = [self.source(layer, i) for i in range(len(layer.all("bottom")))]
        if axis != 1:
            self.fail(layer, f"axis {axis} is not supported (only 1, the channels)")
        if len({s.shape[:-1] for s in sources}) != 1:
            self.fail(layer, f"bottoms differ in height/width: {[s.shape for s in sources]}")
        name = self.add(str(layer.get("name")), "Concatenate", [s.name for s in sources])
        self.output(layer, Tensor(name, sources[0].shape[:-1] + (sum(s.shape[-1] for s in sources),)))

    def layer_Flatten(self, layer):
        """`Flatten` from axis 1: Flatten in chw order."""
        tensor = self.source(layer)
        param = layer.message("flatten_param")
        if int(param.get("axis", 1)) != 1 or int(param.get("end_axis", -1)) != -1:
            self.fail(layer, "only axis 1 to the end is supported")
        if not tensor.spatial:
            self.output(layer, tensor)
            return
        name = self.add(str(layer.get("name")), "Flatten", [tensor.name], order="chw")
        self.output(layer, Tensor(name, (int(np.prod(tensor.shape)),)))

    def layer_Dropout(self, layer):
        """`Dropout`: nothing at inference (the top aliases the bottom)."""
        self.output(layer, self.source(layer, mark_read=False))

    def layer_Split(self, layer):
        """`Split`: every top aliases the bottom."""
        tensor = self.source(layer, mark_read=False)
        for i in range(len(layer.all("top"))):
            self.output(layer, tensor, i)


def convert_files(prototxt, caffemodel, output_directory, name=None, input_shape=None):
    """Converts `prototxt` + `caffemodel` into `output_directory`; returns the ModelWriter."""
    with open(prototxt) as handle:
        net = parse_prototxt(handle.read(), source=prototxt)
    with open(caffemodel, "rb") as handle:
        blobs = parse_caffemodel(handle.read())
    writer = CaffeConverter(net, blobs, name=name, input_shape=input_shape).convert()
    writer.write(output_directory)
    return writer


def main(argv=None):
    """The `convert_caffe` command line; returns the exit status."""
    return cli.file_main("caffe", __doc__.split("\n")[0],
                         [("prototxt", "the network (protobuf text format)"),
                          ("caffemodel", "the trained weights (protobuf wire format)")],
                         "a prototxt, a caffemodel and an output directory",
                         ("CHW", "C,H,W for data layers (or to override the prototxt's input)"), convert_files, argv)


if __name__ == "__main__":
    sys.exit(main())
