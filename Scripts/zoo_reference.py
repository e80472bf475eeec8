#!/usr/bin/env python3
"""Writes the model-zoo fixtures: reduced zoo networks with seeded random weights,
converted to Anvil model files, with a real photograph and PyTorch's output.

For each network in Sources/AnvilModels/Zoo this script
  1. checks the width-scaled PyTorch definition in convert_pytorch.py against torchvision
     at width 1: the same state_dict keys and shapes, the same converted Anvil graph, and
     the same output on a photograph (MobileNet v1, absent from torchvision: Keras's
     published parameter counts);
  2. builds the reduced variant (widths, classes and input size below), gives it seeded
     random weights (He-normal convolutions and Linear layers; batch norms with random
     gamma/beta and running statistics measured on four photographs, then perturbed),
  3. converts it with convert_pytorch.py into Tests/AnvilTests/Fixtures/zoo/<net>/
     (model.json + weights.bin), and writes input.f32 (the photograph, NHWC float32),
     expected.f32 (PyTorch's logits) and reference.json (options, top-5, versions).

ZooTests.swift runs model.json in Anvil and the Swift zoo definition with the same
reduced options on weights.bin, and compares both with expected.f32.

Photographs: scikit-image's public-domain samples (astronaut; coffee and chelsea for the
batch-norm statistics), centre-cropped, resized, normalised with ImageNet's mean and std.

Usage: Scripts/install_torchvision.sh && python3 Scripts/zoo_reference.py [--check-only] [NET ...]
"""

import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from convert_pytorch import (DEFAULT_INPUT_SIZE, ZOO, Converter, build_network, convert,  # noqa: E402
                             import_torchvision)

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPOSITORY, "Tests", "AnvilTests", "Fixtures", "zoo")

# The reduced variants the fixtures hold; ZooTests.swift builds the Swift zoo networks with
# the same options.
REDUCED = {
    "vgg16": {"width": 1 / 32, "classes": 100, "input_size": 224},
    "mobilenet_v1": {"width": 0.25, "classes": 100, "input_size": 128},
    "inception_v3": {"width": 1 / 16, "classes": 100, "input_size": 139},
    "squeezenet1_1": {"width": 0.25, "classes": 100, "input_size": 100},
    "resnet18": {"width": 1 / 8, "classes": 100, "input_size": 72},
    "resnet50": {"width": 1 / 16, "classes": 100, "input_size": 72},
}

# Published parameter counts (batch-norm running statistics excluded), at 1000 classes.
PUBLISHED = {"vgg16": 138_357_544, "mobilenet_v1": 4_231_976, "inception_v3": 23_834_568,
             "squeezenet1_1": 1_235_496, "resnet18": 11_689_512, "resnet50": 25_557_032}
# Keras's MobileNet total with the batch-norm moving statistics.
MOBILENET_KERAS_TOTAL = 4_253_864

SEED = 20_240_601
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)


def photo(name, size):
    """A scikit-image sample photograph: centre square crop, resized, ImageNet-normalised, NCHW."""
    import skimage.data
    import skimage.transform
    image = getattr(skimage.data, name)()
    height, width = image.shape[:2]
    side = min(height, width)
    top, left = (height - side) // 2, (width - side) // 2
    image = image[top:top + side, left:left + side, :3]
    image = skimage.transform.resize(image, (size, size), order=1, anti_aliasing=True).astype(np.float32)
    image = (image - IMAGENET_MEAN) / IMAGENET_STD
    return torch.from_numpy(np.ascontiguousarray(image.transpose(2, 0, 1)))[None]


def calibration_batch(size):
    """Four real photographs: astronaut, its mirror image, coffee, chelsea."""
    astronaut = photo("astronaut", size)
    return torch.cat([astronaut, astronaut.flip(3), photo("coffee", size), photo("chelsea", size)])


def randomize(module, seed, calibration):
    """Seeded random weights that keep activations in a useful range: He-normal weights,
    small biases; batch norms get random gamma/beta, running statistics measured on
    `calibration` (so every layer sees roughly normalised inputs), then perturbed."""
    generator = torch.Generator().manual_seed(seed)
    norms = []
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                fan_in = m.weight[0].numel()
                m.weight.copy_(torch.randn(m.weight.shape, generator=generator) * math.sqrt(2.0 / fan_in))
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=generator) * 0.1)
            elif isinstance(m, nn.BatchNorm2d):
                m.weight.copy_(0.5 + torch.rand(m.num_features, generator=generator))
                m.bias.copy_(torch.randn(m.num_features, generator=generator) * 0.2)
                m.reset_running_stats()
                m.momentum = None  # cumulative: one batch gives exactly its statistics
                norms.append(m)
        if norms:
            module.train()
            for m in module.modules():
                if isinstance(m, nn.Dropout):
                    m.eval()
            module(calibration)
            module.eval()
            for m in norms:
                c = m.num_features
                m.running_mean.add_(torch.randn(c, generator=generator) * 0.2 * m.running_var.sqrt())
                m.running_var.mul_(torch.exp(torch.rand(c, generator=generator) - 0.5))
                m.momentum = 0.1
    return module.eval()


