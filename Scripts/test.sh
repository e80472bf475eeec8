#!/usr/bin/env bash
# The README's test command: installs what is missing (Scripts/setup.sh), then runs the
# whole test suite. Extra arguments go to `swift test` (e.g. --filter OnnxConformance).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
Scripts/setup.sh
swift build --build-tests
swift test --skip-build "$@"
