#!/usr/bin/env python3
"""`convert_keras`: the command line of anvil_convert.from_keras (docs/converters.md).

Kept here so that `.venv/bin/python Scripts/convert_keras.py ...` works from a clone without installing
anything; the converter itself is Scripts/anvil_convert/from_keras.py.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from anvil_convert.from_keras import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
