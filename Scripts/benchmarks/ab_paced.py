#!/usr/bin/env python3
"""A/B of two builds of the anvil tool, alternating run by run.

    .venv/bin/python Scripts/benchmarks/ab_paced.py A_BINARY B_BINARY [--case "resnet50 --batch 1 --threads 1"]...
        [--runs 60] [--gap-ms 2] [--warmup-ms 300] [--cpu 0]

Each case starts both builds as `anvil bench <case> --paced` (each compiles the network and warms
up once, then runs one prediction per request) and asks them for one run at a time, A B B A A B
..., so each pair of runs sees the machine in the same state: on a shared VM whose speed changes
from one second to the next, block-wise alternation (ab_anvil.sh: all of A's runs, then all of
B's) leaves a change of state on one side. A one-thread case (`--threads 1`) runs both builds on
the same CPU, `--cpu` (a VM's virtual CPUs can differ in speed for minutes: two processes left to
the scheduler can each keep a different one, and show a difference between two copies of one binary).

`--gap-ms` waits before each run, and a case of several threads then waits until no thread of
either build has run for 2 ms (a worker waits for the next job for `Compute.workerIdleMilliseconds`
after a run, 30 ms by default, before it sleeps: without the wait, one build's waiting worker
shares the CPUs with the other's run). A case of several threads therefore times runs that start
with the threads asleep — slower than back-to-back runs, alike for both builds: fine for an A/B,
not a figure to quote.

Prints per case each build's median, the ratio of the medians B / A, and the median and
quartiles of the per-pair ratios B_i / A_i with how many pairs B won: below 1, B is faster. Also
the CPU and the instruction set each build's kernels ran (from `anvil bench`'s own lines).
"""

import argparse
import os
import shlex
import statistics
import sys
import time

from paced_anvil import PacedAnvil, thread_cpu_ns, wait_for_idle_threads

DEFAULT_CASES = ["resnet50 --batch 1 --threads 1", "mobilenet_v1 --batch 1 --threads 1"]


def case_cpus(case, cpu):
    """The CPUs both builds of `case` run on: `cpu` alone for a one-thread case, else all usable.

    A VM's virtual CPUs need not be equally fast: two one-thread processes left to the scheduler
    may sit on different ones for their whole lives."""
    usable = os.sched_getaffinity(0)
    words = shlex.split(case)
    threads = words[words.index("--threads") + 1] if "--threads" in words[:-1] else None
    if threads == "1":
        if cpu not in usable:
            raise SystemExit(f"--cpu {cpu} is not one this process may use ({sorted(usable)})")
        return {cpu}
    return usable


def quartiles(values):
    values = sorted(values)
    n = len(values)
    return values[n // 4], statistics.median(values), values[(3 * n) // 4]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--case", action="append", help="`anvil bench` arguments of one case (repeatable)")
    parser.add_argument("--runs", type=int, default=60, help="runs of each build per case (default 60)")
    parser.add_argument("--gap-ms", type=float, default=2.0, help="pause before each run (default 2)")
    parser.add_argument("--warmup-ms", type=float, default=300.0, help="each build's warm-up (default 300)")
    parser.add_argument("--cpu", type=int, default=min(os.sched_getaffinity(0)),
                        help="the CPU both builds of a one-thread case run on (default: the first usable)")
    args = parser.parse_args()
    if args.runs < 2 or args.gap_ms < 0 or args.warmup_ms < 0:
        parser.error("--runs must be at least 2, --gap-ms and --warmup-ms at least 0")
    cases = args.case or DEFAULT_CASES

    print(f"A: {args.a}\nB: {args.b}\nruns: {args.runs} per build, alternating A B B A ..., {args.gap_ms:g} ms apart")
    rows = []
    for case in cases:
        cpus = case_cpus(case, args.cpu)
        builds = [PacedAnvil(binary, shlex.split(case), warmup_ms=args.warmup_ms, cpus=cpus) for binary in (args.a, args.b)]
        if case == cases[0]:
            print(f"cpu: {builds[0].line('cpu: ')}\nflags: {builds[0].line('cpu_flags: ')}")
            for name, build in zip("AB", builds):
                print(f"{name} isa: {build.line('isa: ') or '?'}")
        times = ([], [])
        several = cpus is None or len(cpus) > 1
        pids = [build.process.pid for build in builds]
        try:
            for index in range(args.runs):
                order = (0, 1) if index % 2 == 0 else (1, 0)
                for which in order:
                    time.sleep(args.gap_ms / 1000)
                    if several:
                        wait_for_idle_threads(lambda: thread_cpu_ns(pids))
                    times[which].append(builds[which].run())
        finally:
            for build in builds:
                build.close()
        a, b = times
        ratios = [y / x for x, y in zip(a, b)]
        low, middle, high = quartiles(ratios)
        wins = sum(1 for r in ratios if r < 1)
        rows.append((case, statistics.median(a), statistics.median(b), middle, low, high, wins, len(ratios)))

    width = max(len(row[0]) for row in rows)
    print(f"{'case':<{width}}  {'A ms':>9}  {'B ms':>9}  {'B/A':>6}  {'pairs: median (quartiles)':>27}  B faster")
    for case, a, b, middle, low, high, wins, count in rows:
        print(f"{case:<{width}}  {a:9.3f}  {b:9.3f}  {b / a:6.3f}  {middle:10.3f} ({low:.3f}–{high:.3f})  {wins:4d}/{count}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
