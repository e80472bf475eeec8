#!/usr/bin/env python3
"""Benchmarks Anvil against PyTorch (eager, CPU) and ONNX Runtime on identical networks.

Every network is built in PyTorch with seeded random weights and a final softmax, as
Anvil's zoo builds it (`anvil bench <zoo name>` compiles the same network with random
weights): the Deep MNIST net (Scripts/fixtures/train_mnist.py), torchvision's VGG16 and ResNet-50,
MobileNet v1 (Scripts/anvil_convert/torch_zoo.py's definition), and the zoo networks of issue #12,
torchvision's MobileNet v2, v3 large and small, EfficientNet-B0, ShuffleNet v2 1.0x, DenseNet-121 and
Inception v3 (299 px, no auxiliary classifier), built by torch_zoo.build_network as the zoo fixtures
(Scripts/fixtures/zoo_reference.py) check them against torchvision. Default batches 1 and 8 (MNIST
also 64), threads 1 and 2. Each is exported to ONNX once, with a dynamic batch axis, and cached
under Data/bench/onnx/.

In one run of this script, for each configuration (network, batch, threads) the engines
run one after the other, each with the same warm-up (W runs, continued until --warmup-ms have
passed: on an idle VM the CPUs take tens of milliseconds to reach speed, which 3 runs of a
0.3 ms network do not cover) and number of timed runs:
  - PyTorch: torch.set_num_threads(T), torch.inference_mode(), NCHW eager.
  - ONNX Runtime: CPU provider, intra_op_num_threads=T, inter_op_num_threads=1,
    sequential execution, ORT_ENABLE_ALL graph optimizations.
  - Anvil: `anvil bench <zoo name> --batch N --threads T --iterations K --warmup W --warmup-ms MS` in a
    subprocess (the binary `swift build -c release` makes, built once at the start);
    its `median_ms: X (min Y, max Z)` line is parsed.
All three get the same input values (Anvil's bench input, transposed to NCHW for the
peers) and report the median of K timed runs; with --rounds R > 1 each engine runs R
times per configuration (engine order rotated), and the median of the R medians is kept. A
one-thread configuration pins each round to one CPU for every engine (round r on the r-th usable
CPU, cycling): a VM's virtual CPUs can differ in speed for minutes.
Ratios are Anvil's median time divided by the peer's, from the same run (< 1: Anvil faster).

The user path (issue #13, target 5; --user-models, skip with --skip user): torchvision's model
exported to ONNX at opset 17, converted with Scripts/convert_onnx.py, timed with `anvil bench
model.json` against ONNX Runtime on that same .onnx file, batch 1, every --threads; the export,
weights and conversion are Scripts/fixtures/torchvision_onnx_check.py's helpers (files cached in
Data/bench/user/: delete it after a converter change). One table.

Instruction sets: the report lists the CPU's avx2, fma, avx512f, avx512_vnni and avx512_bf16 flags
and the `isa:` line `anvil bench` prints (the set its C kernels used). --isa avx2,avx512 runs Anvil
once per named set, forced with `anvil bench --isa`, as separate engines "Anvil (avx2)", "Anvil
(avx512)" with their own ratio columns; a set the CPU lacks is skipped and the report says so.

FMA peak and share (skip with --skip peak): Scripts/benchmarks/fma_peak.c, compiled with the system
C compiler ($CC, else cc) at run time, measures one core's FMA rate for AVX2 and, where the CPU has
it, AVX-512. Each configuration's share of the peak is nominal FLOPs / time / (per-core peak x
threads): the multiplies Winograd saves count as done (so a share can pass 100%); a forced Anvil
body is measured against its own set's peak, everything else against the widest set's. A table of
two-thread scaling (time on the fewest --threads / time on the most) per network, batch and engine.

Issue #13's targets (with ONNX Runtime among the engines): for each Anvil engine, every configuration's
ratio against its target (0.85; VGG16 0.55), the ratio in each round (its spread is the machine's noise
on that row: the engines ran minutes apart at most), ONNX Runtime's share of the FMA peak and the share
Anvil would need to meet the target; and two-thread scaling at batch 1 against 1.9.

--quick is a smoke run: 1 timed run, no warm-up, 1 load repeat, sweep batches 1,2, and the user
path at the small input sizes of torchvision_onnx_check.py --fast; its figures mean nothing. The
default full run is aimed at under 30 minutes on 2 cores with --rounds 1.

Also measured (skip with --skip): a latency-versus-batch sweep for each engine on one
network, plotted log-log (--plot); VGG16 load time with a warm page cache (Anvil's
load+compile of a converted model file, Data/bench/vgg16/, versus torch.load +
load_state_dict and ORT session creation; measured first, before this process holds any
network); peak resident memory of a VGG16 batch-1
process per engine (Scripts/benchmarks/bench_memory.sh, /usr/bin/time -v).

FLOPs per image are counted from the PyTorch model (2 x multiply-accumulates of every
Conv2d and Linear) and checked against the published figures and Anvil's own count.

Output: a Markdown report on stdout (and --markdown PATH); progress goes to stderr.

Usage:
    Scripts/setup/install_bench_deps.sh
    python3 Scripts/benchmarks/bench_peers.py [--markdown BENCH.md]                       # everything
    python3 Scripts/benchmarks/bench_peers.py --models mnist --threads 2 --batches 1,8 \\
        --iterations 3 --skip load,memory --sweep-batches 1,4                  # a quick check
    python3 Scripts/benchmarks/bench_peers.py --quick --isa avx2,avx512     # smoke run of everything
Options: --models mnist,vgg16,resnet50,... (default: all)  --user-models resnet50,... (default: all)
--isa avx2,avx512  --quick  --threads 1,2  --batches 1,8 (replaces every network's default batches)  --iterations K (>= 1; default 10)  --warmup W  --warmup-ms MS (default 200)  --rounds R
--sweep-model NAME|none  --sweep-batches 1,2,4,8,16,32  --sweep-threads T  --plot PATH
--skip sweep,load,memory,user,peak  --load-repeats N  --engines pytorch,onnxruntime,anvil
--exporter dynamo|torchscript  --anvil BINARY (skip the build)  --scratch-path DIR
--prepare-only (export/convert the VGG16 files bench_memory.sh needs, then stop).
"""

import argparse
import contextlib
import datetime
import gc
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import threading
import time
import warnings
from dataclasses import dataclass

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(REPO, "Scripts")
BENCH_DIR = os.path.join(REPO, "Data", "bench")
sys.path.insert(0, SCRIPTS)                              # anvil_convert
sys.path.insert(0, os.path.join(SCRIPTS, "fixtures"))    # train_mnist
sys.path.insert(0, os.path.join(SCRIPTS, "benchmarks"))  # paced_anvil

from paced_anvil import PacedAnvil, thread_cpu_ns, wait_for_idle_threads  # noqa: E402

ENGINES = ("pytorch", "onnxruntime", "anvil")
ENGINE_NAMES = {"pytorch": "PyTorch", "onnxruntime": "ONNX Runtime", "anvil": "Anvil"}
PEERS = ("pytorch", "onnxruntime")


# ---------------------------------------------------------------------------------------
# The networks
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Network:
    """A benchmarked network: its Anvil zoo name, PyTorch input shape (C, H, W), default
    batches, and the published GFLOP per image its counted FLOPs are checked against."""
    name: str
    title: str
    input_chw: tuple
    batches: tuple
    reference_gflop: float


NETWORKS = {
    "mnist": Network("mnist", "Deep MNIST", (1, 28, 28), (1, 8, 64), 0.0278),
    "vgg16": Network("vgg16", "VGG16", (3, 224, 224), (1, 8), 30.94),
    "resnet50": Network("resnet50", "ResNet-50", (3, 224, 224), (1, 8), 8.18),
    "mobilenet_v1": Network("mobilenet_v1", "MobileNet v1", (3, 224, 224), (1, 8), 1.14),
    # The zoo networks of issue #12: torchvision's definitions (anvil_convert/torch_zoo.py builds
    # torchvision's own class at width 1); published figures are 2 x the papers' or torchvision's GMACs
    # (ShuffleNet v2: the paper's 146 M; torchvision rounds it to 0.14).
    "mobilenet_v2": Network("mobilenet_v2", "MobileNet v2", (3, 224, 224), (1, 8), 0.601),
    "mobilenet_v3_large": Network("mobilenet_v3_large", "MobileNet v3 large", (3, 224, 224), (1, 8), 0.434),
    "mobilenet_v3_small": Network("mobilenet_v3_small", "MobileNet v3 small", (3, 224, 224), (1, 8), 0.114),
    "efficientnet_b0": Network("efficientnet_b0", "EfficientNet-B0", (3, 224, 224), (1, 8), 0.772),
    "shufflenet_v2_x1_0": Network("shufflenet_v2_x1_0", "ShuffleNet v2 1.0×", (3, 224, 224), (1, 8), 0.292),
    "densenet121": Network("densenet121", "DenseNet-121", (3, 224, 224), (1, 8), 5.67),
    "inception_v3": Network("inception_v3", "Inception v3", (3, 299, 299), (1, 8), 11.43),
}

# The user path (issue #13, target 5): torchvision's model exported to ONNX (opset 17), converted
# with Scripts/convert_onnx.py, timed with `anvil bench model.json` against ONNX Runtime on that file.
USER_PATH = ("resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "mobilenet_v3_small", "efficientnet_b0",
             "shufflenet_v2_x1_0", "densenet121", "googlenet", "inception_v3", "squeezenet1_1")

