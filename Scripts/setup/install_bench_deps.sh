#!/usr/bin/env bash
# Makes everything the benchmarks (Scripts/benchmarks) need, idempotently:
#   - the bench group in the project venv (Scripts/setup/python_env.sh bench): PyTorch (CPU),
#     torchvision, onnx, onnxscript (torch's dynamo exporter), ONNX Runtime and OpenVINO (the
#     peers), matplotlib (the plot), fastapi and uvicorn (bench_serve.py's ONNX Runtime server)
#   - GNU time (/usr/bin/time -v, peak resident memory), Debian package `time`
# Run the benchmarks with the venv's interpreter: .venv/bin/python Scripts/benchmarks/...
#
# Usage: Scripts/setup/install_bench_deps.sh
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="$("$REPO/Scripts/setup/python_env.sh" --print-python bench)"

if [ ! -x /usr/bin/time ]; then
  echo "install_bench_deps: apt-get install time"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq time >/dev/null
fi

"$PY" - <<'PYTHON'
import matplotlib, onnx, onnxruntime, onnxscript, openvino, torch
print(f"torch {torch.__version__} / onnx {onnx.__version__} / onnxscript {onnxscript.__version__} / "
      f"onnxruntime {onnxruntime.__version__} / openvino {openvino.__version__} / matplotlib {matplotlib.__version__}")
PYTHON
