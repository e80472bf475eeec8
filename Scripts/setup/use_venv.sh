# Sourced (not run) by scripts that run Python: puts the project venv, .venv/, first on PATH,
# so `python3` and `pytest` there, and in the processes they start (the Swift tests' fixtures),
# are the venv's, never the system's. Make the venv first with Scripts/setup/python_env.sh.
ANVIL_VENV="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.venv"
if [ -x "$ANVIL_VENV/bin/python" ]; then
  export VIRTUAL_ENV="$ANVIL_VENV"
  export PATH="$ANVIL_VENV/bin:$PATH"
  unset PYTHONHOME
fi