# Instruction sets `anvil bench --isa` forces, and the /proc/cpuinfo flags each needs.
ISA_FLAGS = {"scalar": (), "avx2": ("avx2", "fma"), "avx512": ("avx512f",)}
FMA_PEAK_SETS = ("avx2", "avx512")


def engine_name(engine):
    """'Anvil', 'Anvil (avx512)' for an Anvil run with a forced instruction set, else the peer's name."""
    if engine.startswith("anvil:"):
        return f"Anvil ({engine.split(':', 1)[1]})"
    return ENGINE_NAMES[engine]


def is_anvil(engine):
    return engine == "anvil" or engine.startswith("anvil:")


def cpu_flags():
    """The flags of the first CPU in /proc/cpuinfo."""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        pass
    return set()


def build_torch_network(name, seed):
    """The network in PyTorch, eval mode, seeded random weights, ending in a softmax over
    the classes like Anvil's zoo models."""
    import torch
    import torch.nn as nn
    torch.manual_seed(seed)
    if name == "mnist":
        from train_mnist import DeepMNIST
        body = DeepMNIST()
    else:
        from anvil_convert.torch_zoo import build_network
        body = build_network(name)
    return nn.Sequential(body, nn.Softmax(dim=1)).eval()


def count_flops(model, input_chw):
    """(FLOPs per image = 2 x MACs of every Conv2d and Linear, parameter count)."""
    import torch
    import torch.nn as nn
    macs = []

    def conv_hook(module, inputs, output):
        kh, kw = module.kernel_size
        macs.append(output[0].numel() * (module.in_channels // module.groups) * kh * kw)

    def linear_hook(module, inputs, output):
        macs.append(output[0].numel() * module.in_features)

    handles = []
    for module in model.modules():
        if isinstance(module, nn.Conv2d):
            handles.append(module.register_forward_hook(conv_hook))
        elif isinstance(module, nn.Linear):
            handles.append(module.register_forward_hook(linear_hook))
    with torch.inference_mode():
        model(torch.zeros((1,) + tuple(input_chw)))
    for handle in handles:
        handle.remove()
    return 2 * sum(macs), sum(p.numel() for p in model.parameters())


def bench_input(batch, input_chw):
    """Anvil's bench input (value i of the N x H x W x C buffer is (i * 7919 % 255) / 255),
    as a contiguous NCHW float32 array."""
    c, h, w = input_chw
    index = np.arange(batch * h * w * c, dtype=np.int64)
    nhwc = ((index * 7919) % 255).astype(np.float32) / 255
    return np.ascontiguousarray(nhwc.reshape(batch, h, w, c).transpose(0, 3, 1, 2))


def export_onnx(model, network, path, exporter):
    """Exports `model` to `path` (batch axis dynamic) unless it is there already; returns
    the exporter that wrote the file (`dynamo` falls back to `torchscript` on failure)."""
    if os.path.exists(path) and os.path.getsize(path) > 0:
        try:
            with open(path + ".exporter") as handle:
                return handle.read().strip() + " (cached)"
        except OSError:
            return "cached"
    import torch
    os.makedirs(os.path.dirname(path), exist_ok=True)
    example = torch.from_numpy(bench_input(2, network.input_chw))
    partial = path + ".partial"
    order = ["dynamo", "torchscript"] if exporter == "dynamo" else ["torchscript"]
    for attempt in order:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if attempt == "dynamo":
                    batch = torch.export.Dim("batch", min=1, max=4096)
                    torch.onnx.export(model, (example,), partial, input_names=["input"], output_names=["output"],
                                      dynamic_shapes=({0: batch},), dynamo=True, external_data=False,
                                      verbose=False)
                else:
                    torch.onnx.export(model, (example,), partial, input_names=["input"], output_names=["output"],
                                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                                      opset_version=17, dynamo=False)
            os.replace(partial, path)
            with open(path + ".exporter", "w") as handle:
                handle.write(f"{attempt}, torch {torch.__version__}\n")
            return attempt
        except Exception as error:  # noqa: BLE001 - any exporter failure: try the next one
            log(f"ONNX export of {network.name} with the {attempt} exporter failed: {type(error).__name__}: {error}")
            if os.path.exists(partial):
                os.remove(partial)
    raise RuntimeError(f"could not export {network.name} to ONNX")


def onnx_path(name, exporter, seed):
    return os.path.join(BENCH_DIR, "onnx", f"{name}.{exporter}.seed{seed}.onnx")


# ---------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------

@dataclass
class Timing:
    """One engine's result for one configuration (milliseconds per batch)."""
    median_ms: float = float("nan")
    min_ms: float = float("nan")
    max_ms: float = float("nan")
    runs: int = 0
    error: str = ""

    @property
    def ok(self):
        return not self.error


def combine(rounds):
    """Median of the rounds' medians, overall min and max."""
    good = [t for t in rounds if t.ok]
    if not good:
        return rounds[0]
    return Timing(statistics.median(t.median_ms for t in good), min(t.min_ms for t in good),
                  max(t.max_ms for t in good), sum(t.runs for t in good))


def warm_up(run, warmup, warmup_ms=0.0):
    """`warmup` untimed runs, continued until `warmup_ms` have passed."""
    warm_until = time.perf_counter() + warmup_ms / 1000
    done = 0
    while done < warmup or time.perf_counter() < warm_until:
        run()
        done += 1


def timed_loop(run, warmup, iterations, warmup_ms=0.0):
    """`warmup` untimed runs, continued until `warmup_ms` have passed, then `iterations` timed ones."""
    warm_up(run, warmup, warmup_ms)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return Timing(statistics.median(times), min(times), max(times), len(times))


def ort_session(path, threads):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])


ANVIL_MEDIAN = re.compile(r"^median_ms: ([0-9.]+) \(min ([0-9.]+), max ([0-9.]+)\) over (\d+) runs", re.M)
ANVIL_LOAD = re.compile(r"^load\+compile_ms: ([0-9.]+)", re.M)
ANVIL_GFLOPS = re.compile(r"^gflops: ([0-9.]+)", re.M)
ANVIL_THREADS = re.compile(r"; threads (\d+)$", re.M)
ANVIL_ISA = re.compile(r"^isa: (.*)$", re.M)
ANVIL_PASSES = re.compile(r"^batch_passes: (.*)$", re.M)


def run_anvil(binary, model, batch, threads, iterations, warmup, extra=(), warmup_ms=0.0):
    """Runs `anvil bench`; returns (Timing, load+compile ms, Anvil's GFLOP/s, stdout)."""
    command = [binary, "bench", model, "--batch", str(batch), "--threads", str(threads),
               "--iterations", str(iterations), "--warmup", str(warmup), "--warmup-ms", str(warmup_ms), *extra]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    except subprocess.TimeoutExpired:
        return Timing(error="anvil bench timed out after 1 h"), None, None, ""
    match = ANVIL_MEDIAN.search(done.stdout)
    if done.returncode != 0 or not match:
        message = (done.stderr.strip() or done.stdout.strip()).splitlines()
        return Timing(error=f"anvil bench exited {done.returncode}: {message[-1] if message else ''}"), None, None, done.stdout
    threads_seen = ANVIL_THREADS.search(done.stdout)
    if threads_seen and int(threads_seen.group(1)) != threads:
        return Timing(error=f"anvil ran {threads_seen.group(1)} threads, asked {threads}"), None, None, done.stdout
    load = ANVIL_LOAD.search(done.stdout)
    gflops = ANVIL_GFLOPS.search(done.stdout)
    timing = Timing(float(match.group(1)), float(match.group(2)), float(match.group(3)), int(match.group(4)))
    return timing, float(load.group(1)) if load else None, float(gflops.group(1)) if gflops else None, done.stdout


def isa_arguments(engine):
    """`anvil bench`'s `--isa` arguments for an Anvil engine name (`anvil:avx2` → `--isa avx2`)."""
    return ["--isa", engine.split(":", 1)[1]] if ":" in engine else []


@contextlib.contextmanager
def one_cpu_for_one_thread(threads, index=0):
    """With one thread, runs the block on one CPU — the `index`-th usable one, cycling — and so
    every engine it times (Anvil's subprocess inherits the pinning); with more, on all of them.

    A VM's virtual CPUs can differ in speed for minutes (on a 2-core VM one ran MobileNet v1 in
    12.0 ms throughout while the other took 9.0–14.0): one-thread engines left to the scheduler
    could each sit on a different one, and their ratio would be the CPUs' as much as theirs.
    Rounds take the CPUs in turn, so each engine sees all of them alike."""
    usable = sorted(os.sched_getaffinity(0))
    if threads == 1:
        os.sched_setaffinity(0, {usable[index % len(usable)]})
    try:
        yield
    finally:
        os.sched_setaffinity(0, usable)


