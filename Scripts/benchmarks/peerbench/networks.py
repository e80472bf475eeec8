"""The benchmarked networks: PyTorch definitions with seeded random weights, their FLOP count,
the input every engine gets, and the ONNX export (dynamic batch axis) every engine runs, cached
under Data/bench/onnx/."""

import os
import warnings
from dataclasses import dataclass

import numpy as np

from . import BENCH_DIR, log


@dataclass(frozen=True)
class Network:
    """A benchmarked network: its Anvil zoo name, title, PyTorch input shape (C, H, W) and the
    published GFLOP per image its counted FLOPs are checked against."""
    name: str
    title: str
    input_chw: tuple
    reference_gflop: float


# Published figures are 2 × the papers' or torchvision's GMACs (ShuffleNet v2: the paper's 146 M).
NETWORKS = {n.name: n for n in (
    Network("mnist", "Deep MNIST", (1, 28, 28), 0.0278),
    Network("vgg16", "VGG16", (3, 224, 224), 30.94),
    Network("resnet50", "ResNet-50", (3, 224, 224), 8.18),
    Network("mobilenet_v1", "MobileNet v1", (3, 224, 224), 1.14),
    Network("mobilenet_v2", "MobileNet v2", (3, 224, 224), 0.601),
    Network("mobilenet_v3_large", "MobileNet v3 large", (3, 224, 224), 0.434),
    Network("mobilenet_v3_small", "MobileNet v3 small", (3, 224, 224), 0.114),
    Network("efficientnet_b0", "EfficientNet-B0", (3, 224, 224), 0.772),
    Network("shufflenet_v2_x1_0", "ShuffleNet v2 1.0×", (3, 224, 224), 0.292),
    Network("densenet121", "DenseNet-121", (3, 224, 224), 5.67),
    Network("inception_v3", "Inception v3", (3, 299, 299), 11.43),
)}

# What a run measures unless --models says otherwise.
DEFAULT_NETWORKS = ("mnist", "vgg16", "resnet50", "mobilenet_v2", "efficientnet_b0")


def build_torch_network(name, seed):
    """The network in PyTorch, eval mode, seeded random weights, ending in a softmax over the
    classes as Anvil's zoo models do. Deep MNIST is Scripts/fixtures/train_mnist.py's; the others
    are torchvision's classes as Scripts/anvil_convert/torch_zoo.py builds them."""
    import torch
    import torch.nn as nn
    torch.manual_seed(seed)
    if name == "mnist":
        from train_mnist import DeepMNIST
        body = DeepMNIST()
    else:
        from anvil_convert.torch_zoo import build_network
        body = build_network(name)
    return nn.Sequential(body, nn.Softmax(dim=1)).eval()


def count_flops(model, input_chw):
    """(FLOPs per image = 2 × the multiply-accumulates of every Conv2d and Linear, parameters)."""
    import torch
    import torch.nn as nn
    macs = []

    def conv_hook(module, inputs, output):
        kh, kw = module.kernel_size
        macs.append(output[0].numel() * (module.in_channels // module.groups) * kh * kw)

    def linear_hook(module, inputs, output):
        macs.append(output[0].numel() * module.in_features)

    handles = []
    for module in model.modules():
        if isinstance(module, nn.Conv2d):
            handles.append(module.register_forward_hook(conv_hook))
        elif isinstance(module, nn.Linear):
            handles.append(module.register_forward_hook(linear_hook))
    with torch.inference_mode():
        model(torch.zeros((1,) + tuple(input_chw)))
    for handle in handles:
        handle.remove()
    return 2 * sum(macs), sum(p.numel() for p in model.parameters())


def bench_input(batch, input_chw):
    """`anvil bench`'s input (value i of the N × H × W × C buffer is (i × 7919 mod 255) / 255) as a
    contiguous NCHW float32 array, so every engine sees the same values."""
    c, h, w = input_chw
    index = np.arange(batch * h * w * c, dtype=np.int64)
    nhwc = ((index * 7919) % 255).astype(np.float32) / 255
    return np.ascontiguousarray(nhwc.reshape(batch, h, w, c).transpose(0, 3, 1, 2))


def onnx_path(name, exporter, seed):
    """Where the cached export of network `name` lives."""
    return os.path.join(BENCH_DIR, "onnx", f"{name}.{exporter}.seed{seed}.onnx")


def export_onnx(model, network, path, exporter):
    """Exports `model` to `path` with a dynamic batch axis unless the file is there already;
    returns the exporter that wrote it (`dynamo` falls back to `torchscript` when it fails)."""
    if os.path.exists(path) and os.path.getsize(path) > 0:
        try:
            with open(path + ".exporter") as handle:
                return handle.read().strip() + " (cached)"
        except OSError:
            return "cached"
    import torch
    os.makedirs(os.path.dirname(path), exist_ok=True)
    example = torch.from_numpy(bench_input(2, network.input_chw))
    partial = path + ".partial"
    for attempt in (["dynamo", "torchscript"] if exporter == "dynamo" else ["torchscript"]):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if attempt == "dynamo":
                    batch = torch.export.Dim("batch", min=1, max=4096)
                    torch.onnx.export(model, (example,), partial, input_names=["input"], output_names=["output"],
                                      dynamic_shapes=({0: batch},), dynamo=True, external_data=False, verbose=False)
                else:
                    torch.onnx.export(model, (example,), partial, input_names=["input"], output_names=["output"],
                                      dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}},
                                      opset_version=17, dynamo=False)
            os.replace(partial, path)
            with open(path + ".exporter", "w") as handle:
                handle.write(f"{attempt}, torch {torch.__version__}\n")
            return attempt
        except Exception as error:  # noqa: BLE001 - any exporter failure: try the next one
            log(f"ONNX export of {network.name} with the {attempt} exporter failed: {type(error).__name__}: {error}")
            if os.path.exists(partial):
                os.remove(partial)
    raise RuntimeError(f"could not export {network.name} to ONNX")
