"""ONNX handlers of the layers added in #12: ConvTranspose, Resize / Upsample (every nearest and
coordinate mode including tf_crop_and_resize, cubic, antialias, keep_aspect_ratio_policy), Pad (folded into the next Conv / pooling when that is exact),
InstanceNormalization, LayerNormalization (any axis; a Transpose when needed), GroupNormalization, LRN, LpPool (2-D,
or 1-D on a sequence) and GlobalLpPool. A mixin of from_onnx.OnnxConverter: it uses the converter's helpers (act, const,
spatial, window, add, set, fail, consumers)."""

import numpy as np

from .tensors import Act, attributes as _attributes

_COORDINATES = {"half_pixel": "halfPixel", "pytorch_half_pixel": "pytorchHalfPixel", "align_corners": "alignCorners",
                "asymmetric": "asymmetric", "half_pixel_symmetric": "halfPixelSymmetric",
                "tf_crop_and_resize": "tfCropAndResize"}
_NEAREST = {"round_prefer_floor": "roundPreferFloor", "round_prefer_ceil": "roundPreferCeil", "floor": "floor",
            "ceil": "ceil"}


class LayersOps:
    """ConvTranspose, Resize/Upsample, Pad, the normalisations, LRN and Lp pooling."""

    # -- transposed convolution -------------------------------------------------------------

    def op_ConvTranspose(self, node, index):
        """`ConvTranspose` (2-D, or 1-D on a sequence as a height-1 2-D one): TransposedConvolution
        (explicit pads; output_shape and auto_pad resolved here)."""
        tensor = self.act(node)
        one_d = self.windowed(node, tensor)
        weights = self.const(node, 1)
        bias = self.const(node, 2, required=False)
        a = _attributes(node)
        if one_d and weights.ndim == 3:
            weights = weights.reshape(weights.shape[0], weights.shape[1], 1, weights.shape[2])
            a = self.window_1d(a)
            for key in ("output_padding", "output_shape"):
                if key in a:
                    a[key] = [0 if key == "output_padding" else 1] + list(a[key])
        if weights.ndim != 4:
            self.fail(node, f"weights of rank {weights.ndim} on an input of rank {tensor.rank}; only 1-D and 2-D transposed convolutions are supported")
        inputs, per_group, kh, kw = weights.shape
        groups = int(a.get("group", 1))
        h, w, channels = (1,) + tuple(tensor.shape) if one_d else tensor.shape
        if inputs != channels or channels % groups:
            self.fail(node, f"weights {list(weights.shape)} with group {groups} do not match {channels} input channels")
        kernel = tuple(a.get("kernel_shape", [kh, kw]))
        stride = tuple(a.get("strides", [1, 1]))
        dilation = tuple(a.get("dilations", [1, 1]))
        output_padding = list(a.get("output_padding", [0, 0]))
        if len(kernel) != 2 or len(stride) != 2 or len(dilation) != 2 or len(output_padding) != 2:
            self.fail(node, "only 2-D transposed convolutions are supported")
        open_axes = (h is None, w is None)
        if any(open_axes) and "output_shape" in a:
            self.fail(node, "output_shape on an open input size (it fixes the output size); pass --input-shape C,H,W")
        # The pads do not depend on the input size: an open size is worked out at a stand-in one.
        h, w = (64 if h is None else h), (64 if w is None else w)
        full = [s * (size - 1) + op + (k - 1) * d + 1
                for s, size, op, k, d in zip(stride, (h, w), output_padding, kernel, dilation)]
        auto_pad = a.get("auto_pad", "NOTSET")
        if "output_shape" in a or auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            shape = list(a.get("output_shape", [s * size for s, size in zip(stride, (h, w))]))[-2:]
            totals = [f - o for f, o in zip(full, shape)]
            if auto_pad == "SAME_UPPER":
                before = [t // 2 for t in totals]
            else:
                before = [t - t // 2 for t in totals]
            pads = [before[0], before[1], totals[0] - before[0], totals[1] - before[1]]
            # An output larger than the full one (a negative pad at the end) gains rows of bias only:
            # Anvil's output padding, when it stays below the stride or dilation.
            for axis in range(2):
                if pads[2 + axis] < 0:
                    output_padding[axis] -= pads[2 + axis]
                    full[axis] -= pads[2 + axis]
                    pads[2 + axis] = 0
        elif auto_pad in ("NOTSET", "VALID"):
            pads = list(a.get("pads", [0, 0, 0, 0])) if auto_pad == "NOTSET" else [0, 0, 0, 0]
            if len(pads) != 4:
                self.fail(node, "only 2-D pads are supported")
        else:
            self.fail(node, f"auto_pad '{auto_pad}' is not supported")
        if min(pads) < 0:
            self.fail(node, f"negative pads {pads} are not supported")
        for op, s, d in zip(output_padding, stride, dilation):
            if op < 0 or op >= max(s, d):
                self.fail(node, f"output_padding {output_padding} must be below the stride or dilation")
        oh, ow = full[0] - pads[0] - pads[2], full[1] - pads[1] - pads[3]
        if oh < 1 or ow < 1:
            self.fail(node, f"pads {pads} leave no output")
        oh, ow = (None if open_axes[0] else oh), (None if open_axes[1] else ow)  # Anvil infers open sizes
        parameters = {"W": weights}
        if bias is not None:
            parameters["b"] = bias
        outputs = per_group * groups
        name = self.add(node, "TransposedConvolution", [tensor.name], parameters, kernel=kernel, channels=outputs,
                        stride=stride, padding=pads, outputPadding=output_padding, dilation=dilation, groups=groups,
                        bias=bias is not None)
        self.set(node, Act(name, (ow, outputs) if one_d else (oh, ow, outputs)))

    # -- resize -----------------------------------------------------------------------------

    def resize(self, node, mode, coordinates, scales, sizes, nearest="round_prefer_floor", cubic_a=-0.75,
               exclude_outside=0, antialias=0, roi=None, extrapolation=0.0, keep_aspect="stretch", aspect_axes=(0, 1, 2, 3)):
        """A Resize from `scales` or `sizes` (N, C, H, W): mode, coordinate transform, nearest rounding,
        cubic options, antialias, tf_crop_and_resize's `roi` (8 values, starts then ends) and
        extrapolation value, and keep_aspect_ratio_policy (one scale for H and W, the sizes rounded from it)."""
        tensor = self.act(node)
        self.spatial(node, tensor)
        modes = {"linear": "linear", "bilinear": "linear", "nearest": "nearest", "cubic": "cubic", "bicubic": "cubic"}
        if mode not in modes:
            self.fail(node, f"mode '{mode}' is not supported (nearest, linear, cubic)")
        if coordinates not in _COORDINATES:
            self.fail(node, f"coordinate_transformation_mode '{coordinates}' is not supported")
        if nearest not in _NEAREST:
            self.fail(node, f"nearest_mode '{nearest}' is not supported")
        options = dict(coordinates=_COORDINATES[coordinates])
        if modes[mode] != "linear":  # linear is the default: files of bilinear resizes stay as they were
            options["mode"] = modes[mode]
        if modes[mode] == "nearest":
            options["nearestRounding"] = _NEAREST[nearest]
        if modes[mode] == "cubic":
            options["cubicCoefficient"] = float(cubic_a)
            options["excludeOutside"] = bool(exclude_outside)
        if antialias and modes[mode] != "nearest":  # ONNX: antialias widens the linear and cubic filters only
            options["antialias"] = True
            options["excludeOutside"] = bool(exclude_outside)
        if coordinates == "tf_crop_and_resize":
            options.update(self.crop_region(node, roi))
            if extrapolation != 0:
                options["extrapolationValue"] = float(extrapolation)
        h, w, c = tensor.shape
        if sizes is not None and sizes.size:
            sizes = [int(v) for v in sizes.reshape(-1)]
            if len(sizes) != 4:
                self.fail(node, f"sizes {sizes} must have 4 values (N, C, H, W)")
            if keep_aspect != "stretch":
                self.keep_aspect_ratio(node, tensor, sizes, keep_aspect, aspect_axes, options)
                return
            if sizes[0] != 1 or sizes[1] != c:
                self.fail(node, f"sizes {sizes} must keep N and C")
            name = self.add(node, "Resize", [tensor.name], size=sizes[2:], **options)
            self.set(node, Act(name, (sizes[2], sizes[3], c)))
            return
        if scales is None or scales.size != 4:
            self.fail(node, "needs 4 scales or 4 sizes")
        scales = [float(v) for v in scales.reshape(-1)]
        if scales[0] != 1 or scales[1] != 1:
            self.fail(node, f"scales {scales} must keep N and C")
        # An open height/width (None) stays open.
        oh = None if h is None else int(np.floor(h * np.float32(scales[2])))
        ow = None if w is None else int(np.floor(w * np.float32(scales[3])))
        name = self.add(node, "Resize", [tensor.name], scale=scales[2:], **options)
        self.set(node, Act(name, (oh, ow, c)))

    def crop_region(self, node, roi):
        """tf_crop_and_resize's `roi` (N, C, H, W starts, then ends, normalised) as Resize's `region`
        [top, left, bottom, right]; N and C must span 0 to 1 (no crop of the batch or channels)."""
        if roi is None or np.asarray(roi).size == 0:
            self.fail(node, "coordinate_transformation_mode 'tf_crop_and_resize' needs the roi input")
        roi = [float(v) for v in np.asarray(roi).reshape(-1)]
        if len(roi) != 8:
            self.fail(node, f"roi {roi} must have 8 values (starts then ends of N, C, H, W)")
        if roi[0] != 0 or roi[1] != 0 or roi[4] != 1 or roi[5] != 1:
            self.fail(node, f"roi {roi} crops the batch or channel axis (only H and W can be cropped)")
        if not all(np.isfinite(roi)):
            self.fail(node, f"roi {roi} must be finite")
        return {"region": [roi[2], roi[3], roi[6], roi[7]]}

    def keep_aspect_ratio(self, node, tensor, sizes, policy, axes, options):
        """keep_aspect_ratio_policy not_larger / not_smaller: ONNX's one scale (the smallest / largest
        of sizes / input over the resized `axes`: every axis, N and C included, when the node has no
        `axes`) and the output sizes rounded half up from it; N and C must keep their extent. A Resize
        with both size and scale."""
        h, w, c = tensor.shape
        if policy not in ("not_larger", "not_smaller"):
            self.fail(node, f"keep_aspect_ratio_policy '{policy}' is not supported (stretch, not_larger, not_smaller)")
        if h is None or w is None:
            self.fail(node, f"keep_aspect_ratio_policy '{policy}' on an open input size; pass --input-shape C,H,W")
        if sizes[0] != 1 or sizes[1] != c:
            self.fail(node, f"sizes {sizes} must keep N and C")
        extents = [1, c, h, w]  # the batch of one the converter's graphs have
        ratios = [sizes[a] / extents[a] for a in axes]
        scale = min(ratios) if policy == "not_larger" else max(ratios)
        out = [int(scale * extents[a] + 0.5) if a in axes else extents[a] for a in range(4)]
        if out[0] != 1 or out[1] != c:
            self.fail(node, f"keep_aspect_ratio_policy '{policy}' over every axis gives scale {scale:g}, which resizes "
                            f"the batch and channels to {out[:2]} (give the node axes [2, 3])")
        if out[2] < 1 or out[3] < 1:
            self.fail(node, f"keep_aspect_ratio_policy '{policy}' of sizes {sizes} leaves no output")
        name = self.add(node, "Resize", [tensor.name], size=out[2:], scale=[scale, scale], **options)
        self.set(node, Act(name, (out[2], out[3], c)))

    def op_Resize(self, node, index):
        """`Resize`: Resize in nearest, linear or cubic mode, with antialias, tf_crop_and_resize (roi,
        extrapolation_value) and keep_aspect_ratio_policy."""
        a = _attributes(node)
        axes = None if a.get("axes") is None else [int(v) % 4 for v in a["axes"]]
        if axes is not None and axes not in ([0, 1, 2, 3], [2, 3], [3, 2]):
            self.fail(node, f"axes {list(a['axes'])} are not supported")
        extra = dict(nearest=a.get("nearest_mode", "round_prefer_floor"), cubic_a=a.get("cubic_coeff_a", -0.75),
                     exclude_outside=a.get("exclude_outside", 0), antialias=a.get("antialias", 0),
                     extrapolation=a.get("extrapolation_value", 0.0),
                     keep_aspect=a.get("keep_aspect_ratio_policy", "stretch"))
        if self.opset < 11:
            scales = self.const(node, 1)
            self.resize(node, a.get("mode", "nearest"), "asymmetric", scales, None, nearest="floor")
            return
        coordinates = a.get("coordinate_transformation_mode", "half_pixel")
        # roi is read only by tf_crop_and_resize (other modes ignore it, as ONNX says).
        roi = self.const(node, 1, required=False) if coordinates == "tf_crop_and_resize" else None
        scales = self.const(node, 2, required=False)
        sizes = self.const(node, 3, required=False)
        if axes is not None and len(axes) == 2:
            order = [0, 1] if axes == [2, 3] else [1, 0]
            scales = None if scales is None or not scales.size else np.concatenate([[1, 1], scales.reshape(-1)[order]])
            sizes = None if sizes is None or not sizes.size else np.concatenate([[1, self.act(node).shape[2]],
                                                                                  sizes.reshape(-1)[order]])
            if roi is not None and np.asarray(roi).size:
                roi = np.asarray(roi, np.float64).reshape(-1)
                if roi.size != 4:
                    self.fail(node, f"roi {list(roi)} must have 4 values (starts then ends of axes {list(a['axes'])})")
                roi = np.concatenate([[0, 0], roi[:2][order], [1, 1], roi[2:][order]])
        self.resize(node, a.get("mode", "nearest"), coordinates, scales, sizes, roi=roi,
                    aspect_axes=(2, 3) if axes is not None and len(axes) == 2 else (0, 1, 2, 3), **extra)

    def op_Upsample(self, node, index):
        """`Upsample` (opset < 10): Resize with asymmetric coordinates (nearest rounds down, as Upsample did)."""
        a = _attributes(node)
        scales = np.array(a["scales"]) if "scales" in a else self.const(node, 1)
        self.resize(node, a.get("mode", "nearest"), "asymmetric", scales, None, nearest="floor")

    # -- pad --------------------------------------------------------------------------------

    def op_Pad(self, node, index):
        """`Pad` (constant, reflect, edge): Pad, or folded into the padding of the one Conv / AveragePool
        (count_include_pad 1, or no pads of its own) / MaxPool (padding with -inf) that reads it."""
        tensor = self.act(node)
        self.spatial(node, tensor)
        a = _attributes(node)
        mode = a.get("mode", "constant")
        if self.opset < 11:
            pads = list(a.get("pads", a.get("paddings", [])))
            value = float(a.get("value", 0.0))
        else:
            pads = [int(v) for v in self.const(node, 1).reshape(-1)]
            constant = self.const(node, 2, required=False)
            value = float(constant.reshape(-1)[0]) if constant is not None and constant.size else 0.0
            axes = self.const(node, 3, required=False)
            if axes is not None:
                axes = [int(v) % 4 for v in axes.reshape(-1)]
                full = [0] * 8
                for i, axis in enumerate(axes):
                    full[axis], full[axis + 4] = pads[i], pads[i + len(axes)]
                pads = full
        if len(pads) != 8:
            self.fail(node, f"pads {pads} must have 8 values (NCHW begins, then ends)")
        if mode not in ("constant", "reflect", "edge"):
            self.fail(node, f"mode '{mode}' is not supported (constant, reflect, edge)")
        if min(pads) < 0:
            self.fail(node, f"negative pads {pads} (cropping) are not supported")
        if pads[0] or pads[4]:
            self.fail(node, f"pads {pads} pad the batch axis")
        top, left, bottom, right = pads[2], pads[3], pads[6], pads[7]
        front, back = pads[1], pads[5]
        h, w, c = tensor.shape
        if mode == "constant" and not front and not back and self.fold_pad(node, tensor, (top, left, bottom, right), value):
            return
        name = self.add(node, "Pad", [tensor.name], pads=[top, left, bottom, right], channelPads=[front, back],
                        mode=mode, value=value)
        self.set(node, Act(name, (None if h is None else h + top + bottom,
                                           None if w is None else w + left + right, c + front + back)))

    def fold_pad(self, node, tensor, pads, value):
        """Folds a constant spatial Pad into the one node reading it when the result is exactly the same:
        a Conv (value 0), an AveragePool counting padded cells (value 0), a MaxPool (value -inf).
        Records the extra pads for `window`; returns whether it folded."""
        readers = self.consumers.get(node.output[0], [])
        if len(readers) != 1 or readers[0] < 0:
            return False
        reader = self.graph.node[readers[0]]
        ra = _attributes(reader)
        if ra.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID") or reader.input[0] != node.output[0]:
            return False
        own = list(ra.get("pads", [0, 0, 0, 0])) if ra.get("auto_pad", "NOTSET") == "NOTSET" else [0, 0, 0, 0]
        if reader.op_type == "Conv":
            ok = value == 0.0
        elif reader.op_type == "AveragePool":
            ok = value == 0.0 and (ra.get("count_include_pad", 0) or not any(own)) and not ra.get("ceil_mode", 0)
        elif reader.op_type == "MaxPool":
            ok = value == -np.inf and not ra.get("ceil_mode", 0)
        else:
            ok = False
        if ok and reader.op_type != "Conv":
            kernel, dilation = ra.get("kernel_shape", [1, 1]), ra.get("dilations", [1, 1])
            extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
            total = [o + p for o, p in zip(own, pads)]
            ok = max(total[0], total[2]) < extent[0] and max(total[1], total[3]) < extent[1]
        if not ok:
            return False
        self.pending_pads[readers[0]] = list(pads)
        self.set(node, tensor)
        return True

    def has_folded_pads(self, node):
        """Whether an earlier Pad was folded into `node` (its pads not yet taken by `window`)."""
        return any(self.graph.node[index] is node for index in self.pending_pads)

    def window_extra_pads(self, node):
        """Pads folded into `node` by an earlier Pad (top, left, bottom, right), or None."""
        for index in self.pending_pads:
            if self.graph.node[index] is node:
                return self.pending_pads.pop(index)
        return None

    # -- normalisations ---------------------------------------------------------------------

    def per_channel(self, node, index, channels, what, default=None):
        """Input `index` as `channels` values (a constant); `default` when absent."""
        values = self.const(node, index, required=default is None)
        if values is None:
            return np.full(channels, default, np.float32)
        values = np.asarray(values, np.float32).reshape(-1)
        if values.size != channels:
            self.fail(node, f"{what} has {values.size} values for {channels} channels")
        return values

    def op_InstanceNormalization(self, node, index):
        """`InstanceNormalization`: InstanceNormalization (scale and B as gamma and beta)."""
        tensor = self.act(node)
        self.spatial(node, tensor)
        c = tensor.shape[2]
        gamma, beta = self.per_channel(node, 1, c, "scale"), self.per_channel(node, 2, c, "B")
        name = self.add(node, "InstanceNormalization", [tensor.name], {"gamma": gamma, "beta": beta},
                        epsilon=float(_attributes(node).get("epsilon", 1e-5)))
        self.set(node, Act(name, tensor.shape))

    def op_LayerNormalization(self, node, index):
        """`LayerNormalization` over ONNX axes `axis` … last: LayerNormalization over Anvil's last k axes.
        When the normalised axes (those of extent > 1) already sit after all the others in Anvil's
        channels-last memory (an NCHW image over [C, H, W], a vector, ConvNeXt's channels-last LayerNorm
        after a Transpose to NHWC) it maps directly, Scale and B reordered to memory order; otherwise an
        Anvil Transpose first moves them last (the converter tracks the new layout; a later node that
        needs the standard one moves it back). Axis 0 (the batch axis) is an error."""
        tensor = self.act(node, any_layout=True)
        a = _attributes(node)
        rank = tensor.rank
        axis = int(a.get("axis", -1))
        if not -rank <= axis < rank:
            self.fail(node, f"axis {axis} is out of range for a rank-{rank} input")
        axis %= rank
        if a.get("stash_type", 1) != 1:
            self.fail(node, "stash_type other than float is not supported")
        if len(node.output) > 1 and any(self.consumers.get(o) for o in node.output[1:] if o):
            self.fail(node, "its Mean / InvStdDev outputs are used (training only)")
        if axis == 0:
            self.fail(node, f"axis 0 normalises the batch axis too (input shape {tensor.onnx_shape}); "
                            "Anvil normalises within each item")
        shape = tensor.onnx_shape
        normalised = list(range(axis, rank))
        if None in [shape[i] for i in normalised]:
            self.fail(node, f"normalises ONNX axes {normalised} of an input of shape {shape}, an open size: "
                            "Scale and B would need its extent")
        full = (1,) + tensor.shape
        big = [tensor.perm[i] for i in normalised if full[tensor.perm[i]] != 1]
        others = [tensor.perm[i] for i in range(1, rank) if i not in normalised and full[tensor.perm[i]] != 1]
        if big and others and max(others) > min(big):
            # Move the normalised axes last, keeping the order of the others and of the normalised ones.
            anvil_order = sorted(range(1, rank), key=lambda i: (i in normalised, tensor.perm[i]))
            target = [0] * rank
            for position, onnx_axis in enumerate(anvil_order, start=1):
                target[onnx_axis] = position
            tensor = self.transpose_to(node, tensor, target)
            full = (1,) + tensor.shape
            big = [tensor.perm[i] for i in normalised if full[tensor.perm[i]] != 1]
        trailing = rank - min(big) if big else 1
        normalised_shape = [int(shape[i]) for i in normalised]
        size = int(np.prod(normalised_shape))
        gamma = self.normalised_values(node, 1, normalised_shape, "Scale", None)
        beta = self.normalised_values(node, 2, normalised_shape, "B", 0.0)
        # ONNX order (axis … last) to Anvil's memory order of those axes.
        memory = sorted(range(len(normalised)), key=lambda k: tensor.perm[normalised[k]])
        gamma = np.ascontiguousarray(gamma.transpose(memory)).reshape(-1)
        beta = np.ascontiguousarray(beta.transpose(memory)).reshape(-1)
        assert gamma.size == size
        options = {"epsilon": float(a.get("epsilon", 1e-5))}
        if trailing != 1:
            options["axes"] = trailing
        name = self.add(node, "LayerNormalization", [tensor.name], {"gamma": gamma, "beta": beta}, **options)
        self.set(node, tensor.like(name))

    def normalised_values(self, node, index, shape, what, default):
        """Input `index` (Scale or B of LayerNormalization) broadcast to the normalised `shape` (ONNX
        order); `default` everywhere when absent and `default` is not None."""
        values = self.const(node, index, required=default is None)
        if values is None:
            return np.full(shape, default, np.float32)
        values = np.asarray(values, np.float32)
        try:
            return np.broadcast_to(values, shape)
        except ValueError:
            self.fail(node, f"{what} of shape {list(values.shape)} does not fit the normalised shape {shape}")

    def op_GroupNormalization(self, node, index):
        """`GroupNormalization` (opset 18: scale and bias per group; 21: per channel): GroupNormalization."""
        tensor = self.act(node)
        self.spatial(node, tensor)
        a = _attributes(node)
        groups = int(a["num_groups"])
        c = tensor.shape[2]
        if groups < 1 or c % groups:
            self.fail(node, f"num_groups {groups} must divide {c} channels")
        if a.get("stash_type", 1) != 1:
            self.fail(node, "stash_type other than float is not supported")
        scale = np.asarray(self.const(node, 1), np.float32).reshape(-1)
        bias = np.asarray(self.const(node, 2), np.float32).reshape(-1)
        if scale.size == groups and bias.size == groups and groups != c:
            scale, bias = np.repeat(scale, c // groups), np.repeat(bias, c // groups)
        if scale.size != c or bias.size != c:
            self.fail(node, f"scale and bias have {scale.size} and {bias.size} values; expected {groups} or {c}")
        name = self.add(node, "GroupNormalization", [tensor.name], {"gamma": scale, "beta": bias}, groups=groups,
                        epsilon=float(a.get("epsilon", 1e-5)))
        self.set(node, Act(name, tensor.shape))

    def op_LRN(self, node, index):
        """`LRN`: LocalResponseNormalization across channels."""
        tensor = self.act(node)
        self.spatial(node, tensor)
        a = _attributes(node)
        name = self.add(node, "LocalResponseNormalization", [tensor.name], size=int(a["size"]),
                        alpha=float(a.get("alpha", 1e-4)), beta=float(a.get("beta", 0.75)), bias=float(a.get("bias", 1.0)))
        self.set(node, Act(name, tensor.shape))

    # -- Lp pooling -------------------------------------------------------------------------

    def op_LpPool(self, node, index):
        """`LpPool` (2-D, or 1-D on a sequence as a height-1 2-D one): LpPooling (window as MaxPool's)."""
        tensor = self.act(node)
        one_d = self.windowed(node, tensor)
        a = _attributes(node)
        if one_d:
            a = self.window_1d(a)
        kernel = tuple(a["kernel_shape"])
        padding, stride, dilation, (oh, ow), ceil = self.window(node, tensor, kernel, pooling=True, a=a)
        name = self.add(node, "LpPooling", [tensor.name], p=float(a.get("p", 2)), kernel=kernel, stride=stride,
                        padding=padding, dilation=dilation, ceilMode=ceil)
        self.set(node, Act(name, (ow, tensor.shape[-1]) if one_d else (oh, ow, tensor.shape[-1])))

    def op_GlobalLpPool(self, node, index):
        """`GlobalLpPool`: LpPooling over the whole image."""
        tensor = self.act(node)
        self.spatial(node, tensor)
        h, w, c = tensor.shape
        if tensor.open:
            self.fail(node, "a window of the whole image on an open input size; pass --input-shape C,H,W")
        name = self.add(node, "LpPooling", [tensor.name], p=float(_attributes(node).get("p", 2)), kernel=[h, w],
                        stride=[h, w], padding="valid")
        self.set(node, Act(name, (1, 1, c)))