class Bench:
    """Holds the engines' state for the network being measured and every result."""

    def __init__(self, args, anvil_binary):
        self.args = args
        self.anvil = anvil_binary
        self.results = {}          # (network, batch, threads) -> {engine: Timing}
        self.round_results = {}    # (network, batch, threads) -> {engine: [Timing of each round]}
        self.flops = {}            # network -> (counted FLOPs per image, parameters)
        self.anvil_flops = {}      # network -> FLOPs per image from Anvil's gflops line
        self.exporters = {}        # network -> exporter that wrote its ONNX file
        self.problems = []
        self.idle_waits = []       # ms waited after each two-thread pause for the engines' threads to stop
        self.torch_model = None
        self.sessions = {}         # threads -> ORT session, for the current network
        self.network = None
        self.onnx_file = None
        self.engines = [e for e in args.engines if e != "anvil"]
        if "anvil" in args.engines:
            self.engines += [f"anvil:{isa}" for isa in args.isa] if args.isa else ["anvil"]
        self.isa_seen = {}         # Anvil engine -> the `isa:` lines `anvil bench` printed
        self.passes_seen = {}      # (network, batch) -> `anvil bench`'s `batch_passes:` line, when it has passes
        self.user_results = {}     # (torchvision name, threads) -> {"onnxruntime": Timing, "anvil": Timing}
        self.user_info = {}        # torchvision name -> (input size, FLOPs per image, status text)

    def note_isa(self, engine, out):
        """Records the instruction set `anvil bench` says its kernels used."""
        match = ANVIL_ISA.search(out or "")
        if match:
            self.isa_seen.setdefault(engine, set()).add(match.group(1).split(" (the CPU")[0])

    def open(self, name):
        """Builds the PyTorch model and the ONNX file of network `name`."""
        self.close()
        network = NETWORKS[name]
        log(f"[{name}] building the PyTorch model")
        self.network = network
        self.torch_model = build_torch_network(name, self.args.seed)
        self.flops[name] = count_flops(self.torch_model, network.input_chw)
        if "onnxruntime" in self.args.engines:
            path = onnx_path(name, self.args.exporter, self.args.seed)
            log(f"[{name}] ONNX file {os.path.relpath(path, REPO)}")
            try:
                self.exporters[name] = export_onnx(self.torch_model, network, path, self.args.exporter)
                self.onnx_file = path
            except RuntimeError as error:
                self.onnx_file = None
                self.problems.append(f"ONNX export of {name}: {error}")

    def close(self):
        self.torch_model, self.sessions, self.network, self.onnx_file = None, {}, None, None
        gc.collect()

    def measure(self, batch, threads):
        """Every engine on (current network, batch, threads), alternating, --rounds times."""
        key = (self.network.name, batch, threads)
        if key in self.results:
            return self.results[key]
        args = self.args
        x = bench_input(batch, self.network.input_chw)
        engines = self.engines
        rounds = {engine: [] for engine in engines}
        for round_index in range(args.rounds):
            order = engines[round_index % len(engines):] + engines[:round_index % len(engines)]
            with one_cpu_for_one_thread(threads, round_index):
                if args.paced:
                    self.measure_round_paced(order, x, batch, threads, round_index, rounds)
                else:
                    self.measure_round(order, x, batch, threads, round_index, rounds)
        self.round_results[key] = rounds
        self.results[key] = {engine: combine(timings) for engine, timings in rounds.items()}
        return self.results[key]

    def measure_round(self, order, x, batch, threads, round_index, rounds):
        """One round of `measure`: each engine in `order` once, appended to `rounds`."""
        args = self.args
        for engine in order:
            log(f"[{self.network.name}] batch {batch}, {threads} thread(s): {engine_name(engine)}"
                + (f" (round {round_index + 1}/{args.rounds})" if args.rounds > 1 else ""))
            try:
                if is_anvil(engine):
                    timing = self.run_anvil(x, batch, threads, engine)
                else:
                    timing = getattr(self, f"run_{engine}")(x, batch, threads)
            except Exception as error:  # noqa: BLE001 - report and go on with the others
                timing = Timing(error=f"{type(error).__name__}: {error}")
            if not timing.ok:
                self.problems.append(f"{engine_name(engine)}, {self.network.name} batch {batch} "
                                     f"threads {threads}: {timing.error}")
                log("  failed: " + timing.error)
            else:
                log(f"  median {timing.median_ms:.3f} ms (min {timing.min_ms:.3f}, max {timing.max_ms:.3f})")
            rounds[engine].append(timing)

    def measure_round_paced(self, order, x, batch, threads, round_index, rounds):
        """One round of `measure` with --paced: every engine in `order` set up and warmed up, then
        each in turn (the turn's order rotating) --paced-rewarm untimed runs and one timed one,
        --iterations times, so the timed runs of all engines are interleaved in time; each
        engine's median of its timed runs."""
        args = self.args
        log(f"[{self.network.name}] batch {batch}, {threads} thread(s): " + ", ".join(map(engine_name, order))
            + " interleaved" + (f" (round {round_index + 1}/{args.rounds})" if args.rounds > 1 else ""))
        runners, anvils, errors = {}, {}, {}
        times = {engine: [] for engine in order}
        try:
            for engine in order:
                try:
                    if is_anvil(engine):
                        anvils[engine] = self.paced_anvil(engine, batch, threads)
                        runners[engine] = anvils[engine].run
                    else:
                        runners[engine] = getattr(self, f"paced_{engine}")(x, batch, threads)
                except Exception as error:  # noqa: BLE001 - report and go on with the others
                    errors[engine] = f"{type(error).__name__}: {error}"
            for index in range(args.iterations):
                live = [e for e in order if e in runners and e not in errors]
                shift = index % max(1, len(live))
                for engine in live[shift:] + live[:shift]:
                    try:
                        # Several threads: an engine's threads still spin (ONNX Runtime's for over
                        # 6 ms) or sleep when the next engine's run starts, and on a VM a halted
                        # virtual CPU takes a while to run again (MobileNet v1 on two threads:
                        # Anvil 5.8 ms in blocks, 11.6 right after ONNX Runtime's runs). So: a
                        # pause, then a wait until no engine's thread runs (ONNX Runtime's worker
                        # runs 34-39 ms after a run, Anvil's waits 30 ms for a next job: see
                        # wait_for_idle_threads); the untimed run then wakes this engine's threads.
                        if threads > 1:
                            time.sleep(args.paced_pause_ms / 1000)
                            self.wait_for_idle([os.getpid()] + [a.process.pid for a in anvils.values() if hasattr(a, "process")])
                        # Untimed first: the other engines' runs since this one's last have
                        # replaced its data in the caches (DenseNet-121 b8: Anvil 412 ms a run
                        # right after ONNX Runtime's, 351 after another Anvil's, 343–346 in blocks).
                        # Continued for --paced-rewarm-ms: a network of a fraction of a millisecond
                        # on two threads needs several runs before the VM's CPUs are up again
                        # (Deep MNIST b1: Anvil 0.77 ms after one, 0.36 after ten; blocks 0.36).
                        warm_up(runners[engine], args.paced_rewarm, args.paced_rewarm_ms)
                        times[engine].append(runners[engine]())
                    except Exception as error:  # noqa: BLE001
                        errors[engine] = f"{type(error).__name__}: {error}"
        finally:
            for engine, anvil in anvils.items():
                try:
                    self.note_anvil_output(engine, batch, "\n".join(anvil.header) + "\n" + anvil.close())
                except Exception as error:  # noqa: BLE001
                    errors.setdefault(engine, f"{type(error).__name__}: {error}")
        for engine in order:
            if engine in errors:
                timing = Timing(error=errors[engine])
                self.problems.append(f"{engine_name(engine)}, {self.network.name} batch {batch} threads {threads}: {timing.error}")
                log(f"  {engine_name(engine)} failed: {timing.error}")
            else:
                runs = times[engine]
                timing = Timing(statistics.median(runs), min(runs), max(runs), len(runs))
                log(f"  {engine_name(engine)}: median {timing.median_ms:.3f} ms (min {timing.min_ms:.3f}, max {timing.max_ms:.3f})")
            rounds[engine].append(timing)

    def wait_for_idle(self, pids):
        """Waits until no thread of `pids` but this one has run for 2 ms (at most 250 ms)."""
        me = threading.get_native_id()
        waited = wait_for_idle_threads(lambda: thread_cpu_ns(pids, exclude=me))
        self.idle_waits.append(waited)

    def warmed(self, run):
        """`run` after the warm-up (--warmup runs, continued for --warmup-ms), as a timed single run."""
        warm_up(run, self.args.warmup, self.args.warmup_ms)

        def once():
            start = time.perf_counter()
            run()
            return (time.perf_counter() - start) * 1000
        return once

    def paced_pytorch(self, x, batch, threads):
        import torch
        torch.set_num_threads(threads)
        tensor = torch.from_numpy(x)
        model = self.torch_model

        def run():
            with torch.inference_mode():
                model(tensor)
        return self.warmed(run)

    def paced_onnxruntime(self, x, batch, threads):
        return self.warmed(self.onnxruntime_call(x, threads))

    def paced_anvil(self, engine, batch, threads):
        """`anvil bench --paced` of the current network, compiled and warmed up."""
        anvil = PacedAnvil(self.anvil, [self.network.name, "--batch", str(batch), "--threads", str(threads),
                                        *isa_arguments(engine)],
                           warmup=self.args.warmup, warmup_ms=self.args.warmup_ms)
        seen = ANVIL_THREADS.search("\n".join(anvil.header))
        if seen and int(seen.group(1)) != threads:
            anvil.close()
            raise RuntimeError(f"anvil ran {seen.group(1)} threads, asked {threads}")
        return anvil

    def note_anvil_output(self, engine, batch, out):
        """What `anvil bench` said besides its times: the instruction set, batch passes, its FLOP count."""
        self.note_isa(engine, out)
        passes = ANVIL_PASSES.search(out or "")
        if passes and not passes.group(1).startswith("none"):
            self.passes_seen[(self.network.name, batch)] = passes.group(1)
        gflops = ANVIL_GFLOPS.search(out or "")
        median = ANVIL_MEDIAN.search(out or "")
        if gflops and median and self.network.name not in self.anvil_flops:
            self.anvil_flops[self.network.name] = float(gflops.group(1)) * 1e9 * float(median.group(1)) / 1000 / batch

    def run_pytorch(self, x, batch, threads):
        import torch
        torch.set_num_threads(threads)
        tensor = torch.from_numpy(x)
        model = self.torch_model
        with torch.inference_mode():
            return timed_loop(lambda: model(tensor), self.args.warmup, self.args.iterations, self.args.warmup_ms)

    def onnxruntime_call(self, x, threads):
        """One ONNX Runtime run on `x` with `threads` (the session made once per thread count)."""
        if self.onnx_file is None:
            raise RuntimeError("no ONNX file (the export failed)")
        session = self.sessions.get(threads)
        if session is None:
            session = self.sessions[threads] = ort_session(self.onnx_file, threads)
        feed = {session.get_inputs()[0].name: x}
        return lambda: session.run(None, feed)

    def run_onnxruntime(self, x, batch, threads):
        return timed_loop(self.onnxruntime_call(x, threads), self.args.warmup, self.args.iterations, self.args.warmup_ms)

    def run_anvil(self, x, batch, threads, engine="anvil"):
        timing, _, _, out = run_anvil(self.anvil, self.network.name, batch, threads, self.args.iterations,
                                      self.args.warmup, extra=isa_arguments(engine), warmup_ms=self.args.warmup_ms)
        if timing.ok:
            self.note_anvil_output(engine, batch, out)
        else:
            self.note_isa(engine, out)
        return timing


