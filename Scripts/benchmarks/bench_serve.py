#!/usr/bin/env python3
"""Load figures for `anvil serve`: throughput and latency over REST (KServe v2 JSON) and gRPC
(inference.GRPCInferenceService, raw_input_contents) against ONNX Runtime behind the same two
protocols in Python (FastAPI + uvicorn, and grpcio).

For each network (default ResNet-50 and the Deep MNIST net) the network is built in PyTorch with
seeded random weights and a final softmax, exported once to ONNX (bench_peers.py's builders and
exporter, TorchScript exporter, dynamic batch axis) and converted once to an Anvil model file with
Scripts/convert_onnx.py, so both servers compute the same function with the same weights; files
are cached in Data/bench/serve/. The servers, one after the other, on the same machine:

  - anvil:             anvil serve --model <converted>/model.json --max-batch 16 --max-wait-ms 2, REST
  - anvil-grpc:        the same with --grpc-port, loaded over gRPC
  - anvil-nobatch:     the same with --max-batch 1, REST (not in the default list)
  - onnxruntime:       Scripts/benchmarks/ort_kserve_server.py (FastAPI + uvicorn, one session,
                       intra-op threads = --threads, one run at a time), REST
  - onnxruntime-grpc:  the same with --grpc-port (grpcio, the same session), loaded over gRPC

each with --threads T. A load generator in this process keeps C requests in flight (C threads,
each with its own connection: a keep-alive HTTP/1.1 one sending the same pre-encoded JSON body of
one image, or a gRPC channel sending the same ModelInferRequest with the image in
raw_input_contents; values k/255 to 4 decimals: NHWC for Anvil, as its model file declares, NCHW
for ONNX Runtime), for --seconds after --warmup seconds, at concurrency 1, 8 and 64; throughput
and latency are those of the requests completed within the timed window. Every answer must be 200
(gRPC OK) with the right number of outputs, else it counts as failed; the first answers of every
server are compared with ONNX Runtime's (the same softmax, to 1e-4). Reported: requests per second (one image
each), p50 and p99 latency, failed requests, and the server's peak resident memory (VmRSS of the
server process, sampled every 0.5 s). The load generator shares the CPUs with the server: on a
2-core machine both compete, for every server alike.

Memory over time (--soak-seconds S, default 600; 0 skips): Anvil with dynamic batching serving the
--memory-model at concurrency 8 for S seconds over --soak-protocol (grpc by default, or rest),
resident memory sampled every 5 s: first sample after warm-up, median, last, maximum.

Output: Markdown on stdout (and --markdown PATH) with the CPU (model, flags), date, commit and
versions; progress on stderr.

Usage:
    Scripts/setup/install_bench_deps.sh
    .venv/bin/python Scripts/benchmarks/bench_serve.py                                   # the full run (~25 min)
    .venv/bin/python Scripts/benchmarks/bench_serve.py --quick                           # smoke run: figures mean nothing
    .venv/bin/python Scripts/benchmarks/bench_serve.py --models mnist --concurrency 1,8 --seconds 5 --soak-seconds 0
Options: --models resnet50,mnist  --concurrency 1,8,64  --seconds S (15)  --warmup S (3)  --threads T (2)
--max-batch B (16)  --max-wait-ms W (2)  --soak-seconds S (600; --duration is the same)  --soak-protocol grpc|rest
--memory-model NAME (resnet50)  --servers anvil,anvil-grpc,onnxruntime,onnxruntime-grpc (also anvil-nobatch)
--anvil BINARY (skip the build)  --scratch-path DIR
"""

import argparse
import datetime
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peerbench import BENCH_DIR, REPO  # noqa: E402
from peerbench.engines import build_anvil  # noqa: E402
from peerbench.machine import machine_description, versions  # noqa: E402
from peerbench.networks import NETWORKS, build_torch_network, export_onnx  # noqa: E402

