#!/usr/bin/env python3
"""`convert_pytorch`: the command line of anvil_convert.from_pytorch (docs/converters.md).

Kept here so that `.venv/bin/python Scripts/convert_pytorch.py ...` works from a clone without installing
anything; the converter itself is Scripts/anvil_convert/from_pytorch.py.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from anvil_convert.from_pytorch import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