# ---------------------------------------------------------------------------------------
# The user path: torchvision -> ONNX (opset 17) -> Scripts/convert_onnx.py -> anvil bench model.json
# ---------------------------------------------------------------------------------------

def measure_user_path(args, bench):
    """For each --user-models network: export, convert (Scripts/fixtures/torchvision_onnx_check.py's
    helpers, so this is exactly the path that script checks for correctness), then time ONNX Runtime
    on the .onnx file and `anvil bench model.json` on the converted file, batch 1, every --threads."""
    import torchvision_onnx_check as check
    from anvil_convert.torch_zoo import import_torchvision
    torchvision = import_torchvision()
    directory = os.path.join(BENCH_DIR, "user")
    os.makedirs(directory, exist_ok=True)
    for name in args.user_models:
        size = check.FAST.get(name, 64) if args.quick else check.SIZES.get(name, 224)
        stem = os.path.join(directory, f"{name}.{size}")
        onnx_file, converted = stem + ".onnx", stem
        log(f"[user path] {name} at {size} px: torchvision -> ONNX -> convert_onnx.py")
        try:
            image = check.photo(size)
            model = check.build(torchvision, name, image)
            flops, _ = count_flops(model, (3, size, size))
            if not (os.path.exists(onnx_file) and os.path.exists(os.path.join(converted, "model.json"))):
                check.export(model, image, onnx_file)
                blockers = check.convert(onnx_file, converted)
                if blockers is not None:
                    bench.user_info[name] = (size, flops, "blocked: " + "; ".join(check.summarise(blockers)))
                    bench.problems.append(f"user path {name}: convert_onnx.py refused it")
                    continue
            del model
            gc.collect()
        except Exception as error:  # noqa: BLE001 - one network's failure is a row of the table
            bench.user_info[name] = (size, None, f"failed: {type(error).__name__}: {error}")
            bench.problems.append(f"user path {name}: {type(error).__name__}: {error}")
            continue
        bench.user_info[name] = (size, flops, "ok")
        x = bench_input(1, (3, size, size))
        for threads in args.threads:
            with one_cpu_for_one_thread(threads):
                result = measure_user_configuration(args, bench, onnx_file, converted, x, threads, name)
            for engine, timing in result.items():
                if not timing.ok:
                    bench.problems.append(f"user path {name}, {threads} thread(s), {engine_name(engine)}: {timing.error}")
            bench.user_results[(name, threads)] = result


def measure_user_configuration(args, bench, onnx_file, converted, x, threads, name):
    """ONNX Runtime on `onnx_file` and each Anvil engine on the converted model, batch 1, `threads`."""
    result = {}
    if "onnxruntime" in args.engines:
        log(f"[user path] {name}, {threads} thread(s): ONNX Runtime")
        try:
            session = ort_session(onnx_file, threads)
            feed = {session.get_inputs()[0].name: x}
            result["onnxruntime"] = timed_loop(lambda: session.run(None, feed), args.warmup,
                                               args.iterations, args.warmup_ms)
            del session
        except Exception as error:  # noqa: BLE001
            result["onnxruntime"] = Timing(error=f"{type(error).__name__}: {error}")
    for engine in bench.engines:
        if not is_anvil(engine):
            continue
        log(f"[user path] {name}, {threads} thread(s): {engine_name(engine)}")
        timing, _, _, out = run_anvil(bench.anvil, os.path.join(converted, "model.json"), 1, threads,
                                      args.iterations, args.warmup, extra=isa_arguments(engine), warmup_ms=args.warmup_ms)
        bench.note_isa(engine, out)
        result[engine] = timing
    return result


# ---------------------------------------------------------------------------------------
# The FMA peak
# ---------------------------------------------------------------------------------------

def measure_fma_peak(flags):
    """Per-core FMA peak in GFLOP/s for each of AVX2 and AVX-512 the CPU has: Scripts/benchmarks/fma_peak.c,
    compiled here with the system C compiler ($CC, else cc). Returns ({set: GFLOP/s}, problems)."""
    import tempfile
    peaks, problems = {}, []
    wanted = [isa for isa in FMA_PEAK_SETS if all(f in flags for f in ISA_FLAGS[isa])]
    if not wanted:
        return peaks, ["FMA peak: the CPU has neither AVX2 + FMA nor AVX-512F"]
    with tempfile.TemporaryDirectory(prefix="fma_peak_") as work:
        binary = os.path.join(work, "fma_peak")
        compiler = os.environ.get("CC", "cc")
        done = subprocess.run([compiler, "-O2", "-o", binary, os.path.join(SCRIPTS, "benchmarks", "fma_peak.c")],
                              capture_output=True, text=True)
        if done.returncode != 0:
            return peaks, [f"FMA peak: {compiler} failed: {done.stderr.strip()[-300:]}"]
        for isa in wanted:
            log(f"[peak] FMA peak, one core, {isa}")
            done = subprocess.run([binary, isa], capture_output=True, text=True)
            match = re.search(r"^gflops: ([0-9.]+)", done.stdout, re.M)
            if done.returncode != 0 or not match:
                problems.append(f"FMA peak {isa}: exit {done.returncode} {done.stderr.strip()}")
            else:
                peaks[isa] = float(match.group(1))
    return peaks, problems


def peak_for(engine, bench):
    """The per-core peak an engine's share is taken of: a forced Anvil body's own set; otherwise the
    widest set the CPU has (what ONNX Runtime and PyTorch pick, and Anvil's default body)."""
    if ":" in engine:
        return bench.peaks.get(engine.split(":", 1)[1])
    for isa in reversed(FMA_PEAK_SETS):
        if isa in bench.peaks:
            return bench.peaks[isa]
    return None


# ---------------------------------------------------------------------------------------
# VGG16 files for the load and memory measurements
# ---------------------------------------------------------------------------------------

def vgg16_files(args):
    """Paths of the converted Anvil model, the torch state_dict and the ONNX file of the
    seeded VGG16 (with softmax), making those that are missing."""
    directory = os.path.join(BENCH_DIR, "vgg16")
    files = {"model_json": os.path.join(directory, "model.json"),
             "weights": os.path.join(directory, "weights.bin"),
             "state_dict": os.path.join(directory, f"state_dict.seed{args.seed}.pth"),
             "onnx": onnx_path("vgg16", args.exporter, args.seed)}
    stamp = os.path.join(directory, f"converted.seed{args.seed}")
    missing = [k for k, p in files.items() if not os.path.exists(p)] + ([] if os.path.exists(stamp) else ["stamp"])
    if not missing:
        return files
    import torch
    from anvil_convert.from_pytorch import convert
    model = build_torch_network("vgg16", args.seed)
    os.makedirs(directory, exist_ok=True)
    if "model_json" in missing or "weights" in missing or "stamp" in missing:
        log("[vgg16] converting to an Anvil model file with Scripts/convert_pytorch.py")
        convert(model[0], (224, 224, 3), directory, name="vgg16", softmax=True)
        open(stamp, "w").close()
    if "state_dict" in missing:
        log("[vgg16] saving the state_dict")
        torch.save(model.state_dict(), files["state_dict"] + ".partial")
        os.replace(files["state_dict"] + ".partial", files["state_dict"])
    if "onnx" in missing:
        log("[vgg16] exporting to ONNX")
        export_onnx(model, NETWORKS["vgg16"], files["onnx"], args.exporter)
    return files


def warm_page_cache(paths):
    for path in paths:
        with open(path, "rb") as handle:
            while handle.read(1 << 24):
                pass


