"""What a network costs besides time: how long each engine takes to load its ONNX file (warm
page cache) and the peak resident memory of a process that loads it and runs it on one image.

The memory of each engine is measured in a child process of its own (`python -m
peerbench.resources child ...` for the Python engines, `anvil bench` for Anvil), its peak from
GNU time, beside baselines of the interpreter that only imports the engine's module."""

import gc
import os
import subprocess
import sys
import tempfile
import time

from . import SCRIPTS
from .engines import Case, make_engines, run_anvil
from .measure import Timing
from .networks import NETWORKS, bench_input


def warm_page_cache(path):
    with open(path, "rb") as handle:
        while handle.read(1 << 24):
            pass


def measure_load(engines, network, onnx_file, anvil_model, threads, repeats):
    """Rows of (engine title, what is timed, Timing): each engine's load of `onnx_file`."""
    warm_page_cache(onnx_file)
    rows = []
    for engine in engines:
        times, error, what = [], "", ""
        if engine.key.startswith("anvil"):
            what = f"`anvil bench {'file.onnx' if anvil_model == onnx_file else anvil_model}`: its `load+compile_ms`"
            for _ in range(repeats):
                timing, load, _, out = run_anvil(engine.binary, anvil_model, 1, threads, 1, 0, extra=engine.extra())
                if not timing.ok or load is None:
                    error = timing.error or "no load+compile_ms line"
                    break
                times.append(load)
                # Anvil keeps reordered weights in a cache of its own; a load that mapped them says so.
                cache = next((line for line in out.splitlines() if line.startswith("weight_cache: ")), "")
                if cache and not cache.startswith("weight_cache: 0 mapped"):
                    what = what.split(" (")[0] + f" ({cache})"
        elif engine.key == "onnxruntime":
            from .engines import ort_session
            what = "`InferenceSession` creation (all graph optimizations)"
            for _ in range(repeats):
                start = time.perf_counter()
                session = ort_session(onnx_file, threads)
                times.append((time.perf_counter() - start) * 1000)
                del session
                gc.collect()
        elif engine.key.startswith("openvino"):
            what = "`read_model` + `reshape` + `compile_model`"
            for _ in range(repeats):
                start = time.perf_counter()
                model = engine.core.read_model(onnx_file)
                model.reshape([1, *network.input_chw])
                compiled = engine.core.compile_model(model, "CPU", engine.config(threads))
                times.append((time.perf_counter() - start) * 1000)
                del compiled, model
                gc.collect()
        else:
            continue
        rows.append((engine.title, what, Timing.of(times, error)))
    return rows


def peak_rss_kb(command, env=None):
    """(peak resident memory in kB of `command`'s process, '' or the end of its stderr when it failed).

    Through GNU time (`/usr/bin/time`, Debian's `time`): a process forked from this one keeps this
    one's peak as its own across exec, so the child's rusage would report this process's size."""
    with tempfile.NamedTemporaryFile(mode="w+", suffix=".time") as peak, tempfile.TemporaryFile(mode="w+") as errors:
        done = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", peak.name, *command], stdout=subprocess.DEVNULL,
                              stderr=errors, env=env)
        if done.returncode != 0:
            errors.seek(0)
            lines = errors.read().strip().splitlines()
            return None, f"exited {done.returncode}: {lines[-1] if lines else ''}"
        return int(peak.read().strip().splitlines()[-1]), ""


def measure_memory(engines, network, onnx_file, anvil_model, threads, runs=5):
    """Rows of (process, peak kB or None, what runs or why it failed)."""
    env = dict(os.environ, PYTHONPATH=os.path.join(SCRIPTS, "benchmarks"))
    child = [sys.executable, "-m", "peerbench.resources", "child"]
    rows, baselines = [], {}
    for engine in engines:
        if engine.key.startswith("anvil"):
            kb, error = peak_rss_kb([engine.binary, "bench", anvil_model, "--batch", "1", "--threads", str(threads),
                                     "--iterations", str(runs - 2), "--warmup", "2", "--warmup-ms", "0", *engine.extra()])
            rows.append((engine.title, kb, error or f"`anvil bench`, batch 1, {runs} runs"))
            continue
        module = {"onnxruntime": "onnxruntime", "openvino-f32": "openvino", "openvino": "openvino",
                  "pytorch": "torch"}[engine.key]
        if module not in baselines:
            baselines[module] = peak_rss_kb([sys.executable, "-c", f"import numpy, {module}"])
        kb, error = peak_rss_kb(child + [engine.key, network.name, onnx_file, str(threads), str(runs)], env=env)
        rows.append((engine.title, kb, error or f"load, batch 1, {runs} runs"))
    for module, (kb, error) in baselines.items():
        rows.append((f"python + `import {module}` (baseline)", kb, error or "the interpreter and the module alone"))
    return rows


def child(key, name, onnx_file, threads, runs):
    """The process measure_memory times for a Python engine: load, then `runs` predictions."""
    network = NETWORKS[name]
    engine, = make_engines([key], None)
    torch_model = None
    if key == "pytorch":
        from .networks import build_torch_network
        torch_model = build_torch_network(name, 0)
    case = Case(network, onnx_file, onnx_file, 1, int(threads), bench_input(1, network.input_chw), torch_model)
    call = engine.call(case)
    for _ in range(int(runs)):
        call()


if __name__ == "__main__" and len(sys.argv) == 7 and sys.argv[1] == "child":
    child(*sys.argv[2:])
