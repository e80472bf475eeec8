"""Vision transformers as torchvision builds them — ViT (nn.MultiheadAttention folds the batch
into [T, B·heads, d]), Swin (windows fold it into [B·windows, tokens, C], shifted windows add a
mask built with ScatterND), Swin v2 (cosine attention: ReduceL2, a position-bias MLP on
constants), MaxViT (block and grid attention written as Einsum) — at small sizes with seeded random weights, exported with an open
batch axis, converted once by `anvil convert` and run by `anvil run` at batch 1 and 3 against
ONNX Runtime on the same .onnx file: max error <= 1e-3 of the output's range, the same top-1.

Skipped when torch, torchvision or onnxruntime is missing, or when there is no anvil executable
(unless ANVIL_LOAD_CHECK=required, as Scripts/test.sh sets: then that is a failure)."""

import subprocess

import numpy as np
import pytest

from helpers import framework, require_anvil, run_anvil

torch = framework("torch")
ort = framework("onnxruntime")

TOLERANCE = 1e-3


def torchvision():
    """torchvision, or a skip when it cannot be imported."""
    from anvil_convert.torch_zoo import import_torchvision
    try:
        return import_torchvision()
    except Exception as error:  # noqa: BLE001
        pytest.skip(f"torchvision cannot be imported: {error}")


def networks():
    """(name, builder) of the small transformers: each builder returns (module, image size)."""
    def vit():
        models = torchvision().models
        return models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                        hidden_dim=16, mlp_dim=32, num_classes=10), 32

    def swin(block, merging):
        def build():
            models = torchvision().models
            module = models.swin_transformer
            return models.SwinTransformer(patch_size=[4, 4], embed_dim=8, depths=[2, 2], num_heads=[1, 2],
                                          window_size=[2, 2], num_classes=10, block=getattr(module, block),
                                          downsample_layer=getattr(module, merging)), 32
        return build
    def maxvit():
        models = torchvision().models
        return models.MaxVit(input_size=(32, 32), stem_channels=8, partition_size=2, block_channels=[8, 16],
                             block_layers=[1, 1], head_dim=4, stochastic_depth_prob=0.0, num_classes=10), 32
    return [("vit", vit), ("swin", swin("SwinTransformerBlock", "PatchMerging")),
            ("swin_v2", swin("SwinTransformerBlockV2", "PatchMergingV2")), ("maxvit", maxvit)]


def export(tmp_path, name, builder, dynamic=True):
    """The network with seeded weights (every parameter, the zero-initialised head included),
    exported at opset 17 with an open batch axis, or fixed at batch 1."""
    torch.manual_seed(0)
    network, size = builder()
    with torch.no_grad():
        for parameter in network.parameters():
            parameter.copy_(torch.randn_like(parameter) * 0.2)
    network.eval()
    path = tmp_path / f"{name}.onnx"
    axes = {"x": {0: "batch"}, "y": {0: "batch"}} if dynamic else None
    torch.onnx.export(network, torch.randn(1, 3, size, size), str(path), opset_version=17, dynamo=False,
                      input_names=["x"], output_names=["y"], dynamic_axes=axes)
    return path, size


def compare(tmp_path, path, size, batch, seed, one_at_a_time=False):
    """ONNX Runtime's and Anvil's outputs for `batch` random images (ONNX Runtime given them one at
    a time for a graph fixed at batch 1)."""
    x = np.random.default_rng(seed).standard_normal((batch, 3, size, size)).astype(np.float32)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    if one_at_a_time:
        want = np.concatenate([session.run(None, {"x": x[i:i + 1]})[0] for i in range(batch)])
    else:
        want = session.run(None, {"x": x})[0]
    got = run_anvil(tmp_path / "m" / "model.json", [x.transpose(0, 2, 3, 1)], batch=batch)[0].reshape(want.shape)
    return want, got


@pytest.mark.parametrize("name,builder", networks(), ids=[n for n, _ in networks()])
def test_transformer_matches_onnxruntime_at_batch_1_and_3(tmp_path, name, builder):
    """Converted once, the transformer matches ONNX Runtime at batch 1 and 3."""
    anvil = require_anvil()
    path, size = export(tmp_path, name, builder)
    converted = subprocess.run([anvil, "convert", str(path), str(tmp_path / "m")], capture_output=True, text=True)
    assert converted.returncode == 0, converted.stderr
    for batch, seed in [(1, 0), (3, 1)]:
        want, got = compare(tmp_path, path, size, batch, seed)
        ratio = float(np.abs(want - got).max() / (want.max() - want.min()))
        assert ratio <= TOLERANCE, (name, batch, ratio)
        assert (want.argmax(-1) == got.argmax(-1)).all(), (name, batch)


@pytest.mark.parametrize("name,builder", networks(), ids=[n for n, _ in networks()])
def test_transformer_exported_at_batch_1_runs_each_item_alike(tmp_path, name, builder):
    """Exported with the batch fixed at 1 (its reshape targets are constants), converted once and
    run at batch 3, each item matches ONNX Runtime on that item alone."""
    anvil = require_anvil()
    path, size = export(tmp_path, name, builder, dynamic=False)
    converted = subprocess.run([anvil, "convert", str(path), str(tmp_path / "m")], capture_output=True, text=True)
    assert converted.returncode == 0, converted.stderr
    want, got = compare(tmp_path, path, size, 3, 2, one_at_a_time=True)
    ratio = float(np.abs(want - got).max() / (want.max() - want.min()))
    assert ratio <= TOLERANCE, (name, ratio)


def test_the_comparison_can_fail(tmp_path):
    """Items swapped within the batch (what mixing them up would give) are far outside the tolerance."""
    require_anvil()
    name, builder = networks()[0]
    path, size = export(tmp_path, name, builder)
    converted = subprocess.run([require_anvil(), "convert", str(path), str(tmp_path / "m")], capture_output=True, text=True)
    assert converted.returncode == 0, converted.stderr
    want, got = compare(tmp_path, path, size, 3, 1)
    ratio = float(np.abs(want - got[::-1]).max() / (want.max() - want.min()))
    assert ratio > TOLERANCE