SERVE_DIR = os.path.join(BENCH_DIR, "serve")
SERVERS = ("anvil", "anvil-grpc", "anvil-nobatch", "onnxruntime", "onnxruntime-grpc")
DEFAULT_SERVERS = ("anvil", "anvil-grpc", "onnxruntime", "onnxruntime-grpc")
SERVER_NAMES = {"anvil": "Anvil REST (batching)", "anvil-grpc": "Anvil gRPC (batching)", "anvil-nobatch": "Anvil REST (--max-batch 1)",
                "onnxruntime": "ONNX Runtime REST (FastAPI)", "onnxruntime-grpc": "ONNX Runtime gRPC (grpcio)"}
# The peer a row is compared with: ONNX Runtime over the same protocol.
PEERS = {"anvil": "onnxruntime", "anvil-nobatch": "onnxruntime", "anvil-grpc": "onnxruntime-grpc"}


def log(message):
    print(f"[bench_serve] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------

def prepare(name, anvil, seed=1):
    """(onnx path, Anvil model.json path) for network `name`, made once and cached; the converter
    runs the `anvil` binary given (no build of its own)."""
    network = NETWORKS[name]
    directory = os.path.join(SERVE_DIR, f"{name}.seed{seed}")
    onnx_file = os.path.join(directory, f"{name}.onnx")
    converted = os.path.join(directory, "anvil")
    model_json = os.path.join(converted, "model.json")
    os.makedirs(directory, exist_ok=True)
    if not os.path.exists(onnx_file):
        log(f"exporting {name} to ONNX")
        export_onnx(build_torch_network(name, seed), network, onnx_file, "torchscript")
    if not os.path.exists(model_json):
        log(f"converting {name} with Scripts/convert_onnx.py")
        subprocess.run([sys.executable, os.path.join(REPO, "Scripts", "convert_onnx.py"), onnx_file, converted],
                       check=True, stdout=sys.stderr, env=dict(os.environ, ANVIL=anvil))
    return onnx_file, model_json


def request_body(network, layout):
    """One image as a KServe v2 JSON request: values k/255 to 4 decimals, in `layout`."""
    c, h, w = network.input_chw
    index = np.arange(h * w * c, dtype=np.int64)
    nhwc = np.round(((index * 7919) % 255) / 255, 4).reshape(1, h, w, c)
    if layout == "NCHW":
        data, shape = nhwc.transpose(0, 3, 1, 2), [1, c, h, w]
    else:
        data, shape = nhwc, [1, h, w, c]
    return data, shape


def encode(name, shape, data):
    values = ",".join(f"{v:.4f}".rstrip("0").rstrip(".") or "0" for v in data.ravel().tolist())
    return (f'{{"inputs":[{{"name":"{name}","shape":{json.dumps(shape)},"datatype":"FP32","data":[{values}]}}]}}').encode()


# ---------------------------------------------------------------------------------------
# Servers
# ---------------------------------------------------------------------------------------

def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get(port, path, timeout=5):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


class Server:
    """A server process: started, waited for (ready), its RSS sampled, stopped with SIGTERM."""

    def __init__(self, kind, args, anvil, name, onnx_file, model_json):
        self.port = free_port()
        self.kind = kind
        self.grpc_port = free_port() if kind.endswith("-grpc") else None
        grpc = ["--grpc-port", str(self.grpc_port)] if self.grpc_port else []
        if kind.startswith("anvil"):
            command = [anvil, "serve", "--model", model_json, "--name", name, "--port", str(self.port),
                       "--threads", str(args.threads), "--log-level", "warning",
                       "--max-batch", "1" if kind == "anvil-nobatch" else str(args.max_batch),
                       "--max-wait-ms", str(args.max_wait_ms)] + grpc
        else:
            command = [sys.executable, os.path.join(HERE, "ort_kserve_server.py"), "--model", onnx_file, "--name", name,
                       "--port", str(self.port), "--threads", str(args.threads)] + grpc
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 300
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"{kind} exited: {self.process.stderr.read()[-2000:]}")
            try:
                if get(self.port, "/v2/health/ready", timeout=1)[0] == 200:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError(f"{kind} did not become ready")
            time.sleep(0.2)
        self.metadata = json.loads(get(self.port, f"/v2/models/{name}")[1])

    def rss_mib(self):
        try:
            with open(f"/proc/{self.process.pid}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return float("nan")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# ---------------------------------------------------------------------------------------
# Load
# ---------------------------------------------------------------------------------------

def rest_caller(port, path, body, expected_values):
    """A client with its own keep-alive connection: call() sends `body`, returns the answer's
    values (a list) or None if it failed."""
    state = {"connection": None}

    def call():
        try:
            if state["connection"] is None:
                state["connection"] = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            state["connection"].request("POST", path, body, {"Content-Type": "application/json"})
            response = state["connection"].getresponse()
            answer = response.read()
            if response.status != 200:
                return None
            values = json.loads(answer)["outputs"][0]["data"]
            return values if len(values) == expected_values else None
        except (OSError, http.client.HTTPException, ValueError, KeyError):
            state["connection"] = None
            return None
    return call


def grpc_request(model, name, shape, data):
    """A ModelInferRequest of one image, its values in raw_input_contents."""
    from tritonclient.grpc import service_pb2
    tensor = service_pb2.ModelInferRequest.InferInputTensor(name=name, datatype="FP32", shape=shape)
    return service_pb2.ModelInferRequest(model_name=model, inputs=[tensor],
                                         raw_input_contents=[np.ascontiguousarray(data, dtype=np.float32).tobytes()])


def grpc_caller(port, request, expected_values):
    """A client with its own gRPC channel (HTTP/2 connection): call() sends `request`, returns
    the answer's raw output bytes or None if it failed."""
    import grpc
    from tritonclient.grpc import service_pb2_grpc
    limit = [("grpc.max_receive_message_length", 1 << 30), ("grpc.max_send_message_length", 1 << 30)]
    stub = service_pb2_grpc.GRPCInferenceServiceStub(grpc.insecure_channel(f"127.0.0.1:{port}", options=limit))

    def call():
        try:
            response = stub.ModelInfer(request, timeout=120)
        except grpc.RpcError:
            return None
        raw = response.raw_output_contents
        return raw[0] if len(raw) == 1 and len(raw[0]) == expected_values * 4 else None
    return call


def answer_values(answer):
    """A first answer as a float array, whichever protocol brought it."""
    if isinstance(answer, bytes):
        return np.frombuffer(answer, dtype=np.float32)
    return np.array(answer, dtype=np.float32)


def load(make_caller, concurrency, warmup, seconds, server, sample_every=0.5, samples=None):
    """Keeps `concurrency` requests in flight for warmup + seconds (then lets those in flight
    finish), each client calling its own `make_caller()`; returns (latencies in ms of the
    requests completed in the timed window, failures over the whole run, completed requests/s in
    the window, peak RSS MiB, first answer)."""
    start = time.perf_counter()
    timed_from = start + warmup
    stop_at = timed_from + seconds
    latencies, failures, first = [], [0], []
    lock = threading.Lock()

    def client():
        call = make_caller()
        mine, failed = [], 0
        while True:
            began = time.perf_counter()
            if began >= stop_at:
                break
            answer = call()
            ok = answer is not None
            if ok and not first:
                with lock:
                    if not first:
                        first.append(answer)
            ended = time.perf_counter()
            # A request counts where it completes: in the timed window, or (a failure) at all.
            if not ok:
                failed += 1
            elif timed_from <= ended <= stop_at:
                mine.append((ended - began) * 1000)
        with lock:
            latencies.extend(mine)
            failures[0] += failed

    threads = [threading.Thread(target=client, daemon=True) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    peak = 0.0
    while any(thread.is_alive() for thread in threads):
        rss = server.rss_mib()
        peak = max(peak, rss)
        if samples is not None and time.perf_counter() >= timed_from:
            samples.append((time.perf_counter() - timed_from, rss))
        time.sleep(sample_every)
    for thread in threads:
        thread.join()
    return latencies, failures[0], len(latencies) / seconds, peak, first[0] if first else None


def callers(server, model, input_name, shape, data, expected):
    """A factory of clients of `server` in the protocol its kind says."""
    if server.grpc_port:
        request = grpc_request(model, input_name, shape, data)
        return lambda: grpc_caller(server.grpc_port, request, expected)
    body = encode(input_name, shape, data)
    return lambda: rest_caller(server.port, f"/v2/models/{model}/infer", body, expected)


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("--models", default="resnet50,mnist")
    parser.add_argument("--concurrency", default="1,8,64")
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--warmup", type=float, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-batch", type=int, default=16)
    parser.add_argument("--max-wait-ms", type=float, default=2)
    parser.add_argument("--soak-seconds", "--duration", dest="duration", type=float, default=600)
    parser.add_argument("--soak-protocol", choices=("grpc", "rest"), default="grpc")
    parser.add_argument("--memory-model", default="resnet50")
    parser.add_argument("--servers", default=",".join(DEFAULT_SERVERS))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--anvil")
    parser.add_argument("--scratch-path")
    parser.add_argument("--markdown")
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.warmup, args.duration = 2, 0.5, min(args.duration, 10)
    models = [m for m in args.models.split(",") if m]
    levels = [int(c) for c in args.concurrency.split(",") if c]
    servers = [s for s in args.servers.split(",") if s]
    for model in models:
        if model not in NETWORKS:
            sys.exit(f"bench_serve: unknown network {model}")
    for server in servers:
        if server not in SERVERS:
            sys.exit(f"bench_serve: unknown server {server}; choose from {', '.join(SERVERS)}")

    anvil = build_anvil(args)
    started = datetime.datetime.now(datetime.timezone.utc)
    rows = {}
    checks = []
    for model in models:
        network = NETWORKS[model]
        onnx_file, model_json = prepare(model, anvil)
        answers = {}
        for kind in servers:
            log(f"{model}: starting {SERVER_NAMES[kind]}")
            server = Server(kind, args, anvil, model, onnx_file, model_json)
            tensor = server.metadata["inputs"][0]
            data, shape = request_body(network, "NCHW" if kind.startswith("onnxruntime") else "NHWC")
            if kind.startswith("anvil") and tensor["shape"][1:] != shape[1:]:
                sys.exit(f"bench_serve: {model}'s Anvil input is {tensor['shape']}, expected [-1] + {shape[1:]}")
            outputs = server.metadata["outputs"][0]["shape"][1:]
            expected = int(np.prod(outputs)) if outputs and all(d > 0 for d in outputs) else 1000
            make_caller = callers(server, model, tensor["name"], shape, data, expected)
            try:
                for concurrency in levels:
                    latencies, failed, throughput, peak, first = load(make_caller, concurrency, args.warmup, args.seconds, server)
                    if first is not None:
                        answers.setdefault(kind, first)
                    rows[(model, kind, concurrency)] = (throughput, percentile(latencies, 50), percentile(latencies, 99),
                                                        failed, len(latencies), peak)
                    log(f"{model} {kind} c={concurrency}: {throughput:.1f} req/s, p50 {percentile(latencies, 50):.1f} ms, "
                        f"p99 {percentile(latencies, 99):.1f} ms, {failed} failed, peak RSS {peak:.0f} MiB")
            finally:
                server.stop()
        reference = answers.get("onnxruntime", answers.get("onnxruntime-grpc"))
        if reference is not None:
            for kind in answers:
                if kind.startswith("onnxruntime"):
                    continue
                difference = float(np.max(np.abs(answer_values(answers[kind]) - answer_values(reference))))
                checks.append(f"{network.title}, {SERVER_NAMES[kind]}: largest difference from ONNX Runtime's answer {difference:.2e}")
                if difference > 1e-4:
                    log(f"WARNING: {model} {kind}: the answers differ by {difference}")

    memory = []
    if args.duration > 0 and "anvil" in servers:
        model = args.memory_model
        network = NETWORKS[model]
        onnx_file, model_json = prepare(model, anvil)
        kind = "anvil-grpc" if args.soak_protocol == "grpc" else "anvil"
        log(f"memory: {model}, Anvil with batching over {args.soak_protocol}, concurrency 8, {args.duration:.0f} s")
        server = Server(kind, args, anvil, model, onnx_file, model_json)
        data, shape = request_body(network, "NHWC")
        outputs = server.metadata["outputs"][0]["shape"][1:]
        make_caller = callers(server, model, server.metadata["inputs"][0]["name"], shape, data, int(np.prod(outputs)))
        try:
            latencies, failed, throughput, peak, _ = load(make_caller, 8, args.warmup * 5, args.duration, server,
                                                          sample_every=5, samples=memory)
        finally:
            server.stop()
        memory_summary = (model, throughput, len(latencies), failed, peak)

    out = ["## Serving", ""]
    out.append(f"`python3 Scripts/benchmarks/bench_serve.py {' '.join(argv if argv is not None else sys.argv[1:])}`, "
               f"{started:%Y-%m-%d %H:%M} UTC. {machine_description()}. {versions(anvil)}; "
               f"FastAPI {__import__('fastapi').__version__}, uvicorn {__import__('uvicorn').__version__}, "
               f"grpcio {__import__('grpc').__version__}.")
    out.append("")
    out.append(f"One image per request on loopback: REST is KServe v2 JSON over HTTP/1.1 keep-alive, gRPC a ModelInferRequest with "
               f"the image in raw_input_contents over one HTTP/2 channel per client; --threads {args.threads} for "
               f"every server; Anvil batching: --max-batch {args.max_batch} --max-wait-ms {args.max_wait_ms:g}; "
               f"{args.seconds:g} s timed after {args.warmup:g} s of warm-up per row; the load generator (Python threads) "
               "runs on the same cores. Peak RSS: the server process.")
    out.append("")
    for model in models:
        network = NETWORKS[model]
        out += [f"### {network.title}", "",
                "| server | clients | requests/s | p50 ms | p99 ms | failed | peak RSS MiB | requests/s vs ONNX Runtime, same protocol |",
                "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for kind in servers:
            for concurrency in levels:
                row = rows.get((model, kind, concurrency))
                if row is None:
                    continue
                throughput, p50, p99, failed, count, peak = row
                peer = rows.get((model, PEERS.get(kind), concurrency))
                ratio = f"{throughput / peer[0]:.2f}×" if peer and peer[0] > 0 else ""
                out.append(f"| {SERVER_NAMES[kind]} | {concurrency} | {throughput:.1f} | {p50:.1f} | {p99:.1f} | {failed} | "
                           f"{peak:.0f} | {ratio} |")
        out.append("")
    if checks:
        out += ["Same answers: " + "; ".join(checks) + ".", ""]
    if memory:
        model, throughput, count, failed, peak = memory_summary
        values = [rss for _, rss in memory]
        out += [f"### Resident memory over {args.duration / 60:g} minutes", "",
                f"Anvil (batching) serving {NETWORKS[model].title} to 8 clients over {args.soak_protocol}: {count} requests "
                f"({throughput:.1f}/s), {failed} failed. VmRSS sampled every 5 s: first {values[0]:.0f} MiB, "
                f"median {statistics.median(values):.0f}, last {values[-1]:.0f}, max {max(values):.0f} MiB "
                f"({len(values)} samples). Each minute: "
                + ", ".join(f"{rss:.0f}" for at, rss in memory if int(at) % 60 < 5) + " MiB.", ""]
    text = "\n".join(out)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(text + "\n")


if __name__ == "__main__":
    main()
