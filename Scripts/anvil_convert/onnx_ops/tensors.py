"""What the ONNX converter (from_onnx.OnnxConverter) and its operator mixins (onnx_ops/*.py)
share: the tensors it tracks (`Act`, `Flat`, `Placeholder`), the standard layout and reading a
node's attributes. Its own module so the mixins import it directly (from_onnx imports them)."""

import numpy as np

FLOAT_MAX = 3.4028234663852886e38


def standard_perm(rank):
    """Where ONNX's axes sit in Anvil's channels-last layout for a tensor converted as is:
    NCHW → NHWC (0, 3, 1, 2), NCL → NLC (0, 2, 1), [N, F] → [N, F] (0, 1), [N] → (0,)."""
    return {4: (0, 3, 1, 2), 3: (0, 2, 1), 2: (0, 1), 1: (0,)}[rank]


class Act:
    """A computed tensor: its Anvil name, its Anvil shape (the axes after the batch axis, in
    Anvil's channels-last memory order: (h, w, c) an image, (l, c) a sequence, (n,) a vector,
    () rank 1) and `perm`, which Anvil axis holds each ONNX axis (batch axis 0 first).

    The ONNX rank is the Anvil rank. Converted as is, a tensor has the standard permutation
    (NCHW held as NHWC: perm (0, 3, 1, 2)); after an ONNX Transpose it may hold any other, with
    no data moved: `onnx_shape[i]` is Anvil axis `perm[i]`'s extent."""

    def __init__(self, name, shape, perm=None, anvil_rank=None):
        """`shape` is Anvil's (h, w, c), (l, c), (n,) or (); `perm` defaults to the standard one;
        `anvil_rank` is the rank of the Anvil tensor when it differs from ONNX's (a global
        pooling gives Anvil a vector of C where ONNX keeps [N, C, 1, 1]; same values)."""
        self.name = name
        # None: a height/width (a sequence's length) that depends on an open input size.
        self.shape = tuple(None if v is None else int(v) for v in shape)
        self.perm = tuple(int(v) for v in perm) if perm is not None else standard_perm(len(self.shape) + 1)
        self.anvil_rank = anvil_rank if anvil_rank is not None else len(self.shape) + 1
        assert sorted(self.perm) == list(range(len(self.shape) + 1)), (name, shape, perm)

    @property
    def rank(self):
        """The rank counting the batch axis (ONNX's and Anvil's)."""
        return len(self.shape) + 1

    @property
    def open(self):
        """Whether a dimension depends on an open input size (None)."""
        return None in self.shape

    @property
    def standard(self):
        """Whether ONNX's axes sit where converting as is puts them (channels last)."""
        return self.perm == standard_perm(self.rank)

    @property
    def spatial(self):
        """Whether the tensor is an NCHW image held as Anvil's NHWC."""
        return len(self.shape) == 3 and self.standard

    @property
    def onnx_shape(self):
        """The shape as ONNX sees it: [1, C, H, W], [1, C, L], [1, n], ... (batch 1)."""
        full = (1,) + self.shape
        return [full[a] for a in self.perm]

    @property
    def onnx_ordered(self):
        """Whether Anvil's memory holds the values in ONNX's row-major order (axes of extent 1 aside)."""
        full = (1,) + self.shape
        held = [a for a in self.perm if full[a] != 1]
        return held == sorted(held)

    def channel_axis(self, onnx_axis):
        """Whether ONNX axis `onnx_axis` is Anvil's channel axis (the last): a per-channel layer
        (LayerNormalization, a MatMul on the last axis) then applies without moving data."""
        return self.perm[onnx_axis % self.rank] == self.rank - 1

    def like(self, name):
        """A tensor of the same shape and layout named `name` (the output of an element-wise layer)."""
        return Act(name, self.shape, self.perm, self.anvil_rank)


class Flat:
    """A tensor flattened to [N, everything] in ONNX's order, not yet written: Gemm/MatMul read an
    image source directly (weights reordered to match its layout); anything else gets an Anvil
    Flatten (order chw for a standard image, after a Transpose to ONNX's order otherwise)."""

    def __init__(self, source):
        """`source` is the Act being flattened."""
        self.source = source
        self.written = None

    @property
    def shape(self):
        """(n,): the flattened length (None when the source's size is open)."""
        return (None,) if self.source.open else (int(np.prod(self.source.shape)),)


class Placeholder(Act):
    """The output of a node that could not be converted, with the shape ONNX infers for it: the
    nodes after it are still checked, but nothing is written for it."""


def attributes(node):
    """The node's attributes as Python values (bytes decoded to str)."""
    import onnx
    result = {}
    for attribute in node.attribute:
        value = onnx.helper.get_attribute_value(attribute)
        result[attribute.name] = value.decode() if isinstance(value, bytes) else value
    return result
