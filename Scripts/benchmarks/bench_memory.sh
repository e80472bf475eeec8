#!/usr/bin/env bash
# Peak resident memory (`/usr/bin/time -v`, "Maximum resident set size") of a process that
# loads VGG16 and runs it on one image, for each engine:
#   anvil        anvil bench Data/bench/vgg16/model.json --batch 1 --iterations 3 (its weights file)
#   pytorch      python3: torchvision vgg16() built, torch.load + load_state_dict, 2 + 3 runs
#   pytorch-mmap python3: vgg16 built on the meta device, torch.load(mmap=True) +
#                load_state_dict(assign=True), 2 + 3 runs
#   onnxruntime  python3: InferenceSession (all optimizations, sequential, intra-op T), 2 + 3 runs
# and, as baselines, python3 that only imports torch (torch-import) or onnxruntime
# (onnxruntime-import). Every network ends in a softmax and uses the same seeded weights
# (Scripts/benchmarks/bench_peers.py --prepare-only makes the files; this script calls it when one is
# missing). Each result is one line on stdout:
#   memory: <process> <peak RSS> kB <what runs>
#
# Usage: Scripts/benchmarks/bench_memory.sh [--threads T] [--anvil BINARY] [--engines anvil,pytorch,onnxruntime]
#                                [--model-json PATH] [--state-dict PATH] [--onnx PATH]
#   Defaults: 1 thread, the anvil of `swift build -c release` (built if needed), all engines,
#   the files of `Scripts/benchmarks/bench_peers.py --prepare-only`.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
THREADS=1
ANVIL=""
ENGINES="anvil,pytorch,onnxruntime"
MODEL_JSON=""
STATE_DICT=""
ONNX=""
WARMUP=2
ITERATIONS=3

while [ $# -gt 0 ]; do
  case "$1" in
    --threads) THREADS="$2"; shift 2 ;;
    --anvil) ANVIL="$2"; shift 2 ;;
    --engines) ENGINES="$2"; shift 2 ;;
    --model-json) MODEL_JSON="$2"; shift 2 ;;
    --state-dict) STATE_DICT="$2"; shift 2 ;;
    --onnx) ONNX="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench_memory: unknown argument $1" >&2; exit 2 ;;
  esac
done

if [ ! -x /usr/bin/time ]; then
  echo "bench_memory: /usr/bin/time is missing; installing the Debian package 'time'" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq time >/dev/null
fi

if [ -z "$MODEL_JSON" ] || [ -z "$STATE_DICT" ] || [ -z "$ONNX" ]; then
  echo "bench_memory: locating (or making) the VGG16 files with Scripts/benchmarks/bench_peers.py --prepare-only" >&2
  prepared="$(python3 "$REPO/Scripts/benchmarks/bench_peers.py" --prepare-only)"
  [ -n "$MODEL_JSON" ] || MODEL_JSON="$(sed -n 's/^model_json: //p' <<<"$prepared")"
  [ -n "$STATE_DICT" ] || STATE_DICT="$(sed -n 's/^state_dict: //p' <<<"$prepared")"
  [ -n "$ONNX" ] || ONNX="$(sed -n 's/^onnx: //p' <<<"$prepared")"
fi

wants() { [[ ",$ENGINES," == *",$1,"* ]]; }

if wants anvil && [ -z "$ANVIL" ]; then
  (cd "$REPO" && swift build -c release --product anvil >&2)
  ANVIL="$(cd "$REPO" && swift build -c release --show-bin-path)/anvil"
fi

LOG="$(mktemp)"
trap 'rm -f "$LOG"' EXIT
status=0

# measure KEY DESCRIPTION COMMAND...: runs COMMAND under /usr/bin/time -v, prints its peak RSS.
measure() {
  local key="$1" what="$2"
  shift 2
  echo "bench_memory: $key" >&2
  if /usr/bin/time -v -o "$LOG" "$@" >/dev/null 2>"$LOG.err"; then
    local kb
    kb="$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$LOG")"
    echo "memory: $key $kb kB $what"
  else
    echo "bench_memory: $key failed:" >&2
    tail -5 "$LOG.err" >&2
    status=1
  fi
  rm -f "$LOG.err"
}

if wants anvil; then
  measure anvil "\`anvil bench model.json --batch 1 --iterations $ITERATIONS\` (weights.bin mapped)" \
    "$ANVIL" bench "$MODEL_JSON" --batch 1 --threads "$THREADS" --iterations "$ITERATIONS" --warmup "$WARMUP"
fi

if wants pytorch; then
  measure torch-import "python3 -c 'import torch' (baseline)" python3 -c "import torch"
  DRIVER_PYTORCH='
import sys
import torch
scripts, state_dict, threads, runs, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
sys.path.insert(0, scripts)
from anvil_convert.torch_zoo import import_torchvision
torch.set_num_threads(threads)
models = import_torchvision().models
if mode == "mmap":
    with torch.device("meta"):
        model = torch.nn.Sequential(models.vgg16(), torch.nn.Softmax(dim=1))
    model.load_state_dict(torch.load(state_dict, map_location="cpu", weights_only=True, mmap=True), assign=True)
else:
    model = torch.nn.Sequential(models.vgg16(), torch.nn.Softmax(dim=1))
    model.load_state_dict(torch.load(state_dict, map_location="cpu", weights_only=True))
model.eval()
x = torch.rand(1, 3, 224, 224)
with torch.inference_mode():
    for _ in range(runs):
        model(x)
'
  measure pytorch "torchvision \`vgg16()\`, \`torch.load\` + \`load_state_dict\`, $WARMUP + $ITERATIONS runs" \
    python3 -c "$DRIVER_PYTORCH" "$REPO/Scripts" "$STATE_DICT" "$THREADS" "$((WARMUP + ITERATIONS))" copy
  measure pytorch-mmap "\`vgg16()\` on the meta device, \`torch.load(mmap=True)\` + \`load_state_dict(assign=True)\`, $WARMUP + $ITERATIONS runs" \
    python3 -c "$DRIVER_PYTORCH" "$REPO/Scripts" "$STATE_DICT" "$THREADS" "$((WARMUP + ITERATIONS))" mmap
fi

if wants onnxruntime; then
  measure onnxruntime-import "python3 -c 'import numpy, onnxruntime' (baseline)" python3 -c "import numpy, onnxruntime"
  DRIVER_ORT='
import sys
import numpy as np
import onnxruntime as ort
path, threads, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
options = ort.SessionOptions()
options.intra_op_num_threads = threads
options.inter_op_num_threads = 1
options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
session = ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])
x = np.random.default_rng(0).random((1, 3, 224, 224), dtype=np.float32)
feed = {session.get_inputs()[0].name: x}
for _ in range(runs):
    session.run(None, feed)
'
  measure onnxruntime "\`InferenceSession\` (all optimizations), $WARMUP + $ITERATIONS runs" \
    python3 -c "$DRIVER_ORT" "$ONNX" "$THREADS" "$((WARMUP + ITERATIONS))"
fi

exit $status
