#!/usr/bin/env bash
# Installs torchvision (the model definitions the zoo scripts compare against) into the given
# interpreter's environment, which already has PyTorch (Scripts/setup/install_torch.sh). Idempotent.
#
# torchvision goes in with --no-deps, in the release paired with that torch (torch 2.N pairs
# with torchvision 0.(N+15): 2.13 -> 0.28), so pip does not replace the CPU torch with a CUDA
# build. The torchvision wheels on PyPI are CUDA builds whose C++ operators (nms, roi_align, ...)
# cannot load against a CPU torch; the model definitions do not need them, and
# anvil_convert.torch_zoo.import_torchvision() declares the two operator schemas torchvision's
# import expects when the extension is missing. This script checks that path works.
#
# Usage: Scripts/setup/install_torchvision.sh PYTHON
set -euo pipefail
PY="${1:?usage: $0 PYTHON, the interpreter of the venv}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

check() {
  "$PY" - "$REPO/Scripts" <<'PYTHON'
import sys
sys.path.insert(0, sys.argv[1])
from anvil_convert.torch_zoo import import_torchvision
import torch
torchvision = import_torchvision()
torchvision.models.resnet18()
print("torch", torch.__version__, "/ torchvision", torchvision.__version__)
PYTHON
}

if versions="$(check 2>/dev/null)"; then
  echo "$versions"
  exit 0
fi
pair="$("$PY" -c "import torch; major, minor = torch.__version__.split('+')[0].split('.')[:2]; print(f'0.{int(minor) + 15}.*' if major == '2' else '')")"
if [ -z "$pair" ]; then
  echo "install_torchvision: no known torchvision release for this torch" >&2
  exit 1
fi
"$PY" -m pip install -q --no-deps "torchvision==$pair"
check
