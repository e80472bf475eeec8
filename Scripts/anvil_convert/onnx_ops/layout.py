"""ONNX layout operators: Transpose, Reshape, Flatten, Squeeze, Unsqueeze, Slice, Split, Concat,
DepthToSpace, SpaceToDepth, and ShuffleNet's channel shuffle (Reshape to [N, g, C/g, H, W] →
Transpose(0, 2, 1, 3, 4) → Reshape to [N, C, H, W]).

Every computed tensor (`Act`) knows where Anvil holds each of its ONNX axes (`Act.perm`): an
ONNX Transpose only relabels them, so ConvNeXt's permute(0, 2, 3, 1) … permute(0, 3, 1, 2) moves
no data, and `x.permute(0, 3, 2, 1).flatten(1)` before a Linear becomes a Dense whose weights
are reordered. Values move (an Anvil Transpose) only where a layer needs them in another order:
a convolution needs the standard channels-last layout (`OnnxConverter.to_standard`), a Reshape
needs ONNX's own row-major order (`OnnxConverter.to_onnx_order`).
"""

import numpy as np

from ..writer import activation_json
from .tensors import Act, Flat, attributes as _attributes


class Grouped:
    """ShuffleNet's [N, g, k, H, W] (or, after the Transpose, [N, k, g, H, W]) view of an NCHW
    tensor: nothing is written until the Reshape back to [N, C, H, W] makes it a ChannelShuffle."""

    def __init__(self, source, groups, per_group, swapped=False):
        """`source` is the NCHW Act whose channels are split into `groups` × `per_group`."""
        self.source = source
        self.groups = groups
        self.per_group = per_group
        self.swapped = swapped

    @property
    def onnx_shape(self):
        """[1, g, k, H, W], or [1, k, g, H, W] once swapped."""
        shape = self.source.onnx_shape
        pair = [self.per_group, self.groups] if self.swapped else [self.groups, self.per_group]
        return [1] + pair + shape[2:]


