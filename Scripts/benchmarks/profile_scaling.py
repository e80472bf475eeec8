#!/usr/bin/env python3
"""Where a network loses two-thread scaling in Anvil, layer by layer.

    .venv/bin/python Scripts/benchmarks/profile_scaling.py mobilenet_v3_small [--batch 1] [--rounds 5]
        [--iterations 30] [--anvil .build/release/anvil] [--markdown SCALING.md]

Runs `anvil bench <network> --layers` on one thread and on two, alternating for --rounds rounds,
and keeps each layer's median of its per-round medians. A layer that scales perfectly takes half
its one-thread time on two threads; what it takes beyond that is its *excess*. The excesses of
all layers, plus the time outside the layers (the whole run's median minus the sum of its
layers), are what keeps the whole network from a scaling of 2. The report sums the excess by
layer type and by the layer's one-thread time (short layers pay the hand-off to the second
thread, a few microseconds, on a small amount of work), and lists the layers with the largest
excess. Figures are medians of one run: compare within the run.
"""

import argparse
import re
import statistics
import subprocess
import sys
from collections import defaultdict

LAYER_LINE = re.compile(r"^  (\S+)\s+(\S+)\s+([0-9.]+) ms$")
MEDIAN_LINE = re.compile(r"^median_ms:\s+([0-9.]+)", re.M)
# One-thread layer times (ms) that bound the size classes of the report.
SIZE_CLASSES = [(0.0, 0.02, "under 20 µs"), (0.02, 0.1, "20–100 µs"), (0.1, 0.5, "0.1–0.5 ms"),
                (0.5, float("inf"), "0.5 ms and more")]


def run_layers(binary, network, batch, threads, iterations):
    """[(name, type, ms)] in plan order and the whole run's median, from one `anvil bench --layers`."""
    out = subprocess.run([binary, "bench", network, "--batch", str(batch), "--threads", str(threads),
                          "--iterations", str(iterations), "--warmup-ms", "200", "--layers"],
                         capture_output=True, text=True, check=True).stdout
    layers = [(m.group(1), m.group(2), float(m.group(3))) for m in map(LAYER_LINE.match, out.splitlines()) if m]
    whole = MEDIAN_LINE.search(out)
    if not layers or not whole:
        sys.exit(f"profile_scaling: {binary} printed no per-layer times for {network}")
    return layers, float(whole.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("network", help="a zoo name or a model file `anvil bench` takes")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--anvil", default=".build/release/anvil")
    parser.add_argument("--markdown", help="also write the report here")
    args = parser.parse_args()

    per_layer = {1: defaultdict(list), 2: defaultdict(list)}
    wholes = {1: [], 2: []}
    order, kinds = [], {}
    for round_index in range(args.rounds):
        # Alternate which thread count runs first, so drift falls on both.
        for threads in ((1, 2) if round_index % 2 == 0 else (2, 1)):
            layers, whole = run_layers(args.anvil, args.network, args.batch, threads, args.iterations)
            wholes[threads].append(whole)
            for name, kind, ms in layers:
                if name not in kinds:
                    order.append(name)
                    kinds[name] = kind
                per_layer[threads][name].append(ms)
    one = {n: statistics.median(per_layer[1][n]) for n in order}
    two = {n: statistics.median(per_layer[2][n]) for n in order}
    whole1, whole2 = statistics.median(wholes[1]), statistics.median(wholes[2])
    outside1, outside2 = whole1 - sum(one.values()), whole2 - sum(two.values())
    excess = {n: two[n] - one[n] / 2 for n in order}

    lines = [f"## {args.network}: two-thread scaling layer by layer (batch {args.batch})", "",
             f"`.venv/bin/python Scripts/benchmarks/profile_scaling.py {args.network} --batch {args.batch} --rounds "
             f"{args.rounds} --iterations {args.iterations}`. Whole run (median of the rounds' medians): "
             f"{whole1:.3f} ms on one thread, {whole2:.3f} ms on two: scaling **{whole1 / whole2:.2f}**. "
             f"Half the one-thread time is {whole1 / 2:.3f} ms; the two-thread run takes "
             f"{whole2 - whole1 / 2:+.3f} ms beyond it, made of the layers' excess (two-thread time − half the "
             f"one-thread time) and the time outside the layers ({outside1:.3f} ms on one thread, "
             f"{outside2:.3f} on two: excess {outside2 - outside1 / 2:+.3f}).", ""]
    lines += ["| layer type | layers | 1 thread ms | 2 threads ms | scaling | excess ms |", "|---|---:|---:|---:|---:|---:|"]
    by_kind = defaultdict(list)
    for n in order:
        by_kind[kinds[n]].append(n)
    for kind, names in sorted(by_kind.items(), key=lambda kv: -sum(excess[n] for n in kv[1])):
        t1, t2 = sum(one[n] for n in names), sum(two[n] for n in names)
        lines.append(f"| {kind} | {len(names)} | {t1:.3f} | {t2:.3f} | {t1 / t2 if t2 else 0:.2f} | {t2 - t1 / 2:+.3f} |")
    lines += ["", "| layers by one-thread time | layers | 1 thread ms | 2 threads ms | scaling | excess ms |",
              "|---|---:|---:|---:|---:|---:|"]
    for low, high, label in SIZE_CLASSES:
        names = [n for n in order if low <= one[n] < high]
        if not names:
            continue
        t1, t2 = sum(one[n] for n in names), sum(two[n] for n in names)
        lines.append(f"| {label} | {len(names)} | {t1:.3f} | {t2:.3f} | {t1 / t2 if t2 else 0:.2f} | {t2 - t1 / 2:+.3f} |")
    lines += ["", f"Layers with the largest excess (top {args.top}):", "",
              "| layer | type | 1 thread ms | 2 threads ms | scaling | excess ms |", "|---|---|---:|---:|---:|---:|"]
    for n in sorted(order, key=lambda n: -excess[n])[: args.top]:
        lines.append(f"| {n} | {kinds[n]} | {one[n]:.3f} | {two[n]:.3f} | {one[n] / two[n] if two[n] else 0:.2f} | "
                     f"{excess[n]:+.3f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(text)


if __name__ == "__main__":
    main()
