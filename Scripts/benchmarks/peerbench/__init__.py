"""The parts of Scripts/benchmarks/bench_peers.py, one concern a module:

- networks: the PyTorch definitions, their FLOP count, the ONNX export every engine runs and its cache
- engines:  how each engine (Anvil, ONNX Runtime, OpenVINO, PyTorch) runs one configuration
- measure:  warm-up, timed loops, rounds, interleaving (--paced), CPU pinning, Timing
- machine:  CPU model and flags, versions, the machine's load
- resources: load time and peak resident memory
- report:   the Markdown tables and the plot
"""

import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SCRIPTS = os.path.join(REPO, "Scripts")
BENCH_DIR = os.path.join(REPO, "Data", "bench")

# anvil_convert (the zoo's PyTorch definitions), fixtures (train_mnist), benchmarks (paced_anvil).
for _path in (os.path.join(SCRIPTS, "benchmarks"), os.path.join(SCRIPTS, "fixtures"), SCRIPTS):
    if _path not in sys.path:
        sys.path.insert(0, _path)


def log(message):
    """Progress on stderr, with the time: the report goes to stdout."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)
