"""How each engine runs one configuration (network, batch, threads) of the same ONNX file.

Engines: Anvil (`anvil bench` in a subprocess), ONNX Runtime, OpenVINO with float32 forced and
OpenVINO as it comes (its default precision: bfloat16 on CPUs with avx512_bf16 or AMX), and
PyTorch eager (off by default). Each engine has `key`, `title`, `block(case, settings)` (warm-up
and timed runs in one block → Timing), `turns(case, settings)` (for --paced: one timed
prediction per `run()`), `forget()` (drop what it holds for the last network) and `ran()` (what it
ran: version, instruction set, precision)."""

import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass

from paced_anvil import PacedAnvil

from . import REPO, log
from .measure import Timing, time_once, timed_loop, warm_up

ENGINE_KEYS = ("anvil", "onnxruntime", "openvino-f32", "openvino", "pytorch")
DEFAULT_ENGINES = ("anvil", "onnxruntime", "openvino-f32", "openvino")
TITLES = {"anvil": "Anvil", "onnxruntime": "ONNX Runtime", "openvino-f32": "OpenVINO f32",
          "openvino": "OpenVINO default", "pytorch": "PyTorch"}

# Instruction sets `anvil bench --isa` forces, and the /proc/cpuinfo flags each needs.
ISA_FLAGS = {"scalar": (), "avx2": ("avx2", "fma"), "avx512": ("avx512f",)}


@dataclass
class Case:
    """One configuration: the network, its ONNX file, what Anvil opens (the same file, or the
    zoo name where Anvil cannot open the file), batch, threads and the input (NCHW)."""
    network: object
    onnx_file: str
    anvil_model: str
    batch: int
    threads: int
    x: object
    torch_model: object = None

    @property
    def label(self):
        return f"{self.network.name} batch {self.batch}, {self.threads} thread(s)"


# ---------------------------------------------------------------------------------------
# Anvil
# ---------------------------------------------------------------------------------------

ANVIL_MEDIAN = re.compile(r"^median_ms: ([0-9.]+) \(min ([0-9.]+), max ([0-9.]+)\) over (\d+) runs", re.M)
ANVIL_LOAD = re.compile(r"^load\+compile_ms: ([0-9.]+)", re.M)
ANVIL_GFLOPS = re.compile(r"^gflops: ([0-9.]+)", re.M)
ANVIL_THREADS = re.compile(r"; threads (\d+)$", re.M)
ANVIL_ISA = re.compile(r"^isa: (.*)$", re.M)
ANVIL_PASSES = re.compile(r"^batch_passes: (.*)$", re.M)
ANVIL_CACHE = re.compile(r"^weight_cache: (.*)$", re.M)


def run_anvil(binary, model, batch, threads, iterations, warmup, extra=(), warmup_ms=0.0):
    """Runs `anvil bench`; returns (Timing, load+compile ms, Anvil's GFLOP/s, its stdout)."""
    command = [binary, "bench", model, "--batch", str(batch), "--threads", str(threads),
               "--iterations", str(iterations), "--warmup", str(warmup), "--warmup-ms", str(warmup_ms), *extra]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=3600)
    except subprocess.TimeoutExpired:
        return Timing(error="anvil bench timed out after 1 h"), None, None, ""
    match = ANVIL_MEDIAN.search(done.stdout)
    if done.returncode != 0 or not match:
        message = (done.stderr.strip() or done.stdout.strip()).splitlines()
        return (Timing(error=f"anvil bench exited {done.returncode}: {message[-1] if message else ''}"),
                None, None, done.stdout)
    seen = ANVIL_THREADS.search(done.stdout)
    if seen and int(seen.group(1)) != threads:
        return Timing(error=f"anvil ran {seen.group(1)} threads, asked {threads}"), None, None, done.stdout
    load, gflops = ANVIL_LOAD.search(done.stdout), ANVIL_GFLOPS.search(done.stdout)
    timing = Timing(float(match.group(1)), float(match.group(2)), float(match.group(3)), int(match.group(4)))
    return timing, float(load.group(1)) if load else None, float(gflops.group(1)) if gflops else None, done.stdout


def build_anvil(args):
    """The anvil binary: `args.anvil`, or built once with `swift build -c release`
    (`--scratch-path args.scratch_path` when given)."""
    if args.anvil:
        return os.path.abspath(args.anvil)
    build = ["swift", "build", "-c", "release"]
    if args.scratch_path:
        build += ["--scratch-path", args.scratch_path]
    log("building Anvil: " + " ".join(build + ["--product", "anvil"]))
    if subprocess.run(build + ["--product", "anvil"], cwd=REPO, stdout=sys.stderr, stderr=sys.stderr).returncode:
        sys.exit("bench_peers: swift build failed")
    bin_path = subprocess.run(build + ["--show-bin-path"], cwd=REPO, capture_output=True, text=True,
                              check=True).stdout.strip()
    return os.path.join(bin_path, "anvil")


