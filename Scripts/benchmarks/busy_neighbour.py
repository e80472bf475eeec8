#!/usr/bin/env python3
"""Anvil on several threads while another process keeps one CPU busy.

    .venv/bin/python Scripts/benchmarks/busy_neighbour.py BINARY [BINARY ...] [--case "resnet50 --batch 1"]...
        [--threads 2] [--rounds 3] [--iterations 20] [--cpu LAST]

A server rarely has its cores to itself, and a VM's virtual CPU can go unscheduled by the host for
milliseconds. Either way one of a prediction's threads stops while the others wait for it at every
parallel loop. This script measures that case: for every case and build (the builds alternating
round by round), `anvil bench <case> --threads T` alone, then again while a process spins on CPU
`--cpu` (by default the last usable one), and, for scale, `--threads 1` on another CPU beside the
same neighbour — what the thread that is left would do alone.

Prints a Markdown table: per case and build, the median over rounds of `anvil bench`'s median ms
alone and with the neighbour, their ratio, and the one-thread figure. Ratios from one run only;
the absolute times move with the machine.
"""

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys

MEDIAN = re.compile(r"median_ms: ([0-9.]+)")


def median_ms(output):
    """`anvil bench`'s own median (ms) from its output; ValueError when it has none."""
    found = MEDIAN.search(output or "")
    if not found:
        raise ValueError("no median_ms line in anvil bench's output")
    return float(found.group(1))


@contextlib.contextmanager
def busy_neighbour(cpu):
    """A process spinning on CPU `cpu` for the duration of the block (ended in `finally`)."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                               preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    try:
        yield spinner
    finally:
        spinner.kill()
        spinner.wait()


def bench(binary, case, threads, iterations, cpus=None):
    """One `anvil bench` run; its median ms. Runs on `cpus` (a set) when given."""
    command = [binary, "bench", *case.split(), "--threads", str(threads), "--iterations", str(iterations)]
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    done = subprocess.run(command, capture_output=True, text=True, preexec_fn=pin)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return median_ms(done.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binaries", nargs="+", help="anvil tool builds to compare")
    parser.add_argument("--case", action="append", help="anvil bench arguments (default: resnet50 --batch 1)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=20)
    usable = sorted(os.sched_getaffinity(0))
    parser.add_argument("--cpu", type=int, default=usable[-1], help="the CPU the neighbour spins on")
    args = parser.parse_args()
    if args.threads < 2 or args.rounds < 1 or args.iterations < 1:
        parser.error("--threads must be at least 2, --rounds and --iterations at least 1")
    if args.cpu not in usable or len(usable) < 2:
        parser.error(f"--cpu must be one of the usable CPUs {usable}, and there must be two or more")
    others = [cpu for cpu in usable if cpu != args.cpu]
    cases = args.case or ["resnet50 --batch 1"]
    results = {}
    for _ in range(args.rounds):
        for case in cases:
            for binary in args.binaries:
                row = results.setdefault((case, binary), {"alone": [], "neighbour": [], "one": []})
                row["alone"].append(bench(binary, case, args.threads, args.iterations))
                with busy_neighbour(args.cpu):
                    row["neighbour"].append(bench(binary, case, args.threads, args.iterations))
                    row["one"].append(bench(binary, case, 1, args.iterations, cpus={others[0]}))
    print(f"`{' '.join(sys.argv)}`; {args.threads} threads; neighbour spinning on CPU {args.cpu}; "
          f"median of {args.rounds} rounds of `anvil bench`'s median of {args.iterations} runs\n")
    print(f"| case | build | {args.threads} threads alone, ms | with the neighbour, ms | with ÷ alone | "
          "1 thread beside the neighbour, ms |")
    print("|---|---|---:|---:|---:|---:|")
    for (case, binary), row in results.items():
        alone, neighbour, one = (statistics.median(row[k]) for k in ("alone", "neighbour", "one"))
        print(f"| {case} | {binary} | {alone:.3f} | {neighbour:.3f} | {neighbour / alone:.2f} | {one:.3f} |")


if __name__ == "__main__":
    main()
