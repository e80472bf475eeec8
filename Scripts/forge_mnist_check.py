#!/usr/bin/env python3
"""Independently check Forge's trained MNIST weights (and our layout conventions) in PyTorch.

Defines Forge's MNIST network (input: raw 0-255 pixels, NOT divided by 255;
conv1 5x5 20ch SAME + ReLU, maxpool 2; conv2 5x5 50ch SAME + ReLU, maxpool 2;
fc1 320 + ReLU on the 7x7x50 input flattened in H, W, C order; fc2 10), loads the
Forge-layout .bin files ([out][kh][kw][in], fc1 [320][7][7][50]) from
../shared/forge-mnist/, converts them to PyTorch layout, and prints the accuracy on
the full 10,000-image MNIST test set. Forge's own figure is 99.21% (9921/10000).

Usage:  python3 Scripts/forge_mnist_check.py [--forge DIR] [--data Data/mnist]
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from train_mnist import REPO, count_correct, load_mnist, read_forge_bin


class ForgeMNIST(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 20, 5, padding=2)
        self.conv2 = nn.Conv2d(20, 50, 5, padding=2)
        self.fc1 = nn.Linear(50 * 7 * 7, 320)
        self.fc2 = nn.Linear(320, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.permute(0, 2, 3, 1).flatten(1)  # NCHW -> flatten in (H, W, C) order, as Forge does
        return self.fc2(F.relu(self.fc1(x)))


def load_forge_mnist(d):
    w = lambda name, shape: read_forge_bin(os.path.join(d, name + ".bin"), shape)
    sd = {
        "conv1.weight": w("conv1_W", (20, 5, 5, 1)).transpose(0, 3, 1, 2),   # OHWI -> OIHW
        "conv1.bias": w("conv1_b", (20,)),
        "conv2.weight": w("conv2_W", (50, 5, 5, 20)).transpose(0, 3, 1, 2),
        "conv2.bias": w("conv2_b", (50,)),
        "fc1.weight": w("fc1_W", (320, 7, 7, 50)).reshape(320, 7 * 7 * 50),  # already (h, w, c) order
        "fc1.bias": w("fc1_b", (320,)),
        "fc2.weight": w("fc2_W", (10, 320)),
        "fc2.bias": w("fc2_b", (10,)),
    }
    model = ForgeMNIST()
    model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in sd.items()})
    return model.eval()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--forge", default=os.path.join(os.path.dirname(REPO), "shared", "forge-mnist"))
    ap.add_argument("--data", default=os.path.join(REPO, "Data", "mnist"))
    args = ap.parse_args()
    if not os.path.isdir(args.forge):
        sys.exit(f"Forge weights not found in {args.forge}")
    torch.set_num_threads(2)

    images, labels = load_mnist(args.data, "t10k")
    x = torch.from_numpy(images.astype(np.float32)).unsqueeze(1)  # raw 0-255, not scaled
    y = torch.from_numpy(labels.astype(np.int64))
    correct = count_correct(load_forge_mnist(args.forge), x, y)
    print(f"Forge MNIST weights: {correct / 100:.2f}% ({correct}/10000) on the MNIST test set")


if __name__ == "__main__":
    main()