class LayoutOps:
    """The layout operators of OnnxConverter (a mixin; uses its helpers `act`, `value`, `const`,
    `add`, `set`, `fail`, `exact`, `to_standard`, `to_onnx_order`, `write_flatten`)."""

    # -- helpers ----------------------------------------------------------------------------

    def flattened(self, tensor):
        """`tensor` as [N, everything] in ONNX order: itself at rank 2, the Anvil vector a global
        pooling left, or a pending flatten (Flat)."""
        if tensor.rank == 2:
            return tensor
        if tensor.anvil_rank == 2 and not tensor.open:
            return Act(tensor.name, (int(np.prod(tensor.shape)),))
        return Flat(tensor)

    def reshape_tensor(self, node, tensor, resolved):
        """`tensor` (Act or Flat) given ONNX shape `resolved` (batch 1 first), values in ONNX's
        row-major order: nothing written when the shape is unchanged or a flatten; otherwise the
        tensor is moved to ONNX's order and an Anvil Reshape written."""
        current = [1, tensor.shape[0]] if isinstance(tensor, Flat) else tensor.onnx_shape
        if list(resolved) == list(current):
            return tensor
        if resolved[0] != 1:
            self.fail(node, f"reshaping {current} to {list(resolved)} changes the batch axis; Anvil keeps it")
        if len(resolved) > 4:
            self.fail(node, f"reshaping {current} to {list(resolved)}: Anvil's tensors have rank 4 at most")
        if isinstance(tensor, Flat):
            if len(resolved) == 2:
                return tensor
            tensor = self.write_flatten(tensor, node)
        if len(resolved) == 2:
            return self.flattened(tensor)
        if None in resolved[1:]:
            self.fail(node, f"reshaping {current} to {list(resolved)}: a Reshape of a tensor whose size depends on "
                            "the open input size is not supported; pass --input-shape C,H,W")
        source = self.to_onnx_order(node, tensor)
        shape = tuple(int(v) for v in resolved[1:])
        name = self.add(node, "Reshape", [source.name], shape=list(shape))
        return Act(name, shape, tuple(range(len(resolved))))

    def resolve_shape(self, node, current, target, allow_zero):
        """ONNX Reshape's target with 0 (copy, unless allowzero) and -1 (inferred) resolved."""
        resolved = [current[i] if (t == 0 and not allow_zero and i < len(current)) else t for i, t in enumerate(target)]
        total = int(np.prod(current))
        if resolved.count(-1) == 1:
            known = int(np.prod([v for v in resolved if v != -1]))
            resolved[resolved.index(-1)] = total // known if known else 0
        if int(np.prod(resolved)) != total or resolved.count(-1) > 1:
            self.fail(node, f"cannot reshape {current} to {target}")
        return resolved

    # -- operators --------------------------------------------------------------------------

    def op_Transpose(self, node, index):
        """`Transpose`: of a constant, a constant; of a tensor, a relabelling of its axes (no data
        moves until a layer needs another layout); ShuffleNet's swap of its [N, g, k, H, W] view."""
        value = self.value(node, 0)
        perm = _attributes(node).get("perm")
        if isinstance(value, np.ndarray):
            self.set(node, np.transpose(value, perm))
            return
        if isinstance(value, Grouped):
            if list(perm or []) != [0, 2, 1, 3, 4] or value.swapped:
                self.fail(node, f"permutation {perm} of a 5-D tensor is not supported (only ShuffleNet's (0, 2, 1, 3, 4))")
            self.set(node, Grouped(value.source, value.groups, value.per_group, swapped=True))
            return
        tensor = self.act(node, any_layout=True)
        perm = list(perm) if perm is not None else list(reversed(range(tensor.rank)))
        if sorted(perm) != list(range(tensor.rank)):
            self.fail(node, f"perm {perm} is not a permutation of {tensor.rank} axes")
        if perm[0] != 0:
            self.fail(node, f"perm {perm} moves the batch axis; Anvil keeps it first")
        self.set(node, Act(tensor.name, tensor.shape, [tensor.perm[p] for p in perm], tensor.anvil_rank))

    def op_Reshape(self, node, index):
        """`Reshape`: of a constant, a constant; of a tensor, row-major in ONNX's order (an Anvil
        Reshape after moving the values to that order if needed; nothing for a flatten to [N, -1]
        read by Gemm/MatMul); ShuffleNet's channel split, swap and merge become ChannelShuffle."""
        value = self.value(node, 0)
        target = [int(v) for v in self.const(node, 1).reshape(-1)]
        if isinstance(value, np.ndarray):
            self.set(node, value.reshape([value.shape[i] if t == 0 else t for i, t in enumerate(target)]))
            return
        allow_zero = _attributes(node).get("allowzero", 0)
        if isinstance(value, Grouped):
            current = value.onnx_shape
            resolved = self.resolve_shape(node, current, target, allow_zero)
            if not value.swapped or resolved != value.source.onnx_shape:
                self.fail(node, f"reshaping the 5-D {current} to {resolved} is not supported "
                                "(only ShuffleNet's channel shuffle back to [N, C, H, W])")
            source = value.source
            name = self.add(node, "ChannelShuffle", [source.name], groups=value.groups)
            self.set(node, source.like(name))
            return
        tensor = value if isinstance(value, Flat) else self.act(node, any_layout=True)
        current = [1, tensor.shape[0]] if isinstance(tensor, Flat) else tensor.onnx_shape
        if None in current:
            # An open size: only a flatten to [N, -1] (N kept) is the same at every size.
            if len(target) == 2 and target[1] == -1 and (target[0] == 1 or (target[0] == 0 and not allow_zero)):
                self.set(node, tensor if isinstance(tensor, Flat) else self.flattened(tensor))
                return
            self.fail(node, f"reshaping {current} (None: open) to {target}: the target does not fit every input "
                            "size; pass --input-shape C,H,W (or export with fixed sizes)")
        resolved = self.resolve_shape(node, current, target, allow_zero)
        if (len(resolved) == 5 and isinstance(tensor, Act) and tensor.rank == 4 and tensor.channel_axis(1)
                and resolved[0] == 1 and resolved[1] * resolved[2] == current[1] and resolved[3:] == current[2:]):
            self.set(node, Grouped(tensor, resolved[1], resolved[2]))
            return
        self.set(node, self.reshape_tensor(node, tensor, resolved))

    def op_Flatten(self, node, index):
        """`Flatten`: of a constant, a constant; of a tensor from axis 1 (or a later one when the
        axes before it are 1), a pending flatten (nothing when a Gemm/MatMul reads it)."""
        value = self.value(node, 0)
        axis = _attributes(node).get("axis", 1)
        if isinstance(value, np.ndarray):
            self.set(node, value.reshape(int(np.prod(value.shape[:axis])), -1))
            return
        tensor = value if isinstance(value, Flat) else self.act(node, any_layout=True)
        shape = [1, tensor.shape[0]] if isinstance(tensor, Flat) else tensor.onnx_shape
        axis = axis + len(shape) if axis < 0 else axis
        if axis == 0 or None in shape[1:axis] or int(np.prod(shape[1:axis])) != 1:
            self.fail(node, f"axis {axis} of {shape} would merge axes into the batch axis; Anvil keeps it "
                            "(axis 1, or a later one after axes of extent 1)")
        self.set(node, tensor if isinstance(tensor, Flat) else self.flattened(tensor))

    def op_Squeeze(self, node, index):
        """`Squeeze`: of a constant, a constant; of a tensor, a Reshape dropping axes of extent 1."""
        value = self.value(node, 0)
        axes = self._axes(node)
        if isinstance(value, np.ndarray):
            self.set(node, np.squeeze(value, axis=tuple(axes)) if axes else np.squeeze(value))
            return
        tensor = self.act(node, allow_flat=True, any_layout=True)
        shape = [1, tensor.shape[0]] if isinstance(tensor, Flat) else tensor.onnx_shape
        axes = sorted(a % len(shape) for a in axes) if axes else [i for i, d in enumerate(shape) if d == 1 and i > 0]
        if 0 in axes:
            self.fail(node, "squeezing the batch axis is not supported")
        if any(shape[a] != 1 for a in axes):
            self.fail(node, f"axes {axes} of {shape} are not all of extent 1")
        self.set(node, self.reshape_tensor(node, tensor, [d for i, d in enumerate(shape) if i not in axes]))

    def op_Unsqueeze(self, node, index):
        """`Unsqueeze`: of a constant, a constant; of a tensor, a Reshape inserting axes of extent 1."""
        value = self.value(node, 0)
        axes = self._axes(node)
        if isinstance(value, np.ndarray):
            result = value
            for axis in sorted(a % (value.ndim + len(axes)) for a in axes):
                result = np.expand_dims(result, axis)
            self.set(node, result)
            return
        tensor = self.act(node, allow_flat=True, any_layout=True)
        shape = [1, tensor.shape[0]] if isinstance(tensor, Flat) else tensor.onnx_shape
        rank = len(shape) + len(axes)
        positions = sorted(a % rank for a in axes)
        if 0 in positions:
            self.fail(node, "a new axis before the batch axis is not supported")
        result = list(shape)
        for p in positions:
            result.insert(p, 1)
        self.set(node, self.reshape_tensor(node, tensor, result))

    def slice_axis(self, node, tensor, axis, start, end, step, suffix=""):
        """One ONNX axis of `tensor` sliced: an Anvil Slice on the axis that holds it (none when the
        slice takes everything); returns the new Act."""
        shape = tensor.onnx_shape
        axis = axis % tensor.rank
        if step == 0:
            self.fail(node, "a step of 0 is not allowed")
        # An open extent (None): Anvil's Slice clamps the indices at every size; the extent stays open.
        count = None if shape[axis] is None else len(range(*slice(start, end, step).indices(shape[axis])))
        if axis == 0:
            # The batch size is not known here (shape[0] is 1 only as a stand-in): only a slice that
            # keeps every item, whatever N, is the tensor itself.
            if step == 1 and (start == 0 or start <= -2**31) and end >= 2**31 - 1:
                return tensor
            self.fail(node, f"slicing the batch axis ({start}:{end}:{step}) is not supported; Anvil keeps every item")
        if step == 1 and (count == shape[axis] if count is not None else start == 0 and end >= 2**31 - 1):
            return tensor
        if count == 0:
            self.fail(node, f"slice {start}:{end}:{step} of axis {axis} (extent {shape[axis]}) is empty")
        int64 = np.iinfo(np.int64)
        start, end = int(np.clip(start, int64.min, int64.max)), int(np.clip(end, int64.min, int64.max))
        tensor = self.exact(node, tensor)
        anvil_axis = tensor.perm[axis]
        name = self.add(node, "Slice", [tensor.name], suffix=suffix, axis=anvil_axis, start=start, end=end, step=int(step))
        dims = list(tensor.shape)
        dims[anvil_axis - 1] = count
        return Act(name, dims, tensor.perm)

    def op_Slice(self, node, index):
        """`Slice`: of a constant, a constant; of a tensor, one Anvil Slice per sliced axis, on the
        axis that holds it (negative indices and steps as ONNX)."""
        value = self.value(node, 0)
        if self.opset < 10:
            a = _attributes(node)
            starts, ends = list(a["starts"]), list(a["ends"])
            axes = list(a.get("axes", range(len(starts))))
            steps = [1] * len(starts)
        else:
            starts = [int(v) for v in self.const(node, 1).reshape(-1)]
            ends = [int(v) for v in self.const(node, 2).reshape(-1)]
            axes_value, steps_value = self.const(node, 3, required=False), self.const(node, 4, required=False)
            axes = [int(v) for v in axes_value.reshape(-1)] if axes_value is not None else list(range(len(starts)))
            steps = [int(v) for v in steps_value.reshape(-1)] if steps_value is not None else [1] * len(starts)
        if isinstance(value, np.ndarray):
            index_ = [slice(None)] * value.ndim
            for s, e, ax, st in zip(starts, ends, axes, steps):
                index_[ax] = slice(s, e, st)
            self.set(node, value[tuple(index_)])
            return
        tensor = self.act(node, any_layout=True)
        for i, (s, e, ax, st) in enumerate(zip(starts, ends, axes, steps)):
            tensor = self.slice_axis(node, tensor, ax, s, e, st, suffix=f"_{i}" if len(axes) > 1 else "")
        self.set(node, tensor)

    def op_Split(self, node, index):
        """`Split` of a tensor: one Anvil Slice per output, on the axis that holds the split one."""
        value = self.value(node, 0)
        a = _attributes(node)
        axis = a.get("axis", 0)
        sizes = None
        if self.opset >= 13 and len(node.input) > 1 and node.input[1]:
            sizes = [int(v) for v in self.const(node, 1).reshape(-1)]
        elif "split" in a:
            sizes = [int(v) for v in a["split"]]
        if isinstance(value, np.ndarray):
            extent = value.shape[axis]
        else:
            tensor = self.act(node, any_layout=True)
            extent = tensor.onnx_shape[axis % tensor.rank]
            if extent is None:
                self.fail(node, f"splitting axis {axis}, whose extent depends on the open input size; pass --input-shape C,H,W")
        if sizes is None:
            parts = int(a.get("num_outputs", len(node.output)))
            size = -(-extent // parts)
            sizes = [size] * (parts - 1) + [extent - size * (parts - 1)]
        if sum(sizes) != extent or len(sizes) != len(node.output):
            self.fail(node, f"split sizes {sizes} do not divide axis {axis} of extent {extent} into {len(node.output)} outputs")
        start = 0
        for i, (output, size) in enumerate(zip(node.output, sizes)):
            if output:
                if isinstance(value, np.ndarray):
                    self.values[output] = np.take(value, range(start, start + size), axis=axis)
                else:
                    self.values[output] = self.slice_axis(node, tensor, axis, start, start + size, 1, suffix=f"_{i + 1}")
            start += size

    def op_Concat(self, node, index):
        """`Concat`: of constants, a constant; of one tensor, that tensor (no layer); of tensors,
        Concatenate along the Anvil axis holding the ONNX axis (channels: no axis option)."""
        values = [self.value(node, i) for i in range(len(node.input))]
        axis = _attributes(node).get("axis", 1)
        if all(isinstance(v, np.ndarray) for v in values):
            self.set(node, np.concatenate(values, axis=axis))
            return
        tensors = [self.act(node, i, any_layout=True) for i in range(len(node.input))]
        if len(tensors) == 1:
            self.set(node, tensors[0])
            return
        if len({t.perm for t in tensors}) != 1:
            tensors = [self.to_standard(node, t) for t in tensors]
        rank = tensors[0].rank
        axis = axis % rank
        shapes = [t.onnx_shape for t in tensors]
        if axis == 0:
            self.fail(node, "concatenating along the batch axis is not supported")
        if len({tuple(s[:axis] + s[axis + 1:]) for s in shapes}) != 1 or len({len(s) for s in shapes}) != 1:
            self.fail(node, f"inputs differ off axis {axis}: {shapes}")
        anvil_axis = tensors[0].perm[axis]
        total = None if any(s[axis] is None for s in shapes) else sum(s[axis] for s in shapes)  # None: open
        if anvil_axis == rank - 1 and len({t.anvil_rank for t in tensors}) == 1:
            name = self.add(node, "Concatenate", [t.name for t in tensors])
            self.set(node, Act(name, tensors[0].shape[:-1] + (total,), tensors[0].perm, tensors[0].anvil_rank))
            return
        tensors = [self.exact(node, t) for t in tensors]
        name = self.add(node, "Concatenate", [t.name for t in tensors], axis=anvil_axis)
        dims = list(tensors[0].shape)
        dims[anvil_axis - 1] = total
        self.set(node, Act(name, dims, tensors[0].perm))

    def op_DepthToSpace(self, node, index):
        """`DepthToSpace` (DCR or CRD): DepthToSpace."""
        tensor = self.act(node)
        self.spatial(node, tensor)
        a = _attributes(node)
        b, mode = int(a["blocksize"]), a.get("mode", "DCR")
        h, w, c = tensor.shape
        if c % (b * b):
            self.fail(node, f"blocksize² {b * b} does not divide {c} channels")
        name = self.add(node, "DepthToSpace", [tensor.name], blockSize=b, mode=mode)
        self.set(node, Act(name, (None if h is None else h * b, None if w is None else w * b, c // (b * b))))

    def op_SpaceToDepth(self, node, index):
        """`SpaceToDepth`: SpaceToDepth (DCR, ONNX's only order)."""
        tensor = self.act(node)
        self.spatial(node, tensor)
        b = int(_attributes(node)["blocksize"])
        h, w, c = tensor.shape
        if (h is not None and h % b) or (w is not None and w % b):
            self.fail(node, f"blocksize {b} does not divide {h}x{w}")
        name = self.add(node, "SpaceToDepth", [tensor.name], blockSize=b, mode="DCR")
        self.set(node, Act(name, (None if h is None else h // b, None if w is None else w // b, c * b * b)))


    def reduce_spatial(self, node, layer_type, scaled=False):
        """`ReduceMean` / `ReduceMax` over every axis but the batch and the channels (e.g.
        ShuffleNet v2's x.mean([2, 3])), or over the features of an [N, F] vector with keepdims
        (a Reshape to a length-F sequence first): a global pooling of `layer_type`; `scaled`: the mean
        times the number of values reduced (ReduceSum), a linear activation after the pooling."""
        tensor = self.act(node, any_layout=True)
        a = _attributes(node)
        axes_input = 13 if scaled else 18  # the opset from which axes is an input (ReduceSum: 13)
        if self.opset >= axes_input and len(node.input) > 1 and node.input[1]:
            axes = [int(v) for v in self.const(node, 1).reshape(-1)]
        else:
            axes = list(a.get("axes", []))
        keep = a.get("keepdims", 1)
        axes = sorted(x % tensor.rank for x in axes) if axes else list(range(tensor.rank))
        if tensor.rank == 2 and axes == [1] and keep and not tensor.open:
            # the features of an [N, F] vector: held as a length-F sequence of one channel, pooled
            c = tensor.shape[0]
            source = self.add(node, "Reshape", [tensor.name], suffix="_features", shape=[c, 1])
            name = self.add(node, layer_type, [source])
            if scaled:
                name = self.add(node, "Activation", [name], suffix="_sum",
                                function=activation_json("linear", a=float(c), b=0.0))
            self.set(node, Act(name, (1,)))
            return
        reduced = {tensor.perm[x] for x in axes}
        spatial = set(range(1, tensor.rank - 1))
        if not tensor.rank >= 3 or reduced != spatial:
            self.fail(node, f"reducing axes {axes} of {tensor.onnx_shape} is not supported "
                            "(only every axis between the batch axis and the channels: a global pooling; "
                            "or axis 1 of an [N, F] vector with keepdims)")
        if scaled and tensor.open:
            self.fail(node, "a sum over an open input size (the count depends on the height/width); "
                            "pass --input-shape C,H,W")
        tensor = self.exact(node, tensor)
        name = self.add(node, layer_type, [tensor.name])
        c = tensor.shape[-1]
        if scaled:
            count = int(np.prod(tensor.shape[:-1]))
            name = self.add(node, "Activation", [name], suffix="_sum",
                            function=activation_json("linear", a=float(count), b=0.0))
        if keep:
            self.set(node, Act(name, (1,) * (tensor.rank - 2) + (c,), tensor.perm, anvil_rank=2))
        else:
            self.set(node, Act(name, (c,)))

    def op_ReduceMean(self, node, index):
        """`ReduceMean` over the spatial axes: GlobalAveragePooling."""
        self.reduce_spatial(node, "GlobalAveragePooling")

    def op_ReduceSum(self, node, index):
        """`ReduceSum` over the spatial axes: GlobalAveragePooling times the count (a linear activation)."""
        if _attributes(node).get("noop_with_empty_axes", 0):
            self.fail(node, "noop_with_empty_axes 1 is not supported")
        self.reduce_spatial(node, "GlobalAveragePooling", scaled=True)

    def op_ReduceMax(self, node, index):
        """`ReduceMax` over the spatial axes: GlobalMaxPooling."""
        self.reduce_spatial(node, "GlobalMaxPooling")
