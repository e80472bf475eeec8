#!/usr/bin/env python3
"""Train the TensorFlow "Deep MNIST" CNN with PyTorch (CPU) and export it for Anvil.

Network (input 28x28x1, pixel / 255):
  conv1 5x5x32 SAME + ReLU, maxpool 2x2/2, conv2 5x5x64 SAME + ReLU, maxpool 2x2/2,
  fc1 1024 + ReLU (dropout 0.5 while training), fc2 10, softmax.

Writes raw little-endian float32 files in Anvil's default (Forge/MPSCNN) layout to
--out (default Weights/mnist): conv weights [out][kh][kw][in], fc1 [1024][7][7][64]
(input flattened in H, W, C order), fc2 [10][1024], plus manifest.json. The export
is then re-loaded into a fresh model and the test accuracy re-checked.

Usage:  Scripts/fetch_mnist.sh && Scripts/install_torch.sh
        python3 Scripts/train_mnist.py [--data Data/mnist] [--out Weights/mnist]
                                       [--epochs 6] [--seed 1]
The other MNIST scripts import the IDX reader and weight loader from this file.
"""
import argparse
import datetime
import json
import os
import random
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------- data

def read_idx(path, magic, dims):
    """Read an IDX file of unsigned bytes; check its magic number and dimensions."""
    with open(path, "rb") as f:
        data = f.read()
    got_magic = struct.unpack(">I", data[:4])[0]
    if got_magic != magic:
        sys.exit(f"{path}: magic {got_magic:#x}, expected {magic:#x}")
    ndim = magic & 0xFF
    shape = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    if list(shape) != list(dims):
        sys.exit(f"{path}: shape {shape}, expected {tuple(dims)}")
    body = data[4 + 4 * ndim:]
    if len(body) != int(np.prod(dims)):
        sys.exit(f"{path}: {len(body)} data bytes, expected {int(np.prod(dims))}")
    return np.frombuffer(body, dtype=np.uint8).reshape(dims)


def load_mnist(data_dir, split):
    """split is 'train' or 't10k'; returns (uint8 images [N][28][28], uint8 labels [N])."""
    n = 60000 if split == "train" else 10000
    images = read_idx(os.path.join(data_dir, f"{split}-images-idx3-ubyte"), 0x803, (n, 28, 28))
    labels = read_idx(os.path.join(data_dir, f"{split}-labels-idx1-ubyte"), 0x801, (n,))
    return images, labels


def to_tensor(images):
    """uint8 [N][28][28] -> float32 NCHW tensor of pixel / 255."""
    return torch.from_numpy(images.astype(np.float32) / 255.0).unsqueeze(1)


# ---------------------------------------------------------------- model

class DeepMNIST(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5, padding=2)
        self.conv2 = nn.Conv2d(32, 64, 5, padding=2)
        self.fc1 = nn.Linear(64 * 7 * 7, 1024)
        self.fc2 = nn.Linear(1024, 10)

    def forward(self, x):  # returns logits (pre-softmax)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.dropout(F.relu(self.fc1(x.flatten(1))), 0.5, self.training)  # (C,H,W) flatten
        return self.fc2(x)


# Forge layout of every exported tensor: file stem -> (shape, layout string).
EXPORT_SHAPES = {
    "conv1_W": ((32, 5, 5, 1), "[out][kh][kw][in]"),
    "conv1_b": ((32,), "[out]"),
    "conv2_W": ((64, 5, 5, 32), "[out][kh][kw][in]"),
    "conv2_b": ((64,), "[out]"),
    "fc1_W": ((1024, 7, 7, 64), "[out][h][w][c]"),
    "fc1_b": ((1024,), "[out]"),
    "fc2_W": ((10, 1024), "[out][in]"),
    "fc2_b": ((10,), "[out]"),
}


def to_forge(model):
    """PyTorch state -> dict of numpy float32 arrays in Forge layout."""
    sd = {k: v.detach().cpu().float().numpy() for k, v in model.state_dict().items()}
    return {
        "conv1_W": sd["conv1.weight"].transpose(0, 2, 3, 1),            # OIHW -> OHWI
        "conv1_b": sd["conv1.bias"],
        "conv2_W": sd["conv2.weight"].transpose(0, 2, 3, 1),
        "conv2_b": sd["conv2.bias"],
        "fc1_W": sd["fc1.weight"].reshape(1024, 64, 7, 7).transpose(0, 2, 3, 1),  # (c,h,w) -> (h,w,c)
        "fc1_b": sd["fc1.bias"],
        "fc2_W": sd["fc2.weight"],
        "fc2_b": sd["fc2.bias"],
    }


def read_forge_bin(path, shape):
    """Read a raw little-endian float32 file and check its size."""
    a = np.fromfile(path, dtype="<f4")
    if a.size != int(np.prod(shape)):
        sys.exit(f"{path}: {a.size} floats, expected {int(np.prod(shape))} {shape}")
    return a.reshape(shape)