def measure_load(args, anvil_binary, threads):
    """VGG16 load times (ms, warm page cache): rows of (engine, what, Timing)."""
    import torch
    files = vgg16_files(args)
    warm_page_cache([files["weights"], files["state_dict"], files["onnx"], files["model_json"]])
    repeats = args.load_repeats
    rows = []

    if "anvil" in args.engines:
        log(f"[load] Anvil load+compile of {os.path.relpath(files['model_json'], REPO)} x{repeats}")
        loads, error = [], ""
        for _ in range(repeats):
            timing, load, _, _ = run_anvil(anvil_binary, files["model_json"], 1, threads, 1, 0)
            if not timing.ok or load is None:
                error = timing.error or "no load+compile_ms line"
                break
            loads.append(load)
        rows.append(("anvil", "`anvil bench model.json`: load+compile_ms (model file, mmap of weights.bin, compile)",
                     times_to_timing(loads, error)))

    if "pytorch" in args.engines:
        torch.set_num_threads(threads)
        model = build_torch_network("vgg16", args.seed)
        log(f"[load] torch.load + load_state_dict x{repeats}")
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            state = torch.load(files["state_dict"], map_location="cpu", weights_only=True)
            model.load_state_dict(state)
            times.append((time.perf_counter() - start) * 1000)
            del state
        rows.append(("pytorch", "`torch.load` + `load_state_dict` (model built beforehand)", times_to_timing(times)))
        log(f"[load] torch.load(mmap=True) + load_state_dict(assign=True) x{repeats}")
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            state = torch.load(files["state_dict"], map_location="cpu", weights_only=True, mmap=True)
            model.load_state_dict(state, assign=True)
            times.append((time.perf_counter() - start) * 1000)
            del state
        rows.append(("pytorch", "`torch.load(mmap=True)` + `load_state_dict(assign=True)`", times_to_timing(times)))
        del model
        gc.collect()

    if "onnxruntime" in args.engines:
        log(f"[load] ONNX Runtime session creation x{repeats}")
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            session = ort_session(files["onnx"], threads)
            times.append((time.perf_counter() - start) * 1000)
            del session
            gc.collect()
        rows.append(("onnxruntime", "`InferenceSession` creation (all graph optimizations)", times_to_timing(times)))
    return rows


def times_to_timing(times, error=""):
    if error or not times:
        return Timing(error=error or "no measurement")
    return Timing(statistics.median(times), min(times), max(times), len(times))


MEMORY_NAMES = {"anvil": "Anvil", "pytorch": "PyTorch", "pytorch-mmap": "PyTorch, mmap + assign",
                "onnxruntime": "ONNX Runtime", "torch-import": "python3 + import torch (baseline)",
                "onnxruntime-import": "python3 + import onnxruntime (baseline)"}
MEMORY_LINE = re.compile(r"^memory: (\S+) (\d+) kB(?: (.*))?$", re.M)


def measure_memory(args, anvil_binary, threads):
    """Peak RSS of VGG16 batch-1 processes: rows of (key, kB or None, description)."""
    files = vgg16_files(args)
    engines = ",".join(args.engines)
    command = ["bash", os.path.join(SCRIPTS, "benchmarks", "bench_memory.sh"), "--threads", str(threads), "--anvil", anvil_binary,
               "--model-json", files["model_json"], "--state-dict", files["state_dict"], "--onnx", files["onnx"],
               "--engines", engines]
    log("[memory] " + " ".join(shlex.quote(c) for c in command))
    done = subprocess.run(command, capture_output=True, text=True)
    sys.stderr.write(done.stderr)
    rows = [(m.group(1), int(m.group(2)), m.group(3) or "") for m in MEMORY_LINE.finditer(done.stdout)]
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()
        raise RuntimeError(f"bench_memory.sh exited {done.returncode}: {tail[-1] if tail else ''}")
    return rows


# ---------------------------------------------------------------------------------------
# The machine and versions
# ---------------------------------------------------------------------------------------

def command_output(command, cwd=None):
    try:
        done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=120)
        return (done.stdout + done.stderr).strip() if done.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


def cache_sizes():
    """The first CPU's data and unified caches from sysfs, e.g. "L1d 48K, L2 2048K, L3 266240K"
    (a VM's model name can hide the CPU's generation; its caches and family/model tell it)."""
    root, found = "/sys/devices/system/cpu/cpu0/cache", []

    def read(entry, name):
        with open(os.path.join(root, entry, name)) as handle:
            return handle.read().strip()

    try:
        for entry in sorted(os.listdir(root)):
            kind = read(entry, "type")
            if kind in ("Data", "Unified"):
                found.append(f"L{read(entry, 'level')}{'d' if kind == 'Data' else ''} {read(entry, 'size')}")
    except OSError:
        pass
    return ", ".join(found)