def anvil_model_for(binary, network, onnx_file):
    """What Anvil should open for `network`: the ONNX file when `anvil bench` can run it, else the
    zoo name. Returns (model argument, None or the reason the file was refused)."""
    timing, _, _, _ = run_anvil(binary, onnx_file, 1, 1, 1, 0)
    if timing.ok:
        return onnx_file, None
    return network.name, timing.error


class AnvilEngine:
    """`anvil bench <file.onnx or zoo name> --batch N --threads T ...` in a subprocess: its own
    `median_ms` line. With `isa`, its kernels forced to that instruction set (`--isa`)."""

    def __init__(self, binary, isa=None):
        self.binary, self.isa = binary, isa
        self.key = f"anvil:{isa}" if isa else "anvil"
        self.title = f"Anvil ({isa})" if isa else "Anvil"
        self.isa_seen = set()      # the `isa:` lines it printed
        self.flops = {}            # network -> FLOPs per image by Anvil's own count
        self.passes = {}           # (network, batch) -> its `batch_passes:` line, when it splits the batch

    def extra(self):
        return ["--isa", self.isa] if self.isa else []

    def note(self, case, out):
        """What `anvil bench` said besides its times: instruction set, batch passes, FLOP count."""
        out = out or ""
        isa = ANVIL_ISA.search(out)
        if isa:
            self.isa_seen.add(isa.group(1).split(" (the CPU")[0])
        passes = ANVIL_PASSES.search(out)
        if passes and not passes.group(1).startswith("none"):
            self.passes[(case.network.name, case.batch)] = passes.group(1)
        gflops, median = ANVIL_GFLOPS.search(out), ANVIL_MEDIAN.search(out)
        if gflops and median and case.network.name not in self.flops:
            self.flops[case.network.name] = float(gflops.group(1)) * 1e9 * float(median.group(1)) / 1000 / case.batch

    def block(self, case, settings):
        timing, _, _, out = run_anvil(self.binary, case.anvil_model, case.batch, case.threads, settings.iterations,
                                      settings.warmup, extra=self.extra(), warmup_ms=settings.warmup_ms)
        self.note(case, out)
        return timing

    def turns(self, case, settings):
        return AnvilTurns(self, case, settings)

    def forget(self):
        pass

    def ran(self):
        return ("float32; `isa: " + ("; ".join(sorted(self.isa_seen)) or "not seen") + "` (what `anvil bench` "
                "printed: the set its C kernels ran)")


class AnvilTurns:
    """`anvil bench --paced` of one configuration, compiled and warmed up."""

    def __init__(self, engine, case, settings):
        self.engine, self.case = engine, case
        self.paced = PacedAnvil(engine.binary, [case.anvil_model, "--batch", str(case.batch), "--threads",
                                                str(case.threads), *engine.extra()],
                                warmup=settings.warmup, warmup_ms=settings.warmup_ms)
        self.pids = [self.paced.process.pid]
        seen = ANVIL_THREADS.search("\n".join(self.paced.header))
        if seen and int(seen.group(1)) != case.threads:
            self.paced.close()
            raise RuntimeError(f"anvil ran {seen.group(1)} threads, asked {case.threads}")

    def run(self):
        return self.paced.run()

    def close(self):
        self.engine.note(self.case, "\n".join(self.paced.header) + "\n" + self.paced.close())


# ---------------------------------------------------------------------------------------
# The engines in this process
# ---------------------------------------------------------------------------------------

class InProcessTurns:
    """A prediction callable after the warm-up: `run()` times one call."""

    def __init__(self, call, settings):
        warm_up(call, settings.warmup, settings.warmup_ms)
        self.call, self.pids = call, []

    def run(self):
        return time_once(self.call)

    def close(self):
        pass


class InProcessEngine:
    """An engine run through Python in this process: subclasses give `call(case)`, one prediction."""

    def block(self, case, settings):
        return timed_loop(self.call(case), settings.warmup, settings.iterations, settings.warmup_ms)

    def turns(self, case, settings):
        return InProcessTurns(self.call(case), settings)


def ort_session(path, threads):
    """An ONNX Runtime session: CPU provider, intra-op `threads`, inter-op 1, sequential, all
    graph optimizations."""
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])


