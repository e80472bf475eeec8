#!/usr/bin/env bash
# Make sure PyTorch (CPU) and numpy are importable by python3, for the training and
# reference scripts in Scripts/. Idempotent. Prefers a local CPU wheel in /opt/wheels
# (plain `pip install torch` pulls a ~4 GB CUDA build).
#
# Usage: Scripts/setup/install_torch.sh
set -euo pipefail

if ! python3 -c "import torch" >/dev/null 2>&1; then
  shopt -s nullglob
  wheels=(/opt/wheels/torch-*+cpu-*.whl)
  if (( ${#wheels[@]} > 0 )); then
    python3 -m pip install "${wheels[-1]}"
  else
    python3 -m pip install torch
  fi
fi

if ! python3 -c "import numpy" >/dev/null 2>&1; then
  python3 -m pip install numpy
fi

python3 -c "import torch, numpy; print('torch', torch.__version__, '/ numpy', numpy.__version__)"
