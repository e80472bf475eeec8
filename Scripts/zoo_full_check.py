#!/usr/bin/env python3
"""Full-size check of the model zoo: PyTorch against Anvil at the networks' real sizes.

For each network: torchvision's model (MobileNet v1: the Keras-equivalent definition in
convert_pytorch.py) with 1000 classes and seeded random weights (as Scripts/zoo_reference.py
makes them), a real photograph (scikit-image's astronaut) at the network's input size,
PyTorch's logits; the model converted with convert_pytorch.py and run by
`swift run -c release anvil run`. Prints, per network, the largest absolute difference
of the logits, the logit range, and whether the top-5 classes agree.

Everything is written under Data/zoo-full/<net>/ (git-ignored; VGG16's weights alone are
553 MB): model.json, weights.bin, input.f32, expected.f32 (PyTorch), anvil.f32, and
reference.json; Data/zoo-full/results.json collects the numbers. With --swift-zoo it then
also runs ZooTests' opt-in test that compiles the full-size Swift zoo definitions from the
same weights (`ANVIL_ZOO_FULL=Data/zoo-full swift test --filter fullSizeZooDefinition`).

Usage: Scripts/install_torchvision.sh && python3 Scripts/zoo_full_check.py [--swift-zoo] [NET ...]
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from convert_pytorch import DEFAULT_INPUT_SIZE, ZOO, build_network, convert, import_torchvision  # noqa: E402
from zoo_reference import REPOSITORY, SEED, calibration_batch, photo, randomize, top5  # noqa: E402

OUTPUT = os.path.join(REPOSITORY, "Data", "zoo-full")
SCRATCH = os.path.join(REPOSITORY, ".build-zoo-release")


def anvil(*arguments):
    command = ["swift", "run", "--skip-build", "-c", "release", "--scratch-path", SCRATCH, "anvil", *arguments]
    result = subprocess.run(command, cwd=REPOSITORY, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def check(name, versions):
    size = DEFAULT_INPUT_SIZE[name]
    directory = os.path.join(OUTPUT, name)
    os.makedirs(directory, exist_ok=True)
    torch.manual_seed(SEED)
    module = randomize(build_network(name, classes=1000), SEED, calibration_batch(size))
    image = photo("astronaut", size)
    started = time.perf_counter()
    with torch.no_grad():
        expected = module(image)[0].numpy().astype(np.float32)
    torch_seconds = time.perf_counter() - started
    convert(module, (size, size, 3), directory, name=name)
    del module
    paths = {kind: os.path.join(directory, f"{kind}.f32") for kind in ("input", "expected", "anvil")}
    image.permute(0, 2, 3, 1).numpy().astype("<f4").tofile(paths["input"])
    expected.astype("<f4").tofile(paths["expected"])
    started = time.perf_counter()
    anvil("run", "--model", os.path.join(directory, "model.json"), "--input", paths["input"], "--output", paths["anvil"])
    anvil_seconds = time.perf_counter() - started
    output = np.fromfile(paths["anvil"], dtype="<f4")
    difference = float(np.abs(output - expected).max())
    spread = float(expected.max() - expected.min())
    result = {"network": name, "inputSize": size, "maxAbsDiff": difference, "logitRange": spread,
              "relative": difference / spread, "top5": top5(expected), "anvilTop5": top5(output),
              "top5Agree": top5(expected) == top5(output), "torchSeconds": round(torch_seconds, 3),
              "anvilRunSeconds": round(anvil_seconds, 3), "seed": SEED, "photo": "skimage.data.astronaut", **versions}
    with open(os.path.join(directory, "reference.json"), "w") as handle:
        handle.write(json.dumps(result, indent=2) + "\n")
    print(f"  {name:14s} max |diff| {difference:.3g}  logit range {spread:.3g}  relative {difference / spread:.2e}  "
          f"top-5 {'agree' if result['top5Agree'] else 'DIFFER'} {result['top5']}  "
          f"(anvil run incl. load {anvil_seconds:.1f} s)", flush=True)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("networks", nargs="*", metavar="NET", help=f"networks (default: all of {', '.join(ZOO)})")
    parser.add_argument("--swift-zoo", action="store_true",
                        help="also run the Swift zoo definitions at full size (ZooTests, debug build: slow)")
    args = parser.parse_args()
    networks = args.networks or list(ZOO)
    unknown = [n for n in networks if n not in ZOO]
    if unknown:
        parser.error(f"unknown network(s) {', '.join(unknown)}; choose from {', '.join(ZOO)}")
    torchvision = import_torchvision()
    versions = {"torch": torch.__version__.split("+")[0], "torchvision": torchvision.__version__.split("+")[0]}
    print("building anvil (release)...", flush=True)
    subprocess.run(["swift", "build", "-c", "release", "--product", "anvil", "--scratch-path", SCRATCH],
                   cwd=REPOSITORY, check=True, stdout=subprocess.DEVNULL)
    print(f"PyTorch {versions['torch']} (torchvision {versions['torchvision']}) against Anvil, full size, random weights:")
    results = [check(name, versions) for name in networks]
    with open(os.path.join(OUTPUT, "results.json"), "w") as handle:
        handle.write(json.dumps(results, indent=2) + "\n")
    failed = [r["network"] for r in results if not r["top5Agree"] or r["relative"] > 1e-3]
    if args.swift_zoo:
        print("Swift zoo definitions at full size (ZooTests/fullSizeZooDefinitionMatchesPyTorch):", flush=True)
        subprocess.run(["swift", "build", "--build-tests", "--scratch-path", os.path.join(REPOSITORY, ".build-zoo")],
                       cwd=REPOSITORY, check=True, stdout=subprocess.DEVNULL)
        test = subprocess.run(["swift", "test", "--skip-build", "--scratch-path", os.path.join(REPOSITORY, ".build-zoo"),
                               "--filter", "ZooTests/fullSizeZooDefinitionMatchesPyTorch"],
                              cwd=REPOSITORY, env={**os.environ, "ANVIL_ZOO_FULL": OUTPUT}, capture_output=True, text=True)
        lines = [line for line in test.stdout.splitlines() if "fullSizeZooDefinition" in line or "issue" in line]
        print("\n".join(lines[-8:]))
        if test.returncode != 0:
            failed.append("swift zoo")
    print("all agree" if not failed else f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
