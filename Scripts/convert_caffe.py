#!/usr/bin/env python3
"""`convert_caffe`: the command line of anvil_convert.from_caffe (docs/converters.md).

Kept here so that `.venv/bin/python Scripts/convert_caffe.py ...` works from a clone without installing
anything; the converter itself is Scripts/anvil_convert/from_caffe.py.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from anvil_convert.from_caffe import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
