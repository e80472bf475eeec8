#!/usr/bin/env bash
# Makes the project's Python environment, .venv/ at the repository's top, and installs groups of
# packages into it. Nothing is ever installed into the system interpreter or the user's
# site-packages, so this works where python3 is Debian's own ("externally managed", PEP 668) and
# where it is any other CPython 3.9+.
#
#   Scripts/setup/python_env.sh [GROUP ...]     GROUP: test, bench (Scripts/setup/requirements/GROUP.txt)
#
# - The venv is made with `python3 -m venv` (ANVIL_PYTHON names another base interpreter); on
#   Debian, python3-venv is installed with apt when the base lacks venv or ensurepip.
# - A group is installed when its requirements (with the files they include) changed since it
#   was last installed, so a second run asks no registry and prints nothing.
# - The test and bench groups also get PyTorch (the CPU wheel) and torchvision
#   (Scripts/setup/install_torch.sh, install_torchvision.sh).
# - NAME.no-deps.txt beside GROUP.txt or a file it includes (-r NAME.txt) is installed after it
#   with --no-deps: packages whose declared dependencies would replace the CPU torch or pull a GUI
#   OpenCV (ultralytics); NAME.txt names the dependencies they really need.
# Prints the venv's python on standard output when called with --print-python.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="$REPO/.venv"
PY="$VENV/bin/python"
REQUIREMENTS="$REPO/Scripts/setup/requirements"

print_python=0
groups=()
for argument in "$@"; do
  case "$argument" in
    --print-python) print_python=1 ;;
    test|bench) groups+=("$argument") ;;
    *) echo "usage: $0 [--print-python] [test|bench ...]" >&2; exit 2 ;;
  esac
done

apt_install() {
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "python_env: apt-get install $*" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}

if ! [ -x "$PY" ] || ! "$PY" -c "import pip" >/dev/null 2>&1; then
  base="${ANVIL_PYTHON:-python3}"
  if ! command -v "$base" >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || { echo "python_env: no $base, and no apt-get to install it" >&2; exit 1; }
    apt_install python3
  fi
  echo "python_env: making $VENV with $(command -v "$base") ($("$base" --version 2>&1))" >&2
  rm -rf "$VENV"
  if ! "$base" -m venv "$VENV" >/dev/null 2>&1; then
    # Debian keeps venv's pip bootstrap in python3.X-venv (without it, `import ensurepip` works
    # but making a venv fails).
    command -v apt-get >/dev/null 2>&1 || { echo "python_env: $base cannot make a venv (no venv/ensurepip)" >&2; exit 1; }
    version="$("$base" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    apt_install "python$version-venv" || apt_install python3-venv
    rm -rf "$VENV"
    "$base" -m venv "$VENV"
  fi
fi

# The --no-deps files of a group: NAME.no-deps.txt for the group and each file it includes.
no_deps_files() {
  local group=$1 name
  for name in "$group.txt" $(grep -E '^-r ' "$REQUIREMENTS/$group.txt" | cut -d' ' -f2); do
    if [ -f "$REQUIREMENTS/${name%.txt}.no-deps.txt" ]; then echo "$REQUIREMENTS/${name%.txt}.no-deps.txt"; fi
  done
}

# The requirements a group installs, with every file it includes, as one fingerprint.
fingerprint() {
  local group=$1 file
  { cat "$REQUIREMENTS/$group.txt"
    for file in $(no_deps_files "$group"); do cat "$file"; done
    grep -E '^-r ' "$REQUIREMENTS/$group.txt" | while read -r _ included; do cat "$REQUIREMENTS/$included"; done
    cat "$REPO/Scripts/setup/install_torch.sh" "$REPO/Scripts/setup/install_torchvision.sh"
    "$PY" --version
  } | sha256sum | cut -d' ' -f1
}

for group in "${groups[@]}"; do
  stamp="$VENV/.anvil-$group"
  want="$(fingerprint "$group")"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    continue
  fi
  echo "python_env: installing the $group group into $VENV" >&2
  # PyTorch first: its CPU wheel must be there before anything that would pull the CUDA build.
  "$REPO/Scripts/setup/install_torch.sh" "$PY" >&2
  "$PY" -m pip install -q -r "$REQUIREMENTS/$group.txt" >&2
  for file in $(no_deps_files "$group"); do
    "$PY" -m pip install -q --no-deps -r "$file" >&2
  done
  "$REPO/Scripts/setup/install_torchvision.sh" "$PY" >&2
  echo "$want" > "$stamp"
done

[ "$print_python" -eq 1 ] && echo "$PY"
exit 0
