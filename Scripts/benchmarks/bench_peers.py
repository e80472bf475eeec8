#!/usr/bin/env python3
"""Times Anvil against ONNX Runtime and OpenVINO (float32 forced, and as it comes) on the same
ONNX files, in turn, in one run.

Each network is built in PyTorch with seeded random weights and a final softmax, exported once
to ONNX with a dynamic batch axis (cached in Data/bench/onnx/), and that one file is what every
engine runs: `anvil bench file.onnx` (a network whose file Anvil cannot open runs as its zoo
network instead, and the report says so), an ONNX Runtime session, OpenVINO's compiled model with
`INFERENCE_PRECISION_HINT` f32 and without a hint (bfloat16 on CPUs with avx512_bf16 or AMX).
PyTorch eager on the network's own module is an optional engine (--engines ...,pytorch).

For each configuration (network, batch, threads) the engines run one after the other, each with
the same warm-up and number of timed runs, --rounds times with the order rotated; the median of
the rounds' medians is kept. One-thread rounds run every engine on the same CPU, the rounds taking
the CPUs in turn. --paced interleaves the engines run by run instead of in blocks. Ratios are
Anvil's time ÷ the peer's from the same run (below 1: Anvil is faster).

Also measured (leave out with --skip): a latency-versus-batch sweep of one network, plotted
(--plot); the load time and peak resident memory of one network (--load-model) per engine.
--isa avx2,avx512 runs Anvil once per instruction set (`anvil bench --isa`), as separate engines.
--quick is a smoke run (1 timed run, no warm-up, 1 round): its figures mean nothing.

The report (Markdown) goes to stdout and --markdown PATH; progress goes to stderr.

Usage:
    Scripts/setup/install_bench_deps.sh
    .venv/bin/python Scripts/benchmarks/bench_peers.py --scratch-path .build-bench \\
        --markdown docs/benchmarks/report.md --plot docs/benchmarks/latency.png
    .venv/bin/python Scripts/benchmarks/bench_peers.py --quick --models mnist,resnet50
"""

import argparse
import datetime
import os
import shlex
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from peerbench import BENCH_DIR, REPO, log  # noqa: E402
from peerbench import report as reporting  # noqa: E402
from peerbench.engines import (DEFAULT_ENGINES, ENGINE_KEYS, ISA_FLAGS, Case, anvil_model_for,  # noqa: E402
                               build_anvil, make_engines)
from peerbench.machine import (FLAGS_OF_NOTE, cpu_flags, cpu_seconds, load_average, machine_description,  # noqa: E402
                               other_load, versions, commit)
from peerbench.measure import Measurer, Settings  # noqa: E402
from peerbench.networks import (DEFAULT_NETWORKS, NETWORKS, bench_input, build_torch_network,  # noqa: E402
                                count_flops, export_onnx, onnx_path)
from peerbench.resources import measure_load, measure_memory  # noqa: E402


def int_list(text):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of integers")
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"'{text}': give positive integers")
    return values