class OnnxRuntimeEngine(InProcessEngine):
    key, title = "onnxruntime", TITLES["onnxruntime"]

    def __init__(self):
        self.sessions = {}   # (file, threads) -> session, for the current network

    def call(self, case):
        session = self.sessions.get((case.onnx_file, case.threads))
        if session is None:
            session = self.sessions[(case.onnx_file, case.threads)] = ort_session(case.onnx_file, case.threads)
        feed = {session.get_inputs()[0].name: case.x}
        return lambda: session.run(None, feed)

    def forget(self):
        self.sessions = {}

    def ran(self):
        import onnxruntime
        return (f"ONNX Runtime {onnxruntime.__version__}, CPUExecutionProvider, float32 (the file's); its MLAS "
                "kernels pick the instruction set at run time and do not report it")


class OpenVinoEngine(InProcessEngine):
    """OpenVINO's CPU plugin, latency hint, one stream, T inference threads; `precision` "f32"
    forces float32 (`INFERENCE_PRECISION_HINT`), None leaves OpenVINO's default. The model's batch
    is made static (`reshape`) before compiling, one compiled model per batch and thread count."""

    def __init__(self, precision=None):
        import openvino as ov
        self.precision = precision
        self.key = "openvino-f32" if precision == "f32" else "openvino"
        self.title = TITLES[self.key]
        # The plugin reads the CPUs it may use when it loads: load it now, before any pinning.
        self.core = ov.Core()
        self.capabilities = self.core.get_property("CPU", "OPTIMIZATION_CAPABILITIES")
        self.models, self.compiled = {}, {}
        self.precisions = set()    # INFERENCE_PRECISION_HINT read back from each compiled model
        self.primitives = Counter()  # the kernels of its convolution and matrix layers

    def config(self, threads):
        config = {"INFERENCE_NUM_THREADS": threads, "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1}
        if self.precision:
            config["INFERENCE_PRECISION_HINT"] = self.precision
        return config

    def request(self, case):
        key = (case.onnx_file, case.batch, case.threads)
        if key not in self.compiled:
            model = self.models.get(case.onnx_file)
            if model is None:
                model = self.models[case.onnx_file] = self.core.read_model(case.onnx_file)
            model.reshape([case.batch, *case.network.input_chw])
            compiled = self.core.compile_model(model, "CPU", self.config(case.threads))
            self.precisions.add(str(compiled.get_property("INFERENCE_PRECISION_HINT")))
            for op in compiled.get_runtime_model().get_ordered_ops():
                info = op.get_rt_info()
                if "layerType" in info and info["layerType"].astype(str) in ("Convolution", "FullyConnected", "MatMul"):
                    self.primitives[info["primitiveType"].astype(str)] += 1
            self.compiled[key] = (compiled, compiled.create_infer_request())
        return self.compiled[key][1]

    def call(self, case):
        request, x = self.request(case), case.x
        return lambda: request.infer({0: x}, share_inputs=True)

    def forget(self):
        self.models, self.compiled = {}, {}

    def ran(self):
        import openvino as ov
        hint = f"`INFERENCE_PRECISION_HINT` {self.precision}" if self.precision else "no precision hint"
        kernels = ", ".join(f"{name} ×{count}" for name, count in self.primitives.most_common(4))
        return (f"OpenVINO {ov.get_version().split('-')[0]}, {hint}; ran "
                + (" / ".join(sorted(p.replace("<Type: ", "").rstrip(">").strip("'") for p in self.precisions)) or "–")
                + f" (read back); convolution and matrix kernels: {kernels or '–'}")


class PyTorchEngine(InProcessEngine):
    """PyTorch eager on the network's own module: `torch.set_num_threads(T)`, `inference_mode`."""
    key, title = "pytorch", TITLES["pytorch"]

    def call(self, case):
        import torch
        torch.set_num_threads(case.threads)
        tensor, model = torch.from_numpy(case.x), case.torch_model

        def run():
            with torch.inference_mode():
                model(tensor)
        return run

    def forget(self):
        pass

    def ran(self):
        import torch
        return f"PyTorch {torch.__version__} eager, float32, NCHW, inter-op threads 1"


def make_engines(keys, anvil_binary, isas=None):
    """The engines named by `keys` (ENGINE_KEYS); Anvil once per instruction set in `isas`."""
    engines = []
    for key in keys:
        if key == "anvil":
            engines += [AnvilEngine(anvil_binary, isa) for isa in isas] if isas else [AnvilEngine(anvil_binary)]
        elif key == "onnxruntime":
            engines.append(OnnxRuntimeEngine())
        elif key == "openvino-f32":
            engines.append(OpenVinoEngine("f32"))
        elif key == "openvino":
            engines.append(OpenVinoEngine(None))
        elif key == "pytorch":
            engines.append(PyTorchEngine())
    return engines