def trainable_count(module):
    return sum(p.numel() for p in module.parameters())


def check_definition(name, verbose=True):
    """The width-scaled definition equals torchvision's (or Keras's counts) at width 1."""
    own = build_network(name, use_torchvision=False)
    count = trainable_count(own)
    assert count == PUBLISHED[name], f"{name}: {count:,} parameters, published {PUBLISHED[name]:,}"
    if name == "mobilenet_v1":
        total = count + sum(b.numel() for n, b in own.named_buffers() if n.endswith(("running_mean", "running_var")))
        assert total == MOBILENET_KERAS_TOTAL, f"mobilenet_v1: {total:,} with moving statistics, Keras {MOBILENET_KERAS_TOTAL:,}"
        if verbose:
            print(f"  {name}: {count:,} trainable, {total:,} with BN statistics (Keras: 4,231,976 / 4,253,864)")
        return
    reference = build_network(name, use_torchvision=True)
    mine = {k: tuple(v.shape) for k, v in own.state_dict().items()}
    theirs = {k: tuple(v.shape) for k, v in reference.state_dict().items()}
    assert mine == theirs, f"{name}: state_dict differs from torchvision: {set(mine) ^ set(theirs)}"
    size = {"vgg16": 224, "inception_v3": 139}.get(name, 96)
    randomize(reference, SEED, calibration_batch(size))
    own.load_state_dict(reference.state_dict(), strict=True)
    image = photo("astronaut", size)
    with torch.no_grad():
        difference = (own(image) - reference(image)).abs().max().item()
    assert difference == 0.0, f"{name}: output differs from torchvision's by {difference}"
    graph_own, _ = Converter(own, (size, size, 3)).convert()
    graph_reference, _ = Converter(reference, (size, size, 3)).convert()
    assert graph_own["layers"] == graph_reference["layers"], f"{name}: converted graphs differ"
    if verbose:
        print(f"  {name}: same state_dict ({len(mine)} tensors), output and Anvil graph as torchvision; "
              f"{count:,} parameters")


def top5(values):
    return [int(i) for i in np.argsort(-values, kind="stable")[:5]]


def write_fixture(name, versions):
    options = REDUCED[name]
    size = options["input_size"]
    module = build_network(name, classes=options["classes"], width=options["width"], input_size=size,
                           use_torchvision=False)
    randomize(module, SEED, calibration_batch(size))
    image = photo("astronaut", size)
    with torch.no_grad():
        logits = module(image)[0].numpy().astype(np.float32)
    directory = os.path.join(FIXTURES, name)
    root = convert(module, (size, size, 3), directory, name=f"{name}-reduced")
    image.permute(0, 2, 3, 1).numpy().astype("<f4").tofile(os.path.join(directory, "input.f32"))
    logits.astype("<f4").tofile(os.path.join(directory, "expected.f32"))
    order = np.sort(logits)[::-1]
    reference = {"network": name, "width": options["width"], "classes": options["classes"], "inputSize": size,
                 "seed": SEED, "photo": "skimage.data.astronaut", "normalization": "imagenet",
                 "top5": top5(logits), "logitRange": float(logits.max() - logits.min()),
                 "top6Gap": float(min(order[i] - order[i + 1] for i in range(5))),
                 "parameters": trainable_count(module), **versions}
    with open(os.path.join(directory, "reference.json"), "w") as handle:
        handle.write(json.dumps(reference, indent=2) + "\n")
    sizes = sum(os.path.getsize(os.path.join(directory, f)) for f in os.listdir(directory))
    print(f"  {name}: {len(root['layers'])} layers, {reference['parameters']:,} parameters, top-5 {reference['top5']}, "
          f"logit range {reference['logitRange']:.3f}, {sizes / 1e6:.2f} MB")
    return sizes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("networks", nargs="*", metavar="NET", help=f"networks (default: all of {', '.join(ZOO)})")
    parser.add_argument("--check-only", action="store_true", help="only check the definitions against torchvision")
    args = parser.parse_args()
    networks = args.networks or list(ZOO)
    unknown = [n for n in networks if n not in ZOO]
    if unknown:
        parser.error(f"unknown network(s) {', '.join(unknown)}; choose from {', '.join(ZOO)}")
    torch.manual_seed(SEED)
    torchvision = import_torchvision()
    versions = {"torch": torch.__version__.split("+")[0], "torchvision": torchvision.__version__.split("+")[0]}
    print(f"definitions against torchvision {versions['torchvision']} (torch {versions['torch']}):")
    for name in networks:
        check_definition(name)
    if args.check_only:
        return 0
    print(f"fixtures in {os.path.relpath(FIXTURES, REPOSITORY)}:")
    total = sum(write_fixture(name, versions) for name in networks)
    print(f"total {total / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    assert set(REDUCED) == set(ZOO) and set(DEFAULT_INPUT_SIZE) == set(ZOO)
    sys.exit(main())
