#!/usr/bin/env python3
"""Where one network's time goes in Anvil and in ONNX Runtime, layer by layer.

    .venv/bin/python Scripts/benchmarks/profile_layers.py resnet50 [--threads 1] [--iterations 30]
        [--batch 1] [--anvil .build/release/anvil] [--markdown PROFILE.md]

The network is bench_peers.py's (peerbench.networks: same PyTorch definition, seeded weights, the
cached ONNX export in Data/bench/onnx/). Anvil's per-layer medians come from `anvil bench <zoo name> --layers`, its
multiply-adds per layer from `anvil summary <zoo name>`; ONNX Runtime's from its own profiler
(`SessionOptions.enable_profiling`, every node's `_kernel_time` events, median per node over the
timed runs), with each node's shapes from the profile. Both engines run with the same threads,
warm-up and number of runs, alternating for --rounds rounds; each layer's figure is the median of
its per-round medians.

Layers are paired by their multiply-adds and output map: each Anvil convolution or dense layer,
in plan order, takes the first unpaired ONNX Runtime Conv/FusedConv/Gemm/MatMul node (NCHWc ones
included) with the same count (within 0.5%) and, for a convolution, the same output height and
width — or, where ONNX Runtime pads input or output channels to a whole NCHWc block of 8 or 16,
the same map, window and channels up to that padding (MobileNet v2's 96 → 24 at 56 × 56 took a
384 → 96 at 14 × 14 node of equal count before the map was compared, and its 24 → 144 was left
unpaired). Everything else (pooling, element-wise, layout, and in ONNX
Runtime the reorders of its NCHWc layout) is summed per operator type on each side.

Output (Markdown): the kind of each paired layer (kernel, stride, groups, channels, map size),
totals per kind in both engines, the paired layers sorted by how much more time Anvil takes,
and the unpaired time per operator type. Figures are medians of one run: compare the two
engines within the run, not across runs.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peerbench import REPO  # noqa: E402
from peerbench.engines import ANVIL_MEDIAN  # noqa: E402
from peerbench.machine import cpu_flags  # noqa: E402
from peerbench.networks import NETWORKS, bench_input, build_torch_network, export_onnx, onnx_path  # noqa: E402

CONV_OPS = {"Conv", "FusedConv", "NhwcFusedConv", "Gemm", "MatMul", "FusedGemm", "FusedMatMul"}
ANVIL_CONV_TYPES = {"Convolution", "PointwiseConvolution", "DepthwiseConvolution", "Dense", "TransposedConvolution"}
LAYER_LINE = re.compile(r"^  (\S+)\s+(\S+)\s+([0-9.]+) ms$")
SUMMARY_LINE = re.compile(r"^(\S+) \((\w+)\)\s+\(([^)]*)\)\s+([0-9,]+)\s+([0-9,]+)$")


def anvil_layers(binary, network, batch, threads, iterations, warmup_ms):
    """[(name, type, median ms)] in plan order, and the run's total median."""
    out = subprocess.run([binary, "bench", network, "--batch", str(batch), "--threads", str(threads),
                          "--iterations", str(iterations), "--warmup-ms", str(warmup_ms), "--layers"],
                         capture_output=True, text=True, check=True).stdout
    layers = [(m.group(1), m.group(2), float(m.group(3))) for m in map(LAYER_LINE.match, out.splitlines()) if m]
    total = ANVIL_MEDIAN.search(out)
    return layers, float(total.group(1)) if total else sum(ms for _, _, ms in layers)


def anvil_macs(binary, network):
    """{layer name: (multiply-adds per image, output dimensions)} from `anvil summary`."""
    out = subprocess.run([binary, "summary", network], capture_output=True, text=True, check=True).stdout
    return {m.group(1): (int(m.group(5).replace(",", "")), [int(d) for d in m.group(3).split(",") if d.strip()])
            for m in map(SUMMARY_LINE.match, out.splitlines()) if m}


