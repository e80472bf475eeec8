#!/usr/bin/env bash
# Makes everything Scripts/benchmarks/bench_peers.py, bench_serve.py and bench_memory.sh need importable or
# runnable, idempotently:
#   - PyTorch (CPU) and numpy           Scripts/setup/install_torch.sh (the /opt/wheels CPU wheel when present)
#   - torchvision (model definitions)   Scripts/setup/install_torchvision.sh (--no-deps, paired with that torch)
#   - onnx, onnxscript                  ONNX export (torch's dynamo exporter, used by default,
#                                       needs onnxscript; the TorchScript fallback needs only onnx)
#   - onnxruntime                       the ONNX Runtime peer
#   - matplotlib                        the latency-versus-batch plot
#   - fastapi, uvicorn                  bench_serve.py's ONNX Runtime server (the KServe v2 peer)
#   - GNU time (/usr/bin/time -v)       peak resident memory, Debian package `time`
# Nothing is reinstalled when it already imports. An onnx already installed is pinned while
# the others install (Scripts/fixtures/import_onnx_tests.py wants onnx 1.22.0, the last wheel with the
# conformance vectors; onnxscript would accept a newer one). None of these pulls torch.
#
# Usage: Scripts/setup/install_bench_deps.sh
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

"$REPO/Scripts/setup/install_torch.sh"
"$REPO/Scripts/setup/install_torchvision.sh"

need=()
python3 -c "import onnx" >/dev/null 2>&1 || need+=("onnx")
python3 -c "import onnxscript" >/dev/null 2>&1 || need+=("onnxscript")
python3 -c "import onnxruntime" >/dev/null 2>&1 || need+=("onnxruntime")
python3 -c "import matplotlib" >/dev/null 2>&1 || need+=("matplotlib")
python3 -c "import fastapi" >/dev/null 2>&1 || need+=("fastapi")
python3 -c "import uvicorn" >/dev/null 2>&1 || need+=("uvicorn")
if [ ${#need[@]} -gt 0 ]; then
  echo "install_bench_deps: pip install ${need[*]}"
  pin=()
  if onnx_version="$(python3 -c "import onnx; print(onnx.__version__)" 2>/dev/null)"; then
    pin=("onnx==$onnx_version")
  fi
  python3 -m pip install "${need[@]}" "${pin[@]}"
fi

if [ ! -x /usr/bin/time ]; then
  echo "install_bench_deps: apt-get install time"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq time >/dev/null
fi

python3 - <<'EOF'
import matplotlib, onnx, onnxruntime, onnxscript, torch
print(f"torch {torch.__version__} / onnx {onnx.__version__} / onnxscript {onnxscript.__version__} / "
      f"onnxruntime {onnxruntime.__version__} / matplotlib {matplotlib.__version__}")
EOF
/usr/bin/time --version 2>&1 | head -1
