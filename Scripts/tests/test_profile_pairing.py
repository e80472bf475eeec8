"""Scripts/benchmarks/profile_layers.py's pairing of Anvil layers with ONNX Runtime nodes, on
geometries worked out by hand (MobileNet v2's layers whose multiply-adds coincide or that ONNX
Runtime pads to NCHWc blocks)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import profile_layers  # noqa: E402


def node(kh, cin, cout, h, groups=1):
    """An ONNX Runtime convolution node's geometry as `ort_kind` gives it."""
    return {"macs": h * h * cout * (cin // groups) * kh * kh, "map": (h, h), "kh": kh, "kw": kh, "cin": cin,
            "cout": cout, "groups": groups}


def test_same_count_needs_the_same_map():
    # 96 → 24 at 56 × 56 and 384 → 96 at 14 × 14 both have 7,225,344 multiply-adds.
    count = 56 * 56 * 24 * 96
    assert count == 14 * 14 * 96 * 384
    assert profile_layers.counts_match(node(1, 96, 24, 56), count, [56, 56, 24])
    assert not profile_layers.counts_match(node(1, 384, 96, 14), count, [56, 56, 24])


def test_channels_padded_to_a_block():
    # ONNX Runtime runs 96 → 24 as 96 → 32 and 24 → 144 as 32 → 144 (NCHWc blocks of 16).
    assert profile_layers.counts_match(node(1, 96, 32, 56), 56 * 56 * 24 * 96, [56, 56, 24])
    assert profile_layers.counts_match(node(1, 32, 144, 56), 56 * 56 * 144 * 24, [56, 56, 144])
    # Padding past the next block is another layer.
    assert not profile_layers.counts_match(node(1, 96, 48, 56), 56 * 56 * 24 * 96, [56, 56, 24])
    # A different window is another layer, whatever the count.
    assert not profile_layers.counts_match(node(3, 32, 144, 56), 56 * 56 * 144 * 24, [56, 56, 144])


def test_dense_and_depthwise():
    assert profile_layers.counts_match({"macs": 1280 * 1000}, 1280 * 1000, [1000])
    assert not profile_layers.counts_match({"macs": 1280 * 1000}, 1024 * 1000, [1000])
    depthwise = node(3, 32, 32, 112, groups=32)
    assert profile_layers.counts_match(depthwise, 112 * 112 * 32 * 9, [112, 112, 32])
    # A grouped node is never matched through padding.
    assert not profile_layers.counts_match(depthwise, 112 * 112 * 24 * 9, [112, 112, 24])
