#!/usr/bin/env bash
# The README's test command: installs what is missing (Scripts/setup.sh), runs the converters'
# Python tests (Scripts/tests, pytest; a test whose framework - torch, keras, onnx - is not
# installed is skipped with the reason), then the whole Swift test suite. Extra arguments go to
# `swift test` (e.g. --filter OnnxConformance).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
Scripts/setup.sh
python3 -c "import numpy, pytest" 2>/dev/null || python3 -m pip install -q numpy pytest
python3 -m pytest -q -p no:cacheprovider Scripts/tests
swift build --build-tests
swift test --skip-build "$@"