def name_list(choices):
    def parse(text):
        values = [v.strip() for v in text.split(",") if v.strip()]
        unknown = [v for v in values if v not in choices]
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown {', '.join(unknown)} (choose from {', '.join(choices)})")
        return values
    return parse


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--models", type=name_list(tuple(NETWORKS)), default=list(DEFAULT_NETWORKS),
                        help=f"networks (default {','.join(DEFAULT_NETWORKS)}; any of {', '.join(NETWORKS)})")
    parser.add_argument("--engines", type=name_list(ENGINE_KEYS), default=list(DEFAULT_ENGINES),
                        help=f"default {','.join(DEFAULT_ENGINES)} (also: pytorch)")
    parser.add_argument("--batches", type=int_list, default=[1, 8], help="default 1,8")
    parser.add_argument("--threads", type=int_list, default=[1, 2], help="default 1,2")
    parser.add_argument("--iterations", type=int, default=10, help="timed runs per engine and round (default 10)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--warmup-ms", type=float, default=200.0,
                        help="continue the warm-up until this many ms have passed (default 200: an idle VM's "
                             "CPUs take tens of ms to reach speed)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per configuration, engine order rotated (default 3)")
    parser.add_argument("--paced", action="store_true",
                        help="interleave the engines run by run (Anvil through `anvil bench --paced`)")
    parser.add_argument("--paced-pause-ms", type=float, default=20.0,
                        help="with --paced and several threads, the pause before each turn, which then waits "
                             "until no engine's thread has run for 2 ms (default 20)")
    parser.add_argument("--paced-rewarm", type=int, default=1,
                        help="with --paced, untimed runs at the start of each turn (default 1)")
    parser.add_argument("--paced-rewarm-ms", type=float, default=5.0,
                        help="with --paced, continue a turn's untimed runs for this long (default 5)")
    parser.add_argument("--isa", type=name_list(tuple(ISA_FLAGS)),
                        help="run Anvil once per instruction set named (scalar, avx2, avx512); sets this CPU "
                             "lacks are skipped and said so (default: the set Anvil picks)")
    parser.add_argument("--sweep-model", default="resnet50", choices=list(NETWORKS) + ["none"],
                        help="network of the latency-versus-batch sweep (default resnet50)")
    parser.add_argument("--sweep-batches", type=int_list, default=[1, 2, 4, 8, 16])
    parser.add_argument("--sweep-threads", type=int, help="threads of the sweep (default: the most of --threads)")
    parser.add_argument("--plot", default=os.path.join(BENCH_DIR, "latency.png"),
                        help="PNG of the sweep (default Data/bench/latency.png)")
    parser.add_argument("--load-model", default="vgg16", choices=list(NETWORKS),
                        help="network of the load-time and memory measurements (default vgg16)")
    parser.add_argument("--load-repeats", type=int, default=5, help="loads timed per engine (default 5)")
    parser.add_argument("--extra-threads", type=int,
                        help="threads of the load and memory measurements (default: the most of --threads)")
    parser.add_argument("--skip", type=name_list(("sweep", "load", "memory")), default=[],
                        help="leave out some of: sweep, load, memory")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 1 timed run, no warm-up, 1 round, 1 load, sweep batches 1,2")
    parser.add_argument("--exporter", choices=("dynamo", "torchscript"), default="dynamo",
                        help="torch.onnx exporter (dynamo falls back to torchscript when it fails)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--anvil", help="an anvil binary to use instead of building one")
    parser.add_argument("--scratch-path", help="swift build --scratch-path (default: SwiftPM's .build)")
    parser.add_argument("--markdown", help="also write the report to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.iterations, args.warmup, args.warmup_ms, args.rounds, args.load_repeats = 1, 0, 0.0, 1, 1
        args.sweep_batches = [1, 2]
    if args.iterations < 1 or args.warmup < 0 or args.warmup_ms < 0 or args.rounds < 1 or args.load_repeats < 1:
        parser.error("--iterations, --rounds and --load-repeats must be at least 1, --warmup and --warmup-ms at least 0")
    if args.paced_rewarm < 0 or args.paced_pause_ms < 0 or args.paced_rewarm_ms < 0:
        parser.error("the --paced-* values must be at least 0")
    return args


def method_text(args, measurer, exporters):
    """How the figures were taken, one paragraph."""
    s = measurer.settings
    text = (f"{s.warmup} warm-up run(s), continued for at least {s.warmup_ms:g} ms, then the median of "
            f"{s.iterations} timed runs" + (" (fewer than 5: a smoke test)" if s.iterations < 5 else "")
            + f"; median of {s.rounds} round(s), the engines in turn with the order rotated each round; one-thread "
            "rounds run every engine on the same CPU, the rounds taking the CPUs in turn")
    if s.paced:
        waits = reporting.median_wait(measurer.idle_waits)
        text += (f"; interleaved run by run: in turn {s.paced_rewarm} untimed run(s) (at least {s.paced_rewarm_ms:g} "
                 f"ms) and one timed run each, a turn of several threads after a {s.paced_pause_ms:g} ms pause and "
                 f"a wait until no engine's thread ran for 2 ms" + (f" ({waits})" if waits else ""))
    return (text + ". The same input values for every engine; seeded random weights; every network ends in a softmax. "
            f"ONNX files: {', '.join(f'{n} {e}' for n, e in exporters.items()) or '–'}. ONNX Runtime: CPU provider, "
            "intra-op T, inter-op 1, sequential, all graph optimizations. OpenVINO: `compile_model(model, \"CPU\", "
            "{INFERENCE_NUM_THREADS: T, PERFORMANCE_HINT: LATENCY, NUM_STREAMS: 1})`, with and without "
            "`INFERENCE_PRECISION_HINT: f32`, the batch made static with `reshape`. Anvil: `anvil bench <file.onnx> "
            f"--batch N --threads T --iterations {s.iterations} --warmup {s.warmup} --warmup-ms {s.warmup_ms:g}` "
            "(release build), its own `median_ms`.")


class Network:
    """One network while it is measured: its PyTorch module, FLOPs, ONNX file and what Anvil opens."""

    def __init__(self, name, args, engines, anvil_binary):
        self.network = NETWORKS[name]
        log(f"[{name}] building the PyTorch model")
        self.torch_model = build_torch_network(name, args.seed)
        self.flops = count_flops(self.torch_model, self.network.input_chw)
        self.onnx_file = onnx_path(name, args.exporter, args.seed)
        log(f"[{name}] ONNX file {os.path.relpath(self.onnx_file, REPO)}")
        self.exporter = export_onnx(self.torch_model, self.network, self.onnx_file, args.exporter)
        self.anvil_model, self.refused = self.onnx_file, None
        if anvil_binary and any(e.key.startswith("anvil") for e in engines):
            self.anvil_model, self.refused = anvil_model_for(anvil_binary, self.network, self.onnx_file)
            if self.refused:
                log(f"[{name}] Anvil cannot open the ONNX file ({self.refused}): its zoo network instead")

    def case(self, batch, threads):
        return Case(self.network, self.onnx_file, self.anvil_model, batch, threads,
                    bench_input(batch, self.network.input_chw), self.torch_model)


def main(argv=None):
    args = parse_arguments(argv)
    started = time.time()
    flags = cpu_flags()
    context = {"command": shlex.join([".venv/bin/python", os.path.relpath(os.path.abspath(sys.argv[0]), REPO)]
                                     + (sys.argv[1:] if argv is None else list(argv))),
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               "load_start": load_average(), "machine": machine_description(), "commit": commit(),
               "flags": ", ".join(f"{f} {'yes' if f in flags else 'no'}" for f in FLAGS_OF_NOTE)}
    cpus = len(os.sched_getaffinity(0))
    if max(args.threads) > cpus:
        log(f"warning: {max(args.threads)} threads on {cpus} usable CPUs")
    problems = []

    anvil_binary = build_anvil(args) if "anvil" in args.engines else None
    isas = None
    if args.isa:
        for isa in args.isa:
            if not all(f in flags for f in ISA_FLAGS[isa]):
                problems.append(f"`--isa {isa}` skipped: this CPU lacks {', '.join(ISA_FLAGS[isa])}")
        isas = [isa for isa in args.isa if all(f in flags for f in ISA_FLAGS[isa])] or None
    if "pytorch" in args.engines:
        import torch
        torch.set_num_interop_threads(1)
    engines = make_engines(args.engines, anvil_binary, isas)
    measurer = Measurer(Settings(args.iterations, args.warmup, args.warmup_ms, args.rounds, args.paced,
                                 args.paced_pause_ms, args.paced_rewarm, args.paced_rewarm_ms))
    results = reporting.Results(engines)
    measuring_since, cpu_start = time.time(), cpu_seconds()
    extra_threads = args.extra_threads or max(args.threads)
    context.update(extra_threads=extra_threads, load_repeats=args.load_repeats,
                   load_network=NETWORKS[args.load_model].title)
    sweep = None
    if "sweep" not in args.skip and args.sweep_model != "none":
        sweep = (args.sweep_model, args.sweep_threads or max(args.threads), args.sweep_batches)

    # Load times first, while this process holds no other network.
    load_rows, held = [], {}
    if "load" not in args.skip or "memory" not in args.skip:
        held[args.load_model] = Network(args.load_model, args, engines, anvil_binary)
    if "load" not in args.skip:
        network = held[args.load_model]
        log(f"[load] {network.network.title}, {args.load_repeats} load(s) per engine")
        try:
            load_rows = measure_load(engines, network.network, network.onnx_file, network.anvil_model,
                                     extra_threads, args.load_repeats)
        except Exception as error:  # noqa: BLE001
            problems.append(f"load measurement: {type(error).__name__}: {error}")

    results.configs = [(name, batch, threads) for name in args.models for threads in args.threads
                       for batch in args.batches]
    exporters, refused = {}, {}
    for name in dict.fromkeys(args.models + ([sweep[0]] if sweep else [])):
        network = held.pop(name, None) or Network(name, args, engines, anvil_binary)
        exporters[name], results.flops[name] = network.exporter, network.flops
        if network.refused:
            refused[name] = network.refused
        keys = [key for key in results.configs if key[0] == name]
        if sweep and sweep[0] == name:
            keys += [(name, batch, sweep[1]) for batch in sweep[2] if (name, batch, sweep[1]) not in keys]
        for key in keys:
            results.add(key, *measurer.measure(engines, network.case(key[1], key[2])))
        for engine in engines:
            engine.forget()
        del network

    plot_file = None
    if sweep:
        plot_file = os.path.abspath(args.plot)
        try:
            reporting.plot_sweep(results, sweep, plot_file)
            log(f"plot: {plot_file}")
        except ImportError as error:
            problems.append(f"no plot: {error} (Scripts/setup/install_bench_deps.sh installs matplotlib)")
            plot_file = None

    memory_rows = []
    if "memory" not in args.skip:
        network = held.pop(args.load_model, None) or Network(args.load_model, args, engines, anvil_binary)
        log(f"[memory] {network.network.title}, each engine in a process of its own")
        try:
            memory_rows = measure_memory(engines, network.network, network.onnx_file, network.anvil_model,
                                         extra_threads)
        except Exception as error:  # noqa: BLE001
            problems.append(f"memory measurement: {type(error).__name__}: {error}")
        problems += [f"memory of {name}: {what}" for name, kb, what in memory_rows if kb is None]

    for name, (flops, _) in results.flops.items():
        reference = NETWORKS[name].reference_gflop * 1e9
        if abs(flops - reference) > 0.02 * reference:
            problems.append(f"{name}: counted {flops / 1e9:.4g} GFLOP per image, published {reference / 1e9:g}")
        for engine in results.anvils():
            anvil = engine.flops.get(name)
            if anvil and abs(anvil - flops) > 0.03 * flops:
                problems.append(f"{name}: Anvil counts {anvil / 1e9:.4g} GFLOP per image, PyTorch {flops / 1e9:.4g}")

    minutes, seconds = divmod(int(time.time() - started), 60)
    context.update(load_end=load_average(), versions=versions(anvil_binary),
                   duration=f"{minutes} min {seconds} s", method=method_text(args, measurer, exporters),
                   other_load=other_load(cpu_start, time.time() - measuring_since, cpus))
    networks_info = {name: f"Anvil cannot open its ONNX file ({reason}); Anvil ran its zoo network `{name}` "
                           "(the same layers, its own random weights)" for name, reason in refused.items()}
    if "anvil" in args.engines and not refused:
        networks_info = {"every network": "Anvil opened the same .onnx file as the peers"}
    engines_ran = [(engine.title, engine.ran()) for engine in engines]
    text = reporting.report(context, results, engines_ran, networks_info, sweep, plot_file, load_rows, memory_rows,
                            problems + measurer.problems, args.markdown)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(text + "\n")
    return 1 if problems or measurer.problems else 0


if __name__ == "__main__":
    sys.exit(main())
