#!/usr/bin/env python3
"""One convolution layer, alone, in Anvil and in ONNX Runtime: the measurement behind a profile's gap.

    .venv/bin/python Scripts/benchmarks/bench_layer.py --input 112x112x96 --channels 96 --kernel 3 --stride 2 \
        --pad 1 --groups 96 [--activation relu6] [--batch 1] [--threads 1] [--rounds 5] \
        [--anvil .build/release/anvil] [--anvil-b .build-other/release/anvil]

The layer is written as an ONNX model (NCHW, a Conv with seeded weights and bias, and the
activation as a Clip or Relu node), and timed by `anvil bench model.onnx --layers` (the layer's
own time, without the conversion of the channels-first input and output that the whole call
makes) and by an ONNX Runtime session (CPU provider, all graph optimisations,
intra_op_num_threads = --threads; its profiler's node times without the NCHWc reorders, for the
same reason), alternating
for --rounds rounds. With --anvil-b a second Anvil build runs in the same rotation: an A/B of one
kernel change on exactly the layer the change is for. The figures printed are medians of the
per-round medians, GFLOP/s from the layer's nominal multiply-adds, and each engine's ratio to
ONNX Runtime.

`--input HxWxC` is the layer's input (channels last, as Anvil's models say it); the ONNX model
takes the same tensor channels first.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peerbench.engines import run_anvil  # noqa: E402  (Anvil's output format)
import profile_layers  # noqa: E402  (ONNX Runtime's per-node times)


def layer_model(args, path):
    """Writes the one-layer ONNX model to `path`; returns its multiply-adds per image."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    height, width, inputs = args.input
    k, stride, pad, groups = args.kernel, args.stride, args.pad, args.groups
    if inputs % groups or args.channels % groups:
        sys.exit(f"bench_layer: {groups} groups do not divide {inputs} inputs and {args.channels} outputs")
    out_h = (height + 2 * pad - k) // stride + 1
    out_w = (width + 2 * pad - k) // stride + 1
    if out_h < 1 or out_w < 1:
        sys.exit(f"bench_layer: a {k}×{k} window at stride {stride} leaves no output of {height}×{width}")
    rng = np.random.default_rng(args.seed)
    weights = rng.normal(0, 0.1, (args.channels, inputs // groups, k, k)).astype(np.float32)
    bias = rng.normal(0, 0.1, (args.channels,)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["conv"], kernel_shape=[k, k], strides=[stride, stride],
                              pads=[pad] * 4, group=groups)]
    initializers = [numpy_helper.from_array(weights, "w"), numpy_helper.from_array(bias, "b")]
    last = "conv"
    if args.activation == "relu":
        nodes.append(helper.make_node("Relu", [last], ["y"]))
        last = "y"
    elif args.activation == "relu6":
        initializers += [numpy_helper.from_array(np.array(0, np.float32), "lo"),
                         numpy_helper.from_array(np.array(6, np.float32), "hi")]
        nodes.append(helper.make_node("Clip", [last, "lo", "hi"], ["y"]))
        last = "y"
    graph = helper.make_graph(
        nodes, "layer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [args.batch, inputs, height, width])],
        [helper.make_tensor_value_info(last, TensorProto.FLOAT, [args.batch, args.channels, out_h, out_w])],
        initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return out_h * out_w * args.channels * (inputs // groups) * k * k


def time_ort(path, args):
    """The layer's own median in ONNX Runtime: its profiler's kernel times of every node but the
    layout reorders it inserts around NCHWc kernels (the counterpart of Anvil's layer alone)."""
    height, width, inputs = args.input
    nodes, _ = profile_layers.ort_layers(path, args.batch, (inputs, height, width), args.threads, args.iterations,
                                         args.warmup_ms)
    return sum(ms for _, op, ms, _ in nodes if not op.startswith("Reorder"))


LAYER_LINE = re.compile(r"^  (\S+)\s+(\S+)\s+([0-9.]+) ms$", re.M)


def time_anvil(binary, path, args):
    """The layer's own median from `anvil bench --layers`. The whole call also converts the ONNX
    model's channels-first input and output to and from Anvil's channels-last layout, which a
    layer inside a network never does (and which, for 8 × 56 × 56 × 128, costs more than the
    layer)."""
    timing, _, _, out = run_anvil(binary, path, args.batch, args.threads, args.iterations, 3,
                                  extra=("--layers",), warmup_ms=args.warmup_ms)
    if timing.error:
        sys.exit(f"bench_layer: {binary}: {timing.error}")
    layers = [float(m.group(3)) for m in LAYER_LINE.finditer(out)]
    if not layers:
        sys.exit(f"bench_layer: {binary} printed no per-layer times")
    return sum(layers)


def shape(text):
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"'{text}' is not HxWxC")
    return tuple(int(p) for p in parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", type=shape, required=True, help="HxWxC")
    parser.add_argument("--channels", type=int, required=True, help="output channels")
    parser.add_argument("--kernel", type=int, default=1)
    parser.add_argument("--stride", type=int, default=1)
    parser.add_argument("--pad", type=int, default=0)
    parser.add_argument("--groups", type=int, default=1)
    parser.add_argument("--activation", choices=["none", "relu", "relu6"], default="none")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--warmup-ms", type=float, default=200.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--anvil", default=".build/release/anvil")
    parser.add_argument("--anvil-b", help="a second Anvil build, timed in the same rotation")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "layer.onnx")
        macs = layer_model(args, path) * args.batch
        engines = [("ONNX Runtime", lambda: time_ort(path, args)), ("Anvil", lambda: time_anvil(args.anvil, path, args))]
        if args.anvil_b:
            engines.append(("Anvil B", lambda: time_anvil(args.anvil_b, path, args)))
        times = {name: [] for name, _ in engines}
        for round_index in range(args.rounds):
            # Rotate the order so no engine always runs first after the other's warm caches.
            for name, measure in engines[round_index % len(engines):] + engines[:round_index % len(engines)]:
                times[name].append(measure())
    h, w, c = args.input
    print(f"layer: {h}×{w}×{c} → {args.channels}, {args.kernel}×{args.kernel} stride {args.stride} pad {args.pad} "
          f"groups {args.groups} {args.activation}; batch {args.batch}, {args.threads} thread(s), {args.rounds} rounds")
    ort = statistics.median(times["ONNX Runtime"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:13s} {median:9.4f} ms  {2 * macs / median / 1e6:7.1f} GFLOP/s  ÷ ORT {median / ort:5.2f}  "
              f"rounds: {' '.join(f'{v:.4f}' for v in values)}")
    if args.anvil_b:
        a, b = times["Anvil"], times["Anvil B"]
        print(f"  B ÷ A {statistics.median(b) / statistics.median(a):.3f} (B faster in {sum(y < x for x, y in zip(a, b))}/{len(a)} rounds)")


if __name__ == "__main__":
    main()
