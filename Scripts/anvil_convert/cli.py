"""The command line shared by the four converters (Scripts/convert_*.py).

Every converter takes `--name` and `--self-test`, writes `model.json` + `weights.bin` into
one output directory, reports success as `convert_<tool>: wrote <dir>/model.json (...)` on
stdout and a model it cannot convert as one line `convert_<tool>: error: <why>` on stderr
with exit status 1. Usage errors (a missing argument, a malformed `--input-shape`) exit 2
through argparse, as before.
"""

import argparse
import os
import subprocess
import sys

from .writer import ConversionError

TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests")


def parser_for(tool, description, epilog=None):
    """An ArgumentParser for `convert_<tool>` with the options every converter has."""
    parser = argparse.ArgumentParser(prog=f"convert_{tool}", description=description, epilog=epilog,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", help="model name written to model.json")
    parser.add_argument("--self-test", action="store_true",
                        help=f"run this converter's pytest tests (Scripts/tests/test_{tool}.py) and exit")
    return parser


def add_input_shape(parser, axes, help_text):
    """Adds `--input-shape`, parsed into a tuple of len(axes) positive integers ("C,H,W" ...)."""
    label = ",".join(axes)

    def shape(text):
        """Parses "C,H,W"-style text; an argparse error when malformed."""
        try:
            values = tuple(int(v) for v in text.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not {label} (comma-separated integers)") from None
        if len(values) != len(axes) or min(values) <= 0:
            raise argparse.ArgumentTypeError(f"'{text}' is not {label} ({len(axes)} positive integers)")
        return values

    parser.add_argument("--input-shape", type=shape, metavar=label, help=help_text)


def self_test(tool):
    """Runs Scripts/tests/test_<tool>.py with pytest; returns its exit status."""
    command = [sys.executable, "-m", "pytest", "-q", os.path.join(TESTS, f"test_{tool}.py")]
    try:
        return subprocess.call(command)
    except OSError as error:
        print(f"convert_{tool}: error: cannot run pytest: {error}", file=sys.stderr)
        return 1


def run(tool, parser, args, convert):
    """Runs `convert(args)` (which returns the ModelWriter it wrote) and reports the result;
    returns the exit status: 0, or 1 after a one-line error on stderr."""
    if args.self_test:
        return self_test(tool)
    try:
        writer = convert(args)
    except (ConversionError, OSError) as error:
        print(f"convert_{tool}: error: {error}", file=sys.stderr)
        return 1
    output = getattr(args, "output", None) or getattr(args, "out", None)
    print(f"convert_{tool}: wrote {os.path.join(output, 'model.json')} ({writer.summary()})")
    return 0


def load(framework, path, loader):
    """`loader()`, the model file at `path` read by `framework`'s own loader; any failure of the
    loader becomes a ConversionError naming the file."""
    try:
        return loader()
    except Exception as error:  # noqa: BLE001 - report any loader failure the same way
        raise ConversionError(f"cannot load {framework} model '{path}': {error}") from error


def file_main(tool, description, files, what, input_shape, convert, argv=None):
    """The whole command line of a converter that reads model files: positional `files`
    ((name, help) pairs) and an output directory, `--input-shape` (`input_shape` is
    (axes, help)), and `convert(*files, output, name=, input_shape=)` returning the
    ModelWriter. `what` names the positional arguments in the usage error. Returns the exit status."""
    parser = parser_for(tool, description)
    for name, help_text in files:
        parser.add_argument(name, nargs="?", help=help_text)
    parser.add_argument("output", nargs="?", help="directory for model.json and weights.bin")
    add_input_shape(parser, *input_shape)
    args = parser.parse_args(argv)
    require(parser, args, [name for name, _ in files] + ["output"], what)
    return run(tool, parser, args, lambda a: convert(*(getattr(a, name) for name, _ in files), a.output,
                                                     name=a.name, input_shape=a.input_shape))


def require(parser, args, names, what):
    """A usage error (exit 2) naming `what` unless every attribute in `names` is set."""
    if not args.self_test and not all(getattr(args, name) for name in names):
        parser.error(f"give {what} (or --self-test)")
