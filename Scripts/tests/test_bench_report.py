"""The tables of Scripts/benchmarks/bench_peers.py's report (peerbench/report.py), on made-up
timings whose medians and ratios are worked out by hand here."""

import os
import sys
from types import SimpleNamespace

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from peerbench import report  # noqa: E402
from peerbench.measure import Timing, combine  # noqa: E402

ENGINES = [SimpleNamespace(key="anvil", title="Anvil"), SimpleNamespace(key="onnxruntime", title="ONNX Runtime"),
           SimpleNamespace(key="openvino-f32", title="OpenVINO f32"), SimpleNamespace(key="openvino", title="OpenVINO default")]


def t(ms):
    return Timing(ms, ms, ms, 1)


def made_up():
    """ResNet-50 at batch 1, 1 and 2 threads, three rounds each; one OpenVINO failure."""
    rounds = {
        # medians: Anvil 65 (60, 65, 70), ONNX Runtime 78 (75, 78, 80): ratio 65 / 78 = 0.83;
        # OpenVINO f32 74.5; default (bf16) 40: Anvil 65 / 40 = 1.625 -> 1.62 (behind).
        ("resnet50", 1, 1): {"anvil": [t(60), t(65), t(70)], "onnxruntime": [t(75), t(80), t(78)],
                             "openvino-f32": [t(74.5)] * 3, "openvino": [t(40)] * 3},
        # 2 threads: Anvil 35, ONNX Runtime 40, OpenVINO f32 failed in every round, default 20.
        ("resnet50", 1, 2): {"anvil": [t(35)] * 3, "onnxruntime": [t(40)] * 3,
                             "openvino-f32": [Timing(error="compile failed")] * 3, "openvino": [t(20)] * 3},
    }
    results = report.Results(ENGINES, configs=list(rounds))
    for key, value in rounds.items():
        results.add(key, {engine: combine(timings) for engine, timings in value.items()}, value)
    return results


def test_the_latency_table_has_medians_and_ratios_to_every_peer():
    header, rows = report.latency_table(made_up())
    assert header == ["network", "batch", "threads", "Anvil", "ONNX Runtime", "OpenVINO f32", "OpenVINO default",
                      "Anvil ÷ ONNX Runtime", "Anvil ÷ OpenVINO f32", "Anvil ÷ OpenVINO default"]
    assert rows[0] == ["ResNet-50", 1, 1, "65.0", "78.0", "74.5", "40.0", "0.83", "0.87", "1.62"]
    assert rows[1] == ["ResNet-50", 1, 2, "35.0", "40.0", "failed", "20.0", "0.88", "–", "1.75"]


def test_the_spread_is_the_lowest_and_highest_ratio_of_the_rounds():
    _, rows = report.spread_table(made_up())
    # rounds: 60 / 75 = 0.80, 65 / 80 = 0.8125, 70 / 78 = 0.897
    assert rows[0][3] == "0.80–0.90"
    assert rows[1][3:] == ["0.88–0.88", "–", "1.75–1.75"]


def test_thread_scaling_is_time_on_the_fewest_over_time_on_the_most():
    threads, rows = report.scaling_table(made_up())
    assert threads == (1, 2)
    assert rows == [["ResNet-50", 1, "1.86", "1.95", "–", "2.00"]]


def test_values_keep_three_significant_figures():
    assert [report.fmt_value(v) for v in (0.3123, 7.564, 65.54, 169.4)] == ["0.312", "7.56", "65.5", "169"]


def test_the_markdown_table_right_aligns_numbers():
    text = report.table(["network", "ms"], [["VGG16", "169"], ["ResNet-50", "failed"]])
    assert text.splitlines()[1] == "|---|---:|"


def test_the_report_has_no_targets():
    results = made_up()
    context = {key: "x" for key in ("machine", "flags", "date", "commit", "duration", "command", "load_start",
                                    "load_end", "versions", "method")}
    context["other_load"] = 0.1
    text = report.report(context, results, [("Anvil", "float32")], {})
    assert "| ResNet-50 | 1 | 1 | 65.0 | 78.0 | 74.5 | 40.0 | 0.83 | 0.87 | 1.62 |" in text
    assert "target" not in text.lower()
