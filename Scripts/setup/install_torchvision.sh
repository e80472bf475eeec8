#!/usr/bin/env bash
# Make torchvision (the model definitions the zoo scripts compare against) and
# scikit-image (its public-domain sample photographs) importable by python3. Idempotent.
#
# PyTorch comes from Scripts/setup/install_torch.sh (the CPU wheel in /opt/wheels when present).
# torchvision is installed with --no-deps, in the release paired with that torch
# (torch 2.N pairs with torchvision 0.(N+15): 2.13 -> 0.28), so pip does not replace the
# CPU torch with a 4 GB CUDA build.
#
# The torchvision wheels on PyPI are CUDA builds: their C++ operators (_C.so: nms,
# roi_align, ...) cannot load against a CPU torch, and `import torchvision` then fails on
# "operator torchvision::nms does not exist". The model definitions do not need those
# operators; anvil_convert.torch_zoo.import_torchvision() declares the two operator
# schemas torchvision's import expects when the extension is missing, then imports it.
# This script checks that path works.
#
# Usage: Scripts/setup/install_torchvision.sh
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
"$REPO/Scripts/setup/install_torch.sh" >/dev/null

check() {
  python3 - "$REPO/Scripts" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
from anvil_convert.torch_zoo import import_torchvision
import torch
torchvision = import_torchvision()
torchvision.models.resnet18()
print("torch", torch.__version__, "/ torchvision", torchvision.__version__)
EOF
}

if ! python3 -c "import PIL" >/dev/null 2>&1; then  # torchvision.transforms imports it
  python3 -m pip install pillow
fi

if ! python3 -c "import skimage.data; skimage.data.astronaut()" >/dev/null 2>&1; then
  python3 -m pip install scikit-image
fi

if versions="$(check 2>/dev/null)"; then
  echo "$versions"
  exit 0
fi

pair="$(python3 -c "import torch; major, minor = torch.__version__.split('+')[0].split('.')[:2]; print(f'0.{int(minor) + 15}.*' if major == '2' else '')")"
if [ -z "$pair" ]; then
  echo "install_torchvision: no known torchvision release for this torch" >&2
  exit 1
fi
python3 -m pip install --no-deps "torchvision==$pair"
check
