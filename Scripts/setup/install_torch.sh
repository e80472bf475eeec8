#!/usr/bin/env bash
# Installs PyTorch (CPU) and numpy into the given interpreter's environment (the project venv,
# from Scripts/setup/python_env.sh), preferring a local CPU wheel in /opt/wheels: plain
# `pip install torch` pulls a ~4 GB CUDA build. Idempotent.
#
# Usage: Scripts/setup/install_torch.sh PYTHON
set -euo pipefail
PY="${1:?usage: $0 PYTHON, the interpreter of the venv}"

if ! "$PY" -c "import torch" >/dev/null 2>&1; then
  shopt -s nullglob
  wheels=(/opt/wheels/torch-*+cpu-*.whl)
  if (( ${#wheels[@]} > 0 )); then
    "$PY" -m pip install -q "${wheels[-1]}"
  else
    "$PY" -m pip install -q torch
  fi
fi
"$PY" -c "import numpy" >/dev/null 2>&1 || "$PY" -m pip install -q numpy
"$PY" -c "import torch, numpy; print('torch', torch.__version__, '/ numpy', numpy.__version__)"
