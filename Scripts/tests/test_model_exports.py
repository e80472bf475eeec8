"""The export cache of Scripts/fixtures/model_exports.py (version keys, made once, interrupted
exports made again, pruning, the network guard), with made-up exporters: no torch or
ultralytics needed."""

import json
import os
import socket

import pytest

import model_exports


def test_version_key_names_every_package_and_the_recipe():
    key = model_exports.version_key("ultralytics", {"ultralytics": "8.4.190", "torch": "2.13.0+cpu",
                                                    "onnx": "1.22.0", "onnxslim": None})
    assert key == f"ultralytics-8.4.190_torch-2.13.0+cpu_onnx-1.22.0_onnxslim-none_r{model_exports.RECIPE}"
    other = model_exports.version_key("ultralytics", {"ultralytics": "8.4.191", "torch": "2.13.0+cpu",
                                                      "onnx": "1.22.0", "onnxslim": None})
    assert other != key


def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ANVIL_EXPORT_CACHE", str(tmp_path))
    assert model_exports.cache_root() == str(tmp_path)
    monkeypatch.delenv("ANVIL_EXPORT_CACHE")
    assert model_exports.cache_root().endswith(os.path.join(".cache", "anvil", "exports"))


def fake_exporter(calls):
    def exporter(name, scratch):
        calls.append(name)
        with open(os.path.join(scratch, f"{name}.onnx"), "wb") as handle:
            handle.write(b"x" * 10)
        return {"opset": 17}
    return exporter


def test_an_export_is_made_once(tmp_path):
    calls = []
    path, record, made = model_exports.ensure("tiny", str(tmp_path), fake_exporter(calls))
    assert made and path == str(tmp_path / "tiny.onnx")
    assert record["bytes"] == 10 and record["opset"] == 17 and record["files"] == ["tiny.onnx"]
    again, record_again, made_again = model_exports.ensure("tiny", str(tmp_path), fake_exporter(calls))
    assert again == path and not made_again and record_again == record
    assert calls == ["tiny"]
    assert json.loads((tmp_path / "tiny.json").read_text())["name"] == "tiny"
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".tiny.") and f != ".tiny.lock"]


def test_a_file_without_its_record_is_made_again(tmp_path):
    (tmp_path / "tiny.onnx").write_bytes(b"half")
    calls = []
    model_exports.ensure("tiny", str(tmp_path), fake_exporter(calls))
    assert calls == ["tiny"] and (tmp_path / "tiny.onnx").read_bytes() == b"x" * 10


def test_a_failed_export_leaves_nothing(tmp_path):
    def failing(name, scratch):
        open(os.path.join(scratch, f"{name}.onnx"), "w").close()
        raise RuntimeError("exporter failed")
    with pytest.raises(RuntimeError):
        model_exports.ensure("tiny", str(tmp_path), failing)
    assert model_exports.cached("tiny", str(tmp_path)) is None
    assert sorted(os.listdir(tmp_path)) == [".tiny.lock"]


def test_listing_and_prune_by_key(monkeypatch, tmp_path):
    monkeypatch.setattr(model_exports, "installed_versions", lambda family: {"torchvision": "0.28.0"})
    current = model_exports.folder("torchvision", str(tmp_path))
    stale = os.path.join(str(tmp_path), "torchvision", "torchvision-0.27.0_torch-none_onnx-none_r1")
    for directory in (current, stale):
        os.makedirs(directory)
        model_exports.ensure("tiny", directory, fake_exporter([]))
    keys = [key for _, key, _, _ in model_exports.listing(str(tmp_path))]
    assert sorted(keys) == sorted([os.path.basename(current), os.path.basename(stale)])
    assert model_exports.prune(str(tmp_path)) == [stale]
    assert [name for _, _, name, _ in model_exports.listing(str(tmp_path))] == ["tiny"]


def test_the_network_guard_refuses_and_restores():
    original = socket.getaddrinfo
    with model_exports.no_network():
        with pytest.raises(RuntimeError, match="offline"):
            socket.create_connection(("example.invalid", 80))
    assert socket.getaddrinfo is original


def test_families():
    assert model_exports.family_of("yolo11n-seg") == "ultralytics"
    assert model_exports.family_of("resnet18") == "torchvision"
    assert model_exports.plan(["yolov8n", "vgg11"], "all") == [("ultralytics", "yolov8n"), ("torchvision", "vgg11")]