def padded(channels):
    """`channels` and its roundings up to the NCHWc blocks (8, 16) ONNX Runtime may pad it to."""
    return {channels} | {(channels + b - 1) // b * b for b in (8, 16)}


def counts_match(node, count, dims):
    """Whether an ONNX Runtime node (`ort_kind`'s geometry) fits an Anvil layer of `count`
    multiply-adds and output `dims` (H, W, C): the same count, and for a convolution the same
    output map; or the same map and window with channels equal up to NCHWc padding."""
    if abs(node["macs"] - count) <= 0.005 * count:
        return "map" not in node or len(dims) != 3 or tuple(dims[:2]) == node["map"]
    if "map" not in node or len(dims) != 3 or tuple(dims[:2]) != node["map"] or node["groups"] != 1:
        return False
    h, w, c = dims
    window = h * w * c * node["kh"] * node["kw"]
    if not window or count % window:
        return False
    return node["cout"] in padded(c) and node["cin"] in padded(count // window)


def shape_of(entry):
    """The dimensions of one `input_type_shape` entry ({"float": [dims]})."""
    return next(iter(entry.values())) if entry else []


def ort_layers(path, batch, input_chw, threads, iterations, warmup_ms):
    """[(node name, op, median ms, shapes dict)] in execution order, and the median total."""
    import numpy as np
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.enable_profiling = True
    session = ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])
    feed = {session.get_inputs()[0].name: bench_input(batch, input_chw)}
    start = time.perf_counter()
    warmups = 0
    while warmups < 3 or (time.perf_counter() - start) * 1000 < warmup_ms:
        session.run(None, feed)
        warmups += 1
    totals = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        session.run(None, feed)
        totals.append((time.perf_counter() - t0) * 1000)
    profile = session.end_profiling()
    with open(profile) as handle:
        events = json.load(handle)
    os.remove(profile)
    runs = [e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"]
    # Only the timed runs: the last `iterations` model_run windows.
    windows = [(e["ts"], e["ts"] + e["dur"]) for e in runs[-iterations:]]
    order, times, info = [], defaultdict(list), {}
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        if not any(lo <= e["ts"] <= hi for lo, hi in windows):
            continue
        name = e["name"][: -len("_kernel_time")]
        if name not in info:
            order.append(name)
            info[name] = e.get("args", {})
        times[name].append(e["dur"] / 1000)
    layers = [(n, info[n].get("op_name", "?"), statistics.median(times[n]), info[n]) for n in order]
    return layers, statistics.median(totals)


def ort_kind(op, args):
    """(multiply-adds, description, geometry) of a convolution-like ONNX Runtime node, or
    (None, None, None). The geometry (for `counts_match`): its multiply-adds, and for a
    convolution its output map, window, channels and groups."""
    inputs = [shape_of(x) for x in args.get("input_type_shape", [])]
    outputs = [shape_of(x) for x in args.get("output_type_shape", [])]
    if not inputs or not outputs:
        return None, None, None
    # The profile lists the inputs that are not initializers: a Gemm's weights may be absent.
    if op in ("Gemm", "MatMul", "FusedGemm", "FusedMatMul"):
        k = inputs[0][-1]
        n = outputs[0][-1]
        rows = 1
        for d in outputs[0][:-1]:
            rows *= d
        return rows * k * n, f"dense {k}→{n}", {"macs": rows * k * n}
    if op in ("Conv", "FusedConv", "NhwcFusedConv") and len(inputs) >= 2 and len(inputs[1]) == 4:
        x, w, y = inputs[0], inputs[1], outputs[0]
        cout, cin_g, kh, kw = w
        nchwc = len(x) == 5  # NCHWc: [N, C/b, H, W, b]
        cin = x[1] * x[4] if nchwc else x[1]
        h_in = x[2]
        h, wd = (y[2], y[3])
        pixels = y[0] * h * wd
        groups = max(1, cin // cin_g) if cin_g else 1
        stride = max(1, round(h_in / h)) if h else 1
        macs = pixels * cout * cin_g * kh * kw
        kind = f"{kh}×{kw}" + (f" s{stride}" if stride > 1 else "")
        kind = ("depthwise " + kind) if groups == cin and groups > 1 else kind
        geometry = {"macs": macs, "map": (h, wd), "kh": kh, "kw": kw, "cin": cin, "cout": cout, "groups": groups}
        return macs, f"{kind} {cin}→{cout} at {h}×{wd}", geometry
    return None, None, None


def classify(description):
    """'1×1', '3×3 s2', 'depthwise 3×3', 'dense', …"""
    parts = description.split(" ")
    if parts[0] == "dense":
        return "dense"
    if parts[0] == "depthwise":
        return " ".join(parts[:3] if len(parts) > 2 and parts[2].startswith("s") else parts[:2])
    return " ".join(parts[:2] if len(parts) > 1 and parts[1].startswith("s") else parts[:1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("network", choices=sorted(NETWORKS))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=30, help="timed runs per engine and round")
    parser.add_argument("--rounds", type=int, default=3, help="alternations of the two engines")
    parser.add_argument("--warmup-ms", type=float, default=300)
    parser.add_argument("--anvil", default=os.path.join(REPO, ".build", "release", "anvil"))
    parser.add_argument("--top", type=int, default=15, help="paired layers listed (largest Anvil − ORT first)")
    parser.add_argument("--markdown")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    # One thread: both engines on the same CPU for the whole run (Anvil's subprocess inherits it),
    # as bench_peers does for its one-thread rounds.
    if args.threads == 1:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    network = NETWORKS[args.network]
    path = onnx_path(network.name, "dynamo", args.seed)
    if not os.path.exists(path):
        model = build_torch_network(network.name, args.seed)
        export_onnx(model, network, path, "dynamo")
    # Rounds alternate the engines, so the machine's drift falls on both; each layer keeps the
    # median of its per-round medians.
    ort_runs, anvil_runs = [], []
    for _ in range(args.rounds):
        ort_runs.append(ort_layers(path, args.batch, network.input_chw, args.threads, args.iterations, args.warmup_ms))
        anvil_runs.append(anvil_layers(args.anvil, network.name, args.batch, args.threads, args.iterations,
                                       args.warmup_ms))
    ort_rows = [(name, op, statistics.median(run[0][i][2] for run in ort_runs), info)
                for i, (name, op, _, info) in enumerate(ort_runs[0][0])]
    ort_total = statistics.median(run[1] for run in ort_runs)
    anvil_rows = [(name, kind, statistics.median(run[0][i][2] for run in anvil_runs))
                  for i, (name, kind, _) in enumerate(anvil_runs[0][0])]
    anvil_total = statistics.median(run[1] for run in anvil_runs)
    macs = anvil_macs(args.anvil, network.name)

    # Pair convolution-like layers by multiply-adds (per image on Anvil's side).
    candidates = []
    for name, op, ms, info in ort_rows:
        count, description, geometry = ort_kind(op, info) if op in CONV_OPS else (None, None, None)
        candidates.append([name, op, ms, count, description, False, geometry])
    pairs, unpaired_anvil = [], defaultdict(float)
    for name, kind, ms in anvil_rows:
        per_image, dims = macs.get(name, (0, []))
        count = per_image * args.batch
        match = None
        if kind in ANVIL_CONV_TYPES and count:
            match = next((c for c in candidates if not c[5] and c[3] and counts_match(c[6], count, dims)), None)
        if match:
            match[5] = True
            pairs.append((name, kind, ms, match[0], match[2], match[4], count))
        else:
            unpaired_anvil[kind] += ms
    unpaired_ort = defaultdict(float)
    for name, op, ms, count, description, used, _ in candidates:
        if not used:
            unpaired_ort[op] += ms

    lines = [f"## {network.title}: Anvil and ONNX Runtime per layer (batch {args.batch}, {args.threads} thread(s))", ""]
    lines.append(f"`.venv/bin/python Scripts/benchmarks/profile_layers.py {args.network} --threads {args.threads} "
                 f"--batch {args.batch} --iterations {args.iterations} --rounds {args.rounds}`, "
                 f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; CPU flags: "
                 f"{' '.join(sorted(f for f in cpu_flags() if f in ('avx2', 'fma', 'avx512f', 'avx512_vnni', 'avx512_bf16')))}.")
    lines.append(f"Whole network, median of {args.rounds} rounds' medians: Anvil {anvil_total:.3f} ms, ONNX Runtime {ort_total:.3f} ms "
                 f"(profiling on), ratio {anvil_total / ort_total:.2f}.")
    lines.append("")
    by_kind = defaultdict(lambda: [0.0, 0.0, 0, 0])
    for _, _, ams, _, oms, description, count in pairs:
        row = by_kind[classify(description)]
        row[0] += ams
        row[1] += oms
        row[2] += 1
        row[3] += count
    lines += ["| layer kind | layers | GMAC | Anvil ms | ORT ms | Anvil ÷ ORT | Anvil GFLOP/s | ORT GFLOP/s |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for kind, (ams, oms, n, count) in sorted(by_kind.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"| {kind} | {n} | {count / 1e9:.3f} | {ams:.3f} | {oms:.3f} | {ams / oms if oms else float('nan'):.2f} "
                     f"| {2 * count / ams / 1e6 if ams else 0:.1f} | {2 * count / oms / 1e6 if oms else 0:.1f} |")
    paired_a = sum(p[2] for p in pairs)
    paired_o = sum(p[4] for p in pairs)
    lines.append(f"| **all paired** | {len(pairs)} | {sum(p[6] for p in pairs) / 1e9:.3f} | {paired_a:.3f} | {paired_o:.3f} "
                 f"| {paired_a / paired_o if paired_o else float('nan'):.2f} | | |")
    lines += ["", f"Paired layers where Anvil takes longest against ONNX Runtime (top {args.top}):", "",
              "| Anvil layer | kind | Anvil ms | ORT ms | difference ms |", "|---|---|---:|---:|---:|"]
    for name, kind, ams, oname, oms, description, _ in sorted(pairs, key=lambda p: p[4] - p[2])[: args.top]:
        lines.append(f"| {name} | {description} | {ams:.3f} | {oms:.3f} | {ams - oms:+.3f} |")
    lines += ["", "Unpaired time per operator type:", "", "| engine | operator | ms |", "|---|---|---:|"]
    for kind, ms in sorted(unpaired_anvil.items(), key=lambda kv: -kv[1]):
        lines.append(f"| Anvil | {kind} | {ms:.3f} |")
    for op, ms in sorted(unpaired_ort.items(), key=lambda kv: -kv[1]):
        lines.append(f"| ONNX Runtime | {op} | {ms:.3f} |")
    lines.append(f"| Anvil | **total unpaired** | {sum(unpaired_anvil.values()):.3f} |")
    lines.append(f"| ONNX Runtime | **total unpaired** | {sum(unpaired_ort.values()):.3f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(text)


if __name__ == "__main__":
    main()