def machine_description():
    model, flags, physical = "unknown CPU", set(), set()
    physical_id = "0"
    identity = {}
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key == "model name":
                    model = value
                elif key in ("vendor_id", "cpu family", "model", "stepping") and key not in identity:
                    identity[key] = value
                elif key == "flags" and not flags:
                    flags = set(value.split())
                elif key == "physical id":
                    physical_id = value
                elif key == "core id":
                    physical.add((physical_id, value))
    except OSError:
        pass
    logical = os.cpu_count() or 0
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else logical
    memory = "unknown"
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    memory = f"{int(line.split()[1]) / 1024 ** 2:.1f} GiB"
    except OSError:
        pass
    isa = " ".join(f for f in ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile") if f in flags) \
        or "no AVX2"
    cores = f"{len(physical)} cores, " if physical else ""
    if "cpu family" in identity:
        model += (f" ({identity.get('vendor_id', 'unknown vendor')} family {identity['cpu family']} model "
                  f"{identity.get('model', '?')} stepping {identity.get('stepping', '?')})")
    caches = cache_sizes()
    return (f"{model}; {cores}{logical} logical CPUs ({available} usable by this process); {isa}; "
            + (f"CPU 0's caches {caches}; " if caches else "") + f"{memory} RAM; Linux {platform.release()}")


def load_average():
    try:
        return " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def cpu_seconds():
    """(CPU seconds all processes have spent busy since boot, CPU seconds of this process
    and its waited-for children)."""
    with open("/proc/stat") as handle:
        fields = [int(v) for v in handle.readline().split()[1:]]
    busy = sum(fields[:8]) - fields[3] - fields[4]  # all but idle and iowait
    own = os.times()
    return busy / os.sysconf("SC_CLK_TCK"), own.user + own.system + own.children_user + own.children_system


def other_load(start, wall_seconds, cpus):
    """The share of the CPUs that other processes used since `start` (from cpu_seconds())."""
    end = cpu_seconds()
    other = (end[0] - start[0]) - (end[1] - start[1])
    return max(0.0, other / (wall_seconds * cpus))


def versions(anvil_binary):
    import torch
    parts = []
    backends = []
    if torch.backends.mkl.is_available():
        backends.append("MKL")
    if torch.backends.mkldnn.is_available():
        backends.append("oneDNN")
    parallel = re.search(r"ATen parallel backend: (\S+)", torch.__config__.parallel_info())
    if parallel:
        backends.append(f"{parallel.group(1)} threads")
    parts.append(f"PyTorch {torch.__version__}" + (f" ({', '.join(backends)})" if backends else ""))
    for module, label in (("onnxruntime", "ONNX Runtime"), ("onnx", "onnx"), ("onnxscript", "onnxscript"),
                          ("numpy", "numpy")):
        try:
            parts.append(f"{label} {__import__(module).__version__}")
        except ImportError:
            pass
    try:
        from anvil_convert.torch_zoo import import_torchvision
        parts.append(f"torchvision {import_torchvision().__version__}")
    except Exception:  # noqa: BLE001 - only a version string
        pass
    swift = command_output(["swift", "--version"]).splitlines()
    swift = next((line for line in swift if "Swift version" in line), "")
    parts.append(swift.split(" (")[0].replace("Swift version", "Swift") if swift else "Swift unknown")
    blas = ""
    for package in ("libopenblas0-pthread", "libopenblas0-openmp", "libopenblas0-serial", "libopenblas0",
                    "libopenblas-base"):
        version = command_output(["dpkg-query", "-W", "-f", "${Version}", package])
        if version:
            blas = f"OpenBLAS {version} ({package})"
            break
    linked = command_output(["ldd", anvil_binary]) if anvil_binary else ""
    library = re.search(r"libopenblas\S* => (\S+)", linked)
    if library:
        blas += f", Anvil links {os.path.realpath(library.group(1))}"
    parts.append(blas or "OpenBLAS unknown")
    commit = command_output(["git", "rev-parse", "--short", "HEAD"], cwd=REPO)
    dirty = command_output(["git", "status", "--porcelain", "--", "Sources", "Package.swift"], cwd=REPO)
    parts.append(f"Anvil {commit or 'unknown commit'}" + (" + uncommitted changes in Sources/" if dirty else ""))
    return ", ".join(parts)


# ---------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------

def fmt_value(ms):
    return f"{ms:.3f}" if ms < 10 else f"{ms:.1f}"


def fmt_ms(timing):
    return fmt_value(timing.median_ms) if timing.ok else "failed"


def fmt_ratio(anvil, peer):
    if not (anvil and peer and anvil.ok and peer.ok):
        return "–"
    return f"{anvil.median_ms / peer.median_ms:.2f}"


def fmt_count(value):
    if value >= 1e9:
        return f"{value / 1e9:.2f} G"
    if value >= 1e6:
        return f"{value / 1e6:.1f} M"
    return f"{value / 1e3:.1f} k"


NUMERIC_CELL = re.compile(r"^[0-9.,:()–%\- ]*$|^failed$|^–$")


def table(header, rows):
    """A Markdown table; columns whose cells are all numbers are right-aligned."""
    numeric = [all(NUMERIC_CELL.match(str(row[i])) for row in rows) for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def report(args, bench, context, sweep, load_rows, memory_rows, plot_file):
    engines = bench.engines
    anvils = [e for e in engines if is_anvil(e)]
    peers = [e for e in PEERS if e in engines]
    out = ["## Anvil versus PyTorch and ONNX Runtime", ""]
    out += [f"- Machine: {context['machine']}",
            f"- Load average (1/5/15 min) at start: {context['load_start']}; at end: {context['load_end']}",
            f"- Versions: {context['versions']}",
            f"- Date: {context['date']}; the run took {context['duration']}",
            f"- Command: `{context['command']}`"]
    other = context["other_load"]
    out.append(f"- Other processes used {100 * other:.0f}% of the CPUs while this ran"
               + (" — **the machine was busy: these numbers are not a clean measurement**" if other > 0.05 else ""))
    environment = [f"{k}={os.environ[k]}" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
                   if k in os.environ]
    if environment:
        out.append(f"- Environment: {' '.join(environment)}")
    exporters = ", ".join(f"{n}: {e}" for n, e in bench.exporters.items())
    out += [f"- Method: one process; for each configuration the engines run one after the other "
            f"({args.warmup} warm-up run(s), continued for at least {args.warmup_ms:g} ms, then the median of "
            f"{args.iterations} timed runs"
            + (" — fewer than 5: a smoke test" if args.iterations < 5 else "")
            + (f", median of {args.rounds} rounds with the engine order rotated" if args.rounds > 1 else "")
            + "; one-thread configurations run every engine of a round on the same CPU, the rounds taking the "
            "CPUs in turn"
            + (f"; the engines interleaved: in turn {args.paced_rewarm} untimed run(s), continued for at least "
               f"{args.paced_rewarm_ms:g} ms, and one timed run each, a turn of several threads after a "
               f"{args.paced_pause_ms:g} ms pause and then until no engine's thread had run for 2 ms"
               + (f" (waits of {statistics.median(bench.idle_waits):.1f} ms median, {max(bench.idle_waits):.1f} "
                  f"the longest, after the pause)" if bench.idle_waits else "")
               if args.paced else "")
            + "). Same input values for all. PyTorch: eager NCHW, `torch.inference_mode()`, "
            "`torch.set_num_threads(T)`, inter-op threads 1. ONNX Runtime: CPU provider, intra-op T, inter-op 1, "
            "sequential, all graph optimizations" + (f" (ONNX files: {exporters})" if exporters else "") + ". "
            f"Anvil: `{os.path.relpath(bench.anvil, REPO) if bench.anvil else 'anvil'} bench <zoo name> --batch N "
            f"--threads T --iterations {args.iterations} --warmup {args.warmup} --warmup-ms {args.warmup_ms:g}` "
            "(release build), its own "
            "`median_ms`. Seeded random weights; every network ends in a softmax, as Anvil's zoo models do.",
            "- Ratios are Anvil's time divided by the peer's: below 1, Anvil is faster.", ""]

    out += isa_section(bench)
    out += ["### Networks", ""]
    rows = []
    for name, (flops, parameters) in bench.flops.items():
        network = NETWORKS[name]
        anvil = bench.anvil_flops.get(name)
        rows.append([network.title, "×".join(str(d) for d in network.input_chw[1:] + network.input_chw[:1]),
                     f"{parameters:,}", f"{flops / 1e9:.4g}", f"{network.reference_gflop:g}",
                     f"{anvil / 1e9:.4g}" if anvil else "–"])
    out += [table(["network", "input (H×W×C)", "parameters", "GFLOP / image (2 × MACs of Conv2d and Linear, counted)",
                   "published", "Anvil's count (from its gflops line)"], rows), ""]

    configs = [key for key in bench.results if key in set(context["configs"])]
    out += ["### Latency (median ms per batch; lower is better)", ""]
    header = ["network", "batch", "threads"] + [engine_name(e) for e in engines]
    header += [f"{engine_name(a)} ÷ {ENGINE_NAMES[p]}" for a in anvils for p in peers]
    rows = []
    for key in configs:
        result = bench.results[key]
        row = [NETWORKS[key[0]].title, key[1], key[2]] + [fmt_ms(result[e]) for e in engines]
        row += [fmt_ratio(result[a], result[p]) for a in anvils for p in peers]
        rows.append(row)
    out += [table(header, rows), ""]

    out += ["### Throughput", ""]
    rows = []
    for key in configs:
        flops = bench.flops[key[0]][0]
        for engine in engines:
            timing = bench.results[key][engine]
            if timing.ok:
                per_second = key[1] * 1000 / timing.median_ms
                rows.append([NETWORKS[key[0]].title, key[1], key[2], engine_name(engine),
                             f"{fmt_ms(timing)} ({fmt_value(timing.min_ms)}–{fmt_value(timing.max_ms)})", f"{per_second:,.1f}",
                             f"{per_second * flops / 1e9:.1f}"])
            else:
                rows.append([NETWORKS[key[0]].title, key[1], key[2], engine_name(engine), "failed", "–", "–"])
    out += [table(["network", "batch", "threads", "engine", "median ms (min–max)", "images/s", "GFLOP/s"], rows), ""]

    out += targets_section(bench, configs, engines)
    out += scaling_section(bench, configs, engines)
    out += peak_section(bench, configs, engines)
    out += user_path_section(args, bench, anvils)

    if sweep:
        name, threads, batches = sweep
        out += [f"### Latency versus batch: {NETWORKS[name].title}, {threads} thread(s)", ""]
        header = ["batch"] + [f"{engine_name(e)} ms" for e in engines] + [f"{engine_name(e)} images/s" for e in engines]
        rows = []
        for batch in batches:
            result = bench.results.get((name, batch, threads), {})
            timings = [result.get(e, Timing(error="missing")) for e in engines]
            rows.append([batch] + [fmt_ms(t) for t in timings]
                        + [f"{batch * 1000 / t.median_ms:,.0f}" if t.ok else "–" for t in timings])
        out += [table(header, rows), ""]
        if plot_file:
            base = os.path.dirname(os.path.abspath(args.markdown)) if args.markdown else os.getcwd()
            out += [f"![latency versus batch]({os.path.relpath(plot_file, base)})", ""]

    if load_rows:
        out += [f"### VGG16 load time (warm page cache; median of {args.load_repeats}; {context['extra_threads']} "
                "thread(s); measured before the timing runs)", ""]
        anvil = next((t for e, _, t in load_rows if e == "anvil"), None)
        rows = [[ENGINE_NAMES[e], what, fmt_ms(t) if t.ok else f"failed: {t.error}",
                 f"{fmt_value(t.min_ms)}–{fmt_value(t.max_ms)}" if t.ok else "–",
                 fmt_ratio(anvil, t) if e != "anvil" else "–"] for e, what, t in load_rows]
        out += [table(["engine", "what is timed", "median ms", "min–max ms", "Anvil ÷ this"], rows), "",
                "Anvil's figure is `load+compile_ms` of `anvil bench Data/bench/vgg16/model.json` (the seeded "
                "torchvision VGG16 converted by Scripts/convert_pytorch.py): reading the model file, mapping "
                "weights.bin and compiling, which reorders PyTorch's weight layout.", ""]

    if memory_rows:
        out += [f"### Peak resident memory, VGG16 batch 1 ({context['extra_threads']} thread(s); "
                "`/usr/bin/time -v`, Scripts/benchmarks/bench_memory.sh)", ""]
        anvil = next((kb for key, kb, _ in memory_rows if key == "anvil"), None)
        rows = [[MEMORY_NAMES.get(key, key), f"{kb / 1024:,.0f}",
                 f"{anvil / kb:.2f}" if anvil and key != "anvil" and not key.endswith("-import") else "–", what]
                for key, kb, what in memory_rows]
        out += [table(["process", "peak RSS (MiB)", "Anvil ÷ this", "what runs"], rows), ""]

    if bench.problems:
        out += ["### Problems", ""] + [f"- {p}" for p in bench.problems] + [""]
    return "\n".join(out)


def isa_section(bench):
    """The CPU's flags that matter and the instruction set each Anvil run's kernels used."""
    flags = bench.flags
    out = ["### CPU and instruction sets", "",
           "- CPU flags (/proc/cpuinfo): " + ", ".join(f"{f} {'yes' if f in flags else 'no'}"
                                                    for f in ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16"))]
    for engine in bench.engines:
        if is_anvil(engine):
            seen = "; ".join(sorted(bench.isa_seen.get(engine, ()))) or "no `isa:` line seen"
            out.append(f"- {engine_name(engine)}: `anvil bench` reported `isa: {seen}`")
    for isa in bench.isa_skipped:
        out.append(f"- `--isa {isa}` skipped: this CPU lacks {', '.join(ISA_FLAGS[isa])}")
    passes = "; ".join(f"{name} batch {batch}: {text}" for (name, batch), text in sorted(bench.passes_seen.items()))
    out.append("- Batch passes (`anvil bench`'s `batch_passes:`; every other configuration runs each step on the "
               f"whole batch): {passes or 'none'}")
    peaks = ", ".join(f"{isa.upper().replace('AVX512', 'AVX-512')} {value:.1f} GFLOP/s" for isa, value in bench.peaks.items())
    out += [f"- FMA peak per core (Scripts/benchmarks/fma_peak.c, one thread, independent FMA chains in registers, "
            f"compiled here with the system cc): {peaks or 'not measured'}", ""]
    return out


# Issue #13's speed targets: Anvil's time ÷ ONNX Runtime's at most this (VGG16: its own), and
# two-thread scaling at batch 1 at least this.
TARGET_RATIO = 0.85
TARGET_RATIOS = {"vgg16": 0.55}
TARGET_SCALING = 1.9


def round_ratios(bench, key, engine, peer):
    """Anvil's time ÷ the peer's in each round where both ran: the two ran minutes apart at most, so
    the spread of these is the run's own measure of the machine's noise on this row."""
    rounds = bench.round_results.get(key, {})
    return [a.median_ms / p.median_ms for a, p in zip(rounds.get(engine, []), rounds.get(peer, []))
            if a.ok and p.ok]


def share_of_peak(bench, key, engine, timing):
    """Nominal FLOPs ÷ time ÷ (per-core peak × threads), or None when something is missing."""
    peak = peak_for(engine, bench)
    if not (timing and timing.ok and peak and key[0] in bench.flops):
        return None
    return bench.flops[key[0]][0] * key[1] / (timing.median_ms / 1000) / (peak * 1e9 * key[2])


def target_rows(bench, configs, anvil, peer="onnxruntime"):
    """One row per configuration: (key, ratio, round ratios, target, met, peer share, needed share,
    Anvil share). The needed share is the share of the FMA peak Anvil would have to reach, at the
    peer's measured time × the target, with the same nominal FLOPs: above ~1 the target needs
    fewer multiplies (Winograd) or a wider instruction set, not a faster kernel."""
    rows = []
    for key in configs:
        result = bench.results.get(key, {})
        mine, theirs = result.get(anvil), result.get(peer)
        if not (mine and theirs and mine.ok and theirs.ok):
            continue
        target = TARGET_RATIOS.get(key[0], TARGET_RATIO)
        ratio = mine.median_ms / theirs.median_ms
        peer_share = share_of_peak(bench, key, anvil, theirs)
        rows.append((key, ratio, round_ratios(bench, key, anvil, peer), target, ratio <= target, peer_share,
                     peer_share / target if peer_share is not None else None,
                     share_of_peak(bench, key, anvil, mine)))
    return rows


def targets_section(bench, configs, engines):
    """Issue #13's targets 1 and 2 for each Anvil engine against ONNX Runtime: every configuration's
    ratio with its spread over the rounds and the share of the FMA peak the target asks for."""
    if "onnxruntime" not in engines:
        return []
    out = []
    for anvil in [e for e in engines if is_anvil(e)]:
        rows = target_rows(bench, configs, anvil)
        if not rows:
            continue
        met = sum(1 for row in rows if row[4])
        within = [row for row in rows if not row[4] and row[2] and min(row[2]) <= row[3]]
        beyond = [row for row in rows if not row[4] and row[6] is not None and row[6] > 1]
        percent = lambda v: f"{100 * v:.0f}%" if v is not None else "–"
        table_rows = [[NETWORKS[key[0]].title, key[1], key[2], f"{ratio:.2f}",
                       f"{min(spread):.2f}–{max(spread):.2f}" if spread else "–", f"{target:.2f}",
                       "met" if ok else "not met", percent(peer_share), percent(needed), percent(share)]
                      for key, ratio, spread, target, ok, peer_share, needed, share in rows]
        out += [f"### Against issue #13's targets: {engine_name(anvil)} ÷ ONNX Runtime", "",
                f"Target 1: {met} of {len(rows)} configurations at or below their target ({TARGET_RATIO:g}; VGG16 "
                f"{TARGET_RATIOS['vgg16']:g}). Of the {len(rows) - met} not met, {len(within)} reached the target in "
                f"at least one round (the rounds' ratios are the machine's noise on that row), and {len(beyond)} "
                "would need more than 100% of the FMA peak at nominal FLOPs: ONNX Runtime's measured time × the "
                "target leaves less time than the multiplies take at the peak, so only fewer multiplies "
                "(Winograd) or a wider instruction set can meet them. Shares: nominal FLOPs ÷ time ÷ (per-core "
                "peak × threads), both engines' against the peak of the set Anvil's body uses.", "",
                table(["network", "batch", "threads", "ratio", "ratio in each round", "target", "",
                       "ONNX Runtime's share", "share the target needs", "Anvil's share"], table_rows), ""]
        scaling = []
        for name in dict.fromkeys(key[0] for key in configs):
            one, two = bench.results.get((name, 1, 1), {}).get(anvil), bench.results.get((name, 1, 2), {}).get(anvil)
            if one and two and one.ok and two.ok:
                scaling.append((name, one.median_ms / two.median_ms))
        if scaling:
            reached = sum(1 for _, value in scaling if value >= TARGET_SCALING)
            out += [f"Target 2 (time on 1 thread ÷ time on 2 at batch 1, at least {TARGET_SCALING:g}): {reached} of "
                    f"{len(scaling)}: " + ", ".join(f"{NETWORKS[name].title} {value:.2f}" for name, value in scaling)
                    + ".", ""]
    return out


def scaling_section(bench, configs, engines):
    """Time on the fewest threads ÷ time on the most, per network, batch and engine."""
    threads = sorted({key[2] for key in configs})
    if len(threads) < 2:
        return []
    low, high = threads[0], threads[-1]
    pairs = sorted({(key[0], key[1]) for key in configs}, key=lambda p: (list(NETWORKS).index(p[0]), p[1]))
    rows = []
    for name, batch in pairs:
        one, two = bench.results.get((name, batch, low)), bench.results.get((name, batch, high))
        if not (one and two):
            continue
        rows.append([NETWORKS[name].title, batch] + [fmt_ratio(one[e], two[e]) for e in engines])
    if not rows:
        return []
    return [f"### Thread scaling (time on {low} thread(s) ÷ time on {high}; ideal {high / low:g})", "",
            table(["network", "batch"] + [engine_name(e) for e in engines], rows), ""]


def peak_section(bench, configs, engines):
    """FLOPs ÷ time ÷ (per-core peak × threads) for every configuration and engine."""
    if not bench.peaks:
        return []
    rows = []
    for key in configs:
        row = [NETWORKS[key[0]].title, key[1], key[2]]
        for engine in engines:
            share = share_of_peak(bench, key, engine, bench.results[key][engine])
            row.append(f"{100 * share:.0f}%" if share is not None else "–")
        rows.append(row)
    return ["### Share of the FMA peak (nominal FLOPs ÷ time ÷ (per-core peak × threads))", "",
            "FLOPs are the nominal 2 × MACs of every convolution and dense layer: the multiplies Winograd "
            "convolutions save are counted as if done, so a Winograd layer can exceed 100%. The peak is the "
            "FMA microbenchmark's per-core figure of the widest set the CPU has, and for an Anvil run with a "
            "forced instruction set that set's own peak.", "",
            table(["network", "batch", "threads"] + [engine_name(e) for e in engines], rows), ""]


def user_path_section(args, bench, anvils):
    """The user path: ONNX Runtime and `anvil bench model.json` on the same exported file."""
    if not bench.user_info:
        return []
    rows = []
    for name, (size, flops, status) in bench.user_info.items():
        for threads in args.threads:
            result = bench.user_results.get((name, threads))
            if result is None:
                if threads == args.threads[0]:
                    rows.append([name, size, "–", f"{flops / 1e9:.3g}" if flops else "–", "–"]
                                + ["–"] * (2 * len(anvils)) + [status])
                continue
            ort = result.get("onnxruntime", Timing(error="not run"))
            row = [name, size, threads, f"{flops / 1e9:.3g}" if flops else "–", fmt_ms(ort)]
            row += [fmt_ms(result[a]) for a in anvils]
            row += [fmt_ratio(result[a], ort) for a in anvils]
            row.append(status)
            rows.append(row)
    header = (["torchvision model", "input px", "threads", "GFLOP / image", "ONNX Runtime ms"]
              + [f"{engine_name(a)} ms" for a in anvils] + [f"{engine_name(a)} ÷ ONNX Runtime" for a in anvils]
              + ["conversion"])
    return ["### The user path: torchvision → ONNX (opset 17) → `Scripts/convert_onnx.py` → `anvil bench model.json`", "",
            "Batch 1. torchvision's model with seeded random weights (batch-norm statistics from a photograph), "
            "exported and converted by Scripts/fixtures/torchvision_onnx_check.py's helpers; ONNX Runtime runs the "
            "same .onnx file (settings as above). Files cached in Data/bench/user/.", "",
            table(header, rows), ""]


def plot_sweep(bench, sweep, engines, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    name, threads, batches = sweep
    figure, axes = plt.subplots(figsize=(6.4, 4.4), dpi=120)
    for engine, marker in zip(engines, "osD^v<>"):
        points = [(b, bench.results[(name, b, threads)][engine].median_ms) for b in batches
                  if (name, b, threads) in bench.results and bench.results[(name, b, threads)][engine].ok]
        if points:
            axes.plot([p[0] for p in points], [p[1] for p in points], marker=marker, label=engine_name(engine))
    axes.set_xscale("log", base=2)
    axes.set_yscale("log")
    axes.set_xticks(batches)
    axes.set_xticklabels([str(b) for b in batches])
    axes.set_xlabel("batch (images)")
    axes.set_ylabel("median latency per batch (ms)")
    axes.set_title(f"{NETWORKS[name].title}: latency versus batch, {threads} thread(s)")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    figure.savefig(path)
    plt.close(figure)


# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------

def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


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


def build_anvil(args):
    """The anvil binary: --anvil, or built once with `swift build -c release`."""
    if args.anvil:
        return os.path.abspath(args.anvil)
    build = ["swift", "build", "-c", "release"]
    if args.scratch_path:
        build += ["--scratch-path", args.scratch_path]
    log("building Anvil: " + " ".join(build + ["--product", "anvil"]))
    done = subprocess.run(build + ["--product", "anvil"], cwd=REPO, stdout=sys.stderr, stderr=sys.stderr)
    if done.returncode != 0:
        sys.exit("bench_peers: swift build failed")
    bin_path = subprocess.run(build + ["--show-bin-path"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    return os.path.join(bin_path, "anvil")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--models", type=name_list(tuple(NETWORKS)), default=list(NETWORKS),
                        help="networks (default: all): " + ", ".join(NETWORKS))
    parser.add_argument("--threads", type=int_list, default=[1, 2], help="thread counts (default 1,2)")
    parser.add_argument("--batches", type=int_list,
                        help="batches for every network (default: MNIST 1,64; VGG16 1,8; ResNet-50 and MobileNet 1)")
    parser.add_argument("--iterations", type=int, default=10, help="timed runs per engine and configuration (default 10)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs first (default 3)")
    parser.add_argument("--warmup-ms", type=float, default=200.0,
                        help="continue the warm-up runs until this many ms have passed, for every engine "
                             "(default 200: an idle VM's CPUs take tens of ms to reach speed)")
    parser.add_argument("--rounds", type=int, default=1, help="repeat each configuration's engine rotation (default 1)")
    parser.add_argument("--paced", action="store_true",
                        help="interleave the engines run by run (Anvil through `anvil bench --paced`) instead "
                             "of each engine's --iterations runs in a block")
    parser.add_argument("--paced-pause-ms", type=float, default=20.0,
                        help="with --paced, the pause before each turn of a configuration of several threads "
                             "(default 20); the turn then waits until no engine's thread has run for 2 ms "
                             "(ONNX Runtime's worker runs 34-39 ms after a run)")
    parser.add_argument("--paced-rewarm", type=int, default=1,
                        help="with --paced, untimed runs at the start of each engine's turn, which bring its "
                             "data back into the caches (default 1; 0 times every run)")
    parser.add_argument("--paced-rewarm-ms", type=float, default=5.0,
                        help="with --paced, continue a turn's untimed runs until they took this long "
                             "(default 5; 0: just --paced-rewarm runs)")
    parser.add_argument("--engines", type=name_list(ENGINES), default=list(ENGINES), help="default: all three")
    parser.add_argument("--sweep-model", default="mnist", choices=list(NETWORKS) + ["none"],
                        help="network of the latency-versus-batch sweep (default mnist)")
    parser.add_argument("--sweep-batches", type=int_list, default=[1, 2, 4, 8, 16, 32])
    parser.add_argument("--sweep-threads", type=int, help="threads for the sweep (default: the largest of --threads)")
    parser.add_argument("--plot", default=os.path.join(BENCH_DIR, "latency_vs_batch.png"),
                        help="PNG of the sweep (default Data/bench/latency_vs_batch.png)")
    parser.add_argument("--skip", type=name_list(("sweep", "load", "memory", "user", "peak")), default=[],
                        help="leave out some of: sweep, load, memory, user (the user path), peak (the FMA peak)")
    parser.add_argument("--user-models", type=name_list(USER_PATH), default=list(USER_PATH),
                        help="torchvision networks of the user path (default: all): " + ", ".join(USER_PATH))
    parser.add_argument("--isa", type=name_list(tuple(ISA_FLAGS)),
                        help="run Anvil once per instruction set named (e.g. avx2,avx512), forcing its kernels "
                             "with `anvil bench --isa`; sets this CPU lacks are skipped and said so (default: "
                             "one run with the set Anvil picks)")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 1 timed run, no warm-up, 1 load repeat, sweep batches 1,2, and the user "
                             "path at small input sizes; the figures mean nothing")
    parser.add_argument("--load-repeats", type=int, default=5, help="loads timed per engine (default 5)")
    parser.add_argument("--extra-threads", type=int,
                        help="threads for the load and memory measurements (default: the largest of --threads)")
    parser.add_argument("--exporter", choices=("dynamo", "torchscript"), default="dynamo",
                        help="torch.onnx exporter (dynamo falls back to torchscript if it fails)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--anvil", help="an anvil binary to use instead of building one")
    parser.add_argument("--scratch-path", help="swift build --scratch-path (default: SwiftPM's .build)")
    parser.add_argument("--markdown", help="also write the report to this file")
    parser.add_argument("--prepare-only", action="store_true",
                        help="make the VGG16 files of the load and memory measurements, print their paths, stop")
    args = parser.parse_args(argv)
    if args.quick:
        args.iterations, args.warmup, args.warmup_ms, args.rounds, args.load_repeats = 1, 0, 0.0, 1, 1
        args.sweep_batches = [1, 2]
    if args.iterations < 1 or args.warmup < 0 or args.warmup_ms < 0 or args.rounds < 1 or args.load_repeats < 1:
        parser.error("--iterations, --rounds and --load-repeats must be at least 1, --warmup at least 0")
    if args.paced_rewarm < 0:
        parser.error("--paced-rewarm must be at least 0")
    if args.paced_pause_ms < 0 or args.paced_rewarm_ms < 0:
        parser.error("--paced-pause-ms and --paced-rewarm-ms must be at least 0")

    if args.prepare_only:
        for key, path in vgg16_files(args).items():
            print(f"{key}: {path}")
        return 0

    started = time.time()
    context = {"command": " ".join(shlex.quote(a) for a in
                                   ["python3", os.path.relpath(os.path.abspath(sys.argv[0]), REPO)]
                                   + (sys.argv[1:] if argv is None else list(argv))),
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               "load_start": load_average(), "machine": machine_description()}
    cpus = len(os.sched_getaffinity(0))
    if max(args.threads) > cpus:
        log(f"warning: {max(args.threads)} threads on {cpus} usable CPUs")

    import torch
    torch.set_num_interop_threads(1)
    anvil_binary = build_anvil(args) if "anvil" in args.engines else None
    flags = cpu_flags()
    isa_skipped = []
    if args.isa:
        isa_skipped = [isa for isa in args.isa if not all(f in flags for f in ISA_FLAGS[isa])]
        args.isa = [isa for isa in args.isa if isa not in isa_skipped]
        for isa in isa_skipped:
            log(f"--isa {isa} skipped: this CPU lacks {', '.join(ISA_FLAGS[isa])}")
        if not args.isa:
            args.isa = None  # one run with the set Anvil picks
    bench = Bench(args, anvil_binary)
    bench.flags, bench.isa_skipped, bench.peaks = flags, isa_skipped, {}
    if "peak" not in args.skip:
        bench.peaks, problems = measure_fma_peak(flags)
        bench.problems += problems
    measuring_since, cpu_start = time.time(), cpu_seconds()

    sweep = None
    if "sweep" not in args.skip and args.sweep_model != "none":
        sweep = (args.sweep_model, args.sweep_threads or max(args.threads), args.sweep_batches)
    extra_threads = args.extra_threads or max(args.threads)
    context["extra_threads"] = extra_threads

    # Load times first, while this process holds no network yet: on the reference VM, fresh
    # memory is slower to fault in when other processes hold gigabytes (Anvil's VGG16 load
    # 28-38 ms alone, 38-115 ms beside a 3 GB process, which the peers' models made this one).
    load_rows = []
    if "load" not in args.skip:
        try:
            load_rows = measure_load(args, anvil_binary, extra_threads)
        except Exception as error:  # noqa: BLE001
            bench.problems.append(f"load measurement: {type(error).__name__}: {error}")

    configs = []
    for name in args.models:
        for threads in args.threads:
            for batch in args.batches or NETWORKS[name].batches:
                configs.append((name, batch, threads))
    context["configs"] = configs
    order = list(dict.fromkeys(args.models + ([sweep[0]] if sweep else [])))
    for name in order:
        bench.open(name)
        for key in configs:
            if key[0] == name:
                bench.measure(key[1], key[2])
        if sweep and sweep[0] == name:
            for batch in sweep[2]:
                bench.measure(batch, sweep[1])
        bench.close()

    if "user" not in args.skip and anvil_binary:
        try:
            measure_user_path(args, bench)
        except Exception as error:  # noqa: BLE001
            bench.problems.append(f"user path: {type(error).__name__}: {error}")

    plot_file = None
    if sweep:
        plot_file = os.path.abspath(args.plot)
        try:
            plot_sweep(bench, sweep, bench.engines, plot_file)
            log(f"plot: {plot_file}")
        except ImportError as error:
            bench.problems.append(f"no plot: {error} (Scripts/setup/install_bench_deps.sh installs matplotlib)")
            plot_file = None

    memory_rows = []
    if "memory" not in args.skip:
        try:
            memory_rows = measure_memory(args, anvil_binary or "", extra_threads)
        except Exception as error:  # noqa: BLE001
            bench.problems.append(f"memory measurement: {type(error).__name__}: {error}")

    for name, (flops, _) in bench.flops.items():
        reference = NETWORKS[name].reference_gflop * 1e9
        if abs(flops - reference) > 0.02 * reference:
            bench.problems.append(f"{name}: counted {flops / 1e9:.4g} GFLOP per image, published {reference / 1e9:g}")
        anvil = bench.anvil_flops.get(name)
        if anvil and abs(anvil - flops) > 0.03 * flops:
            bench.problems.append(f"{name}: Anvil counts {anvil / 1e9:.4g} GFLOP per image, PyTorch {flops / 1e9:.4g}")

    minutes, seconds = divmod(int(time.time() - started), 60)
    context.update(load_end=load_average(), versions=versions(anvil_binary), duration=f"{minutes} min {seconds} s")
    context["other_load"] = other_load(cpu_start, time.time() - measuring_since, cpus)
    text = report(args, bench, context, sweep, load_rows, memory_rows, plot_file)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(text + "\n")
    return 1 if bench.problems else 0


if __name__ == "__main__":
    sys.exit(main())
