#!/usr/bin/env python3
"""Write the MNIST test fixtures that Anvil's output is compared against.

Loads Weights/mnist/*.bin (Forge layout, converted back to PyTorch layout), runs
plain float32 PyTorch inference on the first 256 MNIST test images (pixel / 255) and
writes to Tests/AnvilTests/Fixtures/mnist/:
  images_first256.u8   256 x 784 raw uint8 pixels, row-major
  labels_first256.u8   256 uint8 labels
  logits_first256.f32  256 x 10 pre-softmax logits, float32 little-endian
  README.md

Usage:  python3 Scripts/mnist_reference_logits.py [--data Data/mnist] [--weights Weights/mnist]
(after Scripts/fetch_mnist.sh and Scripts/train_mnist.py)
"""
import argparse
import os

import numpy as np
import torch

from train_mnist import REPO, load_forge_weights, load_mnist, to_tensor

N = 256


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(REPO, "Data", "mnist"))
    ap.add_argument("--weights", default=os.path.join(REPO, "Weights", "mnist"))
    ap.add_argument("--out", default=os.path.join(REPO, "Tests", "AnvilTests", "Fixtures", "mnist"))
    args = ap.parse_args()
    torch.set_num_threads(2)

    images, labels = load_mnist(args.data, "t10k")
    images, labels = images[:N], labels[:N]
    model = load_forge_weights(args.weights)
    with torch.no_grad():
        logits = model(to_tensor(images)).numpy().astype("<f4")
    assert logits.shape == (N, 10)

    os.makedirs(args.out, exist_ok=True)
    images.reshape(N, 784).tofile(os.path.join(args.out, "images_first256.u8"))
    labels.tofile(os.path.join(args.out, "labels_first256.u8"))
    logits.tofile(os.path.join(args.out, "logits_first256.f32"))
    with open(os.path.join(args.out, "README.md"), "w") as f:
        f.write("First 256 MNIST test images (256x784 uint8), their labels (256 uint8) and PyTorch's float32 "
                "pre-softmax logits (256x10, little-endian) for the network in Weights/mnist.\n"
                "Made by Scripts/mnist_reference_logits.py (inputs are pixel / 255).\n")

    correct = int((logits.argmax(1) == labels).sum())
    print(f"wrote fixtures to {args.out}: {correct}/{N} of the first {N} test images classified correctly")


if __name__ == "__main__":
    main()