def load_forge_weights(weights_dir):
    """Build a DeepMNIST from Forge-layout .bin files (undoing the export permutation)."""
    w = {k: read_forge_bin(os.path.join(weights_dir, k + ".bin"), s) for k, (s, _) in EXPORT_SHAPES.items()}
    sd = {
        "conv1.weight": w["conv1_W"].transpose(0, 3, 1, 2),            # OHWI -> OIHW
        "conv1.bias": w["conv1_b"],
        "conv2.weight": w["conv2_W"].transpose(0, 3, 1, 2),
        "conv2.bias": w["conv2_b"],
        "fc1.weight": w["fc1_W"].transpose(0, 3, 1, 2).reshape(1024, 64 * 7 * 7),
        "fc1.bias": w["fc1_b"],
        "fc2.weight": w["fc2_W"],
        "fc2.bias": w["fc2_b"],
    }
    model = DeepMNIST()
    model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in sd.items()})
    return model.eval()


@torch.no_grad()
def count_correct(model, x, y, batch=1000):
    model.eval()
    correct = 0
    for i in range(0, len(x), batch):
        correct += (model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum().item()
    return correct


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.path.join(REPO, "Data", "mnist"))
    ap.add_argument("--out", default=os.path.join(REPO, "Weights", "mnist"))
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_num_threads(2)

    train_x, train_y = load_mnist(args.data, "train")
    test_x, test_y = load_mnist(args.data, "t10k")
    train_x, test_x = to_tensor(train_x), to_tensor(test_x)
    train_y, test_y = torch.from_numpy(train_y.astype(np.int64)), torch.from_numpy(test_y.astype(np.int64))

    model = DeepMNIST()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    steps_per_epoch = (len(train_x) + args.batch - 1) // args.batch
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-3, epochs=args.epochs,
                                                steps_per_epoch=steps_per_epoch)
    gen = torch.Generator().manual_seed(args.seed)

    start = time.time()
    for epoch in range(1, args.epochs + 1):
        model.train()
        perm = torch.randperm(len(train_x), generator=gen)
        total_loss = 0.0
        for i in range(0, len(train_x), args.batch):
            idx = perm[i:i + args.batch]
            loss = F.cross_entropy(model(train_x[idx]), train_y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total_loss += loss.item() * len(idx)
        correct = count_correct(model, test_x, test_y)
        print(f"epoch {epoch}/{args.epochs}: loss {total_loss / len(train_x):.4f}, "
              f"test {correct / 100:.2f}% ({correct}/10000), {time.time() - start:.0f} s", flush=True)
    train_seconds = time.time() - start

    # Export in Forge layout.
    os.makedirs(args.out, exist_ok=True)
    forge = to_forge(model)
    files = {}
    for name, (shape, layout) in EXPORT_SHAPES.items():
        a = np.ascontiguousarray(forge[name], dtype="<f4")
        assert a.shape == shape, (name, a.shape, shape)
        a.tofile(os.path.join(args.out, name + ".bin"))
        files[name + ".bin"] = {"shape": list(shape), "layout": layout, "floats": int(a.size)}
    total = sum(f["floats"] for f in files.values())

    # Re-load the exported files into a fresh model so an export bug cannot hide.
    reloaded = count_correct(load_forge_weights(args.out), test_x, test_y)
    if reloaded != correct:
        sys.exit(f"export check FAILED: trained model {correct}/10000, re-loaded export {reloaded}/10000")
    print(f"export re-check: {reloaded / 100:.2f}% ({reloaded}/10000) from the .bin files")

    manifest = {
        "network": "TensorFlow 'Deep MNIST': input 28x28x1 (pixel/255); conv1 5x5 32ch stride 1 SAME + ReLU; "
                   "maxpool 2x2 stride 2; conv2 5x5 64ch stride 1 SAME + ReLU; maxpool 2x2 stride 2; "
                   "fc1 1024 + ReLU (input 7x7x64 flattened in H,W,C order); fc2 10; softmax",
        "input": {"shape": [28, 28, 1], "scale": "pixel / 255"},
        "format": "raw little-endian float32, Forge/MPSCNN layout",
        "files": files,
        "total_parameters": total,
        "test_accuracy_percent": round(correct / 100, 2),
        "test_correct": correct,
        "test_total": 10000,
        "seed": args.seed,
        "epochs": args.epochs,
        "batch_size": args.batch,
        "optimizer": "Adam, one-cycle LR (max 2e-3), dropout 0.5 on fc1",
        "train_seconds": round(train_seconds),
        "torch_version": torch.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "made_by": "Scripts/train_mnist.py",
    }
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    print(f"wrote {total} parameters to {args.out} (test accuracy {correct / 100:.2f}%, "
          f"training {train_seconds:.0f} s)")


if __name__ == "__main__":
    main()
