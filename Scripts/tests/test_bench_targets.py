"""The targets section of Scripts/benchmarks/bench_peers.py's report, on made-up results whose
ratios, spreads and shares are worked out by hand here."""

import os
import sys
from types import SimpleNamespace

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import bench_peers  # noqa: E402
from bench_peers import Timing  # noqa: E402


def fake_bench():
    """ResNet-50 (8 GFLOP per image) and VGG16 (30 GFLOP) on a 100 GFLOP/s-per-core machine."""
    t = lambda ms: Timing(ms, ms, ms, 1)
    rounds = {
        # ratios 0.80 and 0.90 in the two rounds; median times 85 / 100 -> 0.85: met (at the target).
        ("resnet50", 1, 1): {"anvil": [t(80), t(90)], "onnxruntime": [t(100), t(100)]},
        # 90 / 80 = 1.125 in both rounds: not met; ORT's share 8e9 / 0.08 s / 100e9 = 100%, needed 100 / 0.85.
        ("resnet50", 1, 2): {"anvil": [t(45), t(45)], "onnxruntime": [t(40), t(40)]},
        # 0.5 and 0.7: median 0.6 is not met (VGG16's target is 0.55), but round one reached it.
        ("vgg16", 1, 1): {"anvil": [t(500), t(700)], "onnxruntime": [t(1000), t(1000)]},
        ("vgg16", 1, 2): {"anvil": [t(250), t(250)], "onnxruntime": [t(500), t(500)]},
    }
    bench = SimpleNamespace(round_results=rounds, results={
        key: {engine: bench_peers.combine(timings) for engine, timings in value.items()} for key, value in rounds.items()},
        flops={"resnet50": (8e9, 0), "vgg16": (30e9, 0)}, peaks={"avx2": 100.0})
    return bench, list(rounds)


def test_rows_give_ratio_spread_target_and_shares():
    bench, configs = fake_bench()
    rows = {row[0]: row for row in bench_peers.target_rows(bench, configs, "anvil")}
    key, ratio, spread, target, met, peer_share, needed, share = rows[("resnet50", 1, 1)]
    assert abs(ratio - 0.85) < 1e-12 and met and target == 0.85
    assert [round(v, 12) for v in spread] == [0.8, 0.9]
    assert abs(peer_share - 8e9 / 0.1 / 100e9) < 1e-12          # 80%
    assert abs(share - 8e9 / 0.085 / 100e9) < 1e-12
    _, ratio, _, _, met, peer_share, needed, _ = rows[("resnet50", 1, 2)]
    assert not met and abs(ratio - 1.125) < 1e-12
    assert abs(peer_share - 8e9 / 0.04 / 200e9) < 1e-12         # two threads: twice the peak
    assert abs(needed - peer_share / 0.85) < 1e-12 and needed > 1
    _, ratio, spread, target, met, _, _, _ = rows[("vgg16", 1, 1)]
    assert target == 0.55 and not met and abs(ratio - 0.6) < 1e-12 and min(spread) <= target


def test_section_counts_met_noise_and_beyond_the_peak():
    bench, configs = fake_bench()
    text = "\n".join(bench_peers.targets_section(bench, configs, ["onnxruntime", "anvil"]))
    # met: resnet50 b1 1T, vgg16 2T (0.50); not met: resnet50 2T (beyond the peak), vgg16 1T (a round reached it).
    assert "Target 1: 2 of 4 configurations" in text
    assert "Of the 2 not met, 1 reached the target in at least one round" in text
    assert "and 1 would need more than 100% of the FMA peak" in text
    assert "| ResNet-50 | 1 | 2 | 1.12 | 1.12–1.12 | 0.85 | not met | 100% | 118% | 89% |" in text
    # scaling at batch 1: ResNet-50 85 / 45 = 1.89 (not reached), VGG16 600 / 250 = 2.4.
    assert "Target 2 (time on 1 thread ÷ time on 2 at batch 1, at least 1.9): 1 of 2: ResNet-50 1.89, VGG16 2.40." in text


def test_no_section_without_onnx_runtime():
    bench, configs = fake_bench()
    assert bench_peers.targets_section(bench, configs, ["anvil"]) == []


def test_peak_section_uses_the_same_shares():
    bench, configs = fake_bench()
    text = "\n".join(bench_peers.peak_section(bench, configs, ["onnxruntime", "anvil"]))
    # ResNet-50 batch 1: 8e9 / 0.1 s / 100e9 = 80% (ONNX Runtime), 8e9 / 0.085 s / 100e9 = 94% (Anvil);
    # two threads: 8e9 / 0.04 / 200e9 = 100%, 8e9 / 0.045 / 200e9 = 89%.
    assert "| ResNet-50 | 1 | 1 | 80% | 94% |" in text
    assert "| ResNet-50 | 1 | 2 | 100% | 89% |" in text
