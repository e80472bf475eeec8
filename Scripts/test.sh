#!/usr/bin/env bash
# The README's test command: installs what is missing (Scripts/setup.sh; the test group of
# Python packages into the project venv, .venv/, by Scripts/setup/python_env.sh), builds, runs the
# converters' Python tests (Scripts/tests, pytest; a test whose framework - torch, keras, onnx - is
# not installed is skipped with the reason; every model they write must load in the anvil just
# built), then the whole Swift test suite. Extra arguments go to
# `swift test` (e.g. --filter ONNXNodeTests).
#
# With no arguments it then runs the suites whose layers go through OpenBLAS again with other
# OpenBLAS kernels forced (Prescott: SSE3, no FMA; Sandybridge: AVX, no FMA): results must not
# depend on which BLAS kernel the CPU happens to get (Zen 3 and Zen 4 get different ones).
# Those suites: GemmTests, MatMulTests, ReferenceLayerTests (AnvilTests), ONNXNodeTests (AnvilONNXTests) and ZooTests
# (AnvilModelsTests); the filter matches suite names whatever target or folder they are in.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
Scripts/setup.sh
Scripts/setup/python_env.sh test
# From here on `python3` is the venv's, for pytest and for the Swift tests' fixture scripts.
source Scripts/setup/use_venv.sh
# The serving tests talk to the server with Triton's own client: missing, they fail, not skip.
export ANVIL_REQUIRE_TRITONCLIENT=1
swift build --build-tests
# pytest after the build: its load check runs every model a converter test writes in this anvil
# (Scripts/tests/conftest.py), and the torchvision end-to-end subset runs it too.
ANVIL="$(swift build --show-bin-path)/anvil" ANVIL_LOAD_CHECK=required python3 -m pytest -q -p no:cacheprovider Scripts/tests
swift test --skip-build "$@"
if [ $# -eq 0 ] && [ "$(uname -m)" = x86_64 ]; then
  for core in Prescott Sandybridge; do
    echo "test: OpenBLAS-dependent suites again with OPENBLAS_CORETYPE=$core"
    OPENBLAS_CORETYPE=$core swift test --skip-build --filter "GemmTests|MatMulTests|ReferenceLayerTests|ONNXNodeTests|ZooTests"
  done
fi
