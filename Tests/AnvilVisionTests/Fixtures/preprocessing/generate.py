#!/usr/bin/env python3
"""Reference values for AnvilVision's resizing, cropping and ImagePreprocessing presets.

Writes into this directory (Tests/AnvilVisionTests/Fixtures/preprocessing/):

  *.png            small images (RGB landscape and portrait with odd sizes, gray, 16-bit
                   gray, RGBA) that the Swift tests preprocess
  expected.json    "lanczos":  Pillow's Image.resize(..., LANCZOS) on float ("F") images,
                               the exact float filter (a = 3, widened when shrinking);
                   "pipelines": each image run through a pipeline computed here with
                               numpy + Pillow "F" resizes, independently of the Swift code:
                               to RGB (gray replicated; alpha composited over a background
                               or dropped), resize (shorter side kept in ratio with
                               torchvision's truncation, or exact), centre crop with
                               torchvision's round-half-even placement, clamp to 0..255,
                               channel order, (x * scale - mean) / std;
                   "photo":    torchvision.transforms (Resize, CenterCrop, ToTensor,
                               Normalize) and Pillow/numpy Caffe and Inception pipelines on
                               ../photos/chelsea.jpg as Pillow (libjpeg) decodes it, sampled
                               at a fixed stride, with per-channel means. These go through
                               8-bit Pillow resizes and a different JPEG decoder than
                               stb_image, so the Swift test allows 3.5 levels on any
                               sample and 0.6 on average (measured: 2.0 and 0.34).

It also writes ../photos/chelsea.jpg from scikit-image's `data.chelsea()` when that file is
missing (re-encoding needs the same libjpeg to give the same bytes, so an existing photo is
never rewritten).

Requirements: numpy, Pillow, scikit-image, torch and torchvision (CPU is enough; a CUDA
torchvision wheel works through Scripts/anvil_convert/torch_zoo.py's import_torchvision).
Deterministic: a fixed seed. Usage: python3 generate.py
"""

import json
import os
import sys
from pathlib import Path

import numpy as np
from PIL import Image

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
PHOTO = HERE.parent / "photos" / "chelsea.jpg"

CAFFE = {"order": "bgr", "scale": 1.0, "mean": [103.939, 116.779, 123.68], "std": [1.0, 1.0, 1.0]}
PYTORCH = {"order": "rgb", "scale": 1 / 255, "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}
INCEPTION = {"order": "rgb", "scale": 1 / 127.5, "mean": [1.0, 1.0, 1.0], "std": [1.0, 1.0, 1.0]}
PRESETS = {"caffe": CAFFE, "pytorch": PYTORCH, "inception": INCEPTION}
FILTERS = {"bilinear": Image.Resampling.BILINEAR, "lanczos3": Image.Resampling.LANCZOS}


def resize_float(channel, width, height, filt):
    """One float channel resized by Pillow's exact float path."""
    return np.asarray(Image.fromarray(channel.astype(np.float32), "F").resize((width, height), FILTERS[filt]),
                      dtype=np.float64)


def load_hwc(path):
    """HWC float64 samples in 0..255 as the Swift Image holds them (16-bit scaled by 255/65535)."""
    im = Image.open(path)
    im.load()
    if im.mode in ("I;16", "I;16B", "I;16L", "I"):
        return np.asarray(im).astype(np.float64)[:, :, None] * 255.0 / 65535.0
    a = np.asarray(im).astype(np.float64)
    return a[:, :, None] if a.ndim == 2 else a


def to_rgb(a, alpha):
    if a.shape[2] == 1:
        return np.repeat(a, 3, axis=2)
    if a.shape[2] == 4:
        if alpha == "drop":
            return a[:, :, :3]
        w = a[:, :, 3:4] / 255.0
        return a[:, :, :3] * w + float(alpha) * (1 - w)
    return a


def round_half_even(x):
    return int(round(x))  # Python's round: halves to even, as torchvision's CenterCrop


def pipeline(a, case):
    """The preprocessing pipeline, step by step, in float64."""
    rgb = to_rgb(a, case["alpha"])
    h, w = rgb.shape[:2]
    kind = case["resize"]
    if kind == "shorterSide":
        s = case["resizeWidth"]
        if w <= h:
            tw, th = s, int(s * h / w)
        else:
            tw, th = int(s * w / h), s
    elif kind == "exact":
        tw, th = case["resizeWidth"], case["resizeHeight"]
    else:
        tw, th = w, h
    if (tw, th) != (w, h):
        rgb = np.stack([resize_float(rgb[:, :, c], tw, th, case["filter"]) for c in range(3)], axis=2)
    cw, ch = case["width"], case["height"]
    left, top = round_half_even((tw - cw) / 2.0), round_half_even((th - ch) / 2.0)
    rgb = rgb[top:top + ch, left:left + cw, :]
    rgb = np.clip(rgb, 0, 255)
    if case["order"] == "bgr":
        rgb = rgb[:, :, ::-1]
    out = (rgb * case["scale"] - np.array(case["mean"])) / np.array(case["std"])
    return [float(v) for v in out.reshape(-1)]


def write_images(rng):
    yy, xx = np.mgrid[0:17, 0:23]
    smooth = np.stack([40 + 8 * xx + 3 * yy, 220 - 9 * yy + 2 * xx, 90 + 5 * xx], axis=2)
    noisy = np.clip(smooth + rng.integers(-30, 31, size=smooth.shape), 0, 255).astype(np.uint8)
    Image.fromarray(noisy, "RGB").save(HERE / "rgb_23x17.png")
    Image.fromarray(np.ascontiguousarray(noisy.transpose(1, 0, 2)[:, ::-1]), "RGB").save(HERE / "rgb_17x23.png")
    gray = rng.integers(0, 256, size=(11, 14), dtype=np.uint8)
    gray[:, 7:] = 255  # a hard edge: Lanczos overshoots there, so the clamp matters
    gray[:, 6] = 0
    Image.fromarray(gray, "L").save(HERE / "gray_14x11.png")
    g16 = rng.integers(0, 65536, size=(9, 13), dtype=np.uint16)
    Image.fromarray(g16).save(HERE / "gray16_13x9.png")
    rgba = rng.integers(0, 256, size=(10, 12, 4), dtype=np.uint8)
    rgba[0, :, 3] = 0
    rgba[1, :, 3] = 255
    rgba[2, :, 3] = 128
    Image.fromarray(rgba, "RGBA").save(HERE / "rgba_12x10.png")


def pipeline_cases():
    def case(file, preset, width, height, resize, rw=0, rh=0, filt="bilinear", alpha=255.0, note=""):
        c = {"file": file, "preset": preset, "width": width, "height": height, "resize": resize,
             "resizeWidth": rw, "resizeHeight": rh, "filter": filt, "alpha": alpha, "note": note}
        c.update(PRESETS[preset])
        return c
    return [
        case("rgb_23x17.png", "pytorch", 8, 8, "shorterSide", 11, note="landscape, odd sizes, shrink"),
        case("rgb_17x23.png", "pytorch", 8, 8, "shorterSide", 11, note="portrait"),
        case("rgb_23x17.png", "caffe", 9, 9, "shorterSide", 10, filt="lanczos3", note="Lanczos, BGR"),
        case("rgb_23x17.png", "inception", 20, 20, "shorterSide", 29, note="enlarge"),
        case("rgb_17x23.png", "inception", 21, 25, "shorterSide", 31, filt="lanczos3", note="enlarge, Lanczos, non-square crop"),
        case("rgb_23x17.png", "pytorch", 6, 5, "exact", 7, 6, note="exact resize, aspect changed"),
        case("rgb_23x17.png", "caffe", 16, 15, "none", note="no resize: crop 16x15 from 23x17 (offsets 4 and 1)"),
        case("gray_14x11.png", "pytorch", 12, 12, "shorterSide", 16, filt="lanczos3", note="gray replicated; Lanczos overshoot clamped"),
        case("gray16_13x9.png", "inception", 7, 7, "shorterSide", 7, note="16-bit gray keeps fractional levels"),
        case("rgba_12x10.png", "caffe", 8, 8, "shorterSide", 9, note="RGBA composited over white"),
        case("rgba_12x10.png", "pytorch", 8, 8, "shorterSide", 9, alpha=0.0, note="RGBA composited over black"),
        case("rgba_12x10.png", "pytorch", 8, 8, "shorterSide", 9, alpha="drop", note="RGBA with alpha dropped"),
    ]


def photo_references():
    """torchvision's ImageNet transform and Pillow/numpy Caffe and Inception pipelines on the photo."""
    sys.path.insert(0, str(REPO / "Scripts"))
    from anvil_convert.torch_zoo import import_torchvision  # noqa: E402
    torchvision = import_torchvision()
    from torchvision import transforms as T

    image = Image.open(PHOTO).convert("RGB")
    refs = []

    # Tolerances in 0..255 levels: stb_image and libjpeg decode the JPEG a few levels apart
    # (different IDCT and chroma upsampling) and Pillow rounds to 8 bits after resizing.
    # Measured with stb_image 2.27 and Pillow 13: at most 2.0 levels, 0.34 on average.
    max_levels, mean_levels = 3.5, 0.6

    def add(name, preset, size, resize, values_hwc, note):
        p = PRESETS[preset]
        per_level = p["scale"] / min(p["std"])  # one level in output units, at worst
        flat = values_hwc.reshape(-1)
        stride = 97
        refs.append({"name": name, "preset": preset, "size": size, "resizeShorterSide": resize,
                     "stride": stride, "samples": [round(float(v), 5) for v in flat[::stride]],
                     "channelMeans": [float(v) for v in values_hwc.reshape(-1, 3).mean(axis=0)],
                     "count": int(flat.size), "tolerance": round(max_levels * per_level, 6),
                     "meanTolerance": round(mean_levels * per_level, 6), "note": note})

    pytorch = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(),
                         T.Normalize(mean=PYTORCH["mean"], std=PYTORCH["std"])])
    add("torchvision", "pytorch", 224, 256, pytorch(image).permute(1, 2, 0).numpy().astype(np.float64),
        "torchvision.transforms Resize(256) CenterCrop(224) ToTensor Normalize, torchvision " + torchvision.__version__)

    def pil_pipeline(size, resize, preset):
        resized = T.Resize(resize)(image)  # Pillow bilinear on 8 bits, antialiased
        cropped = np.asarray(T.CenterCrop(size)(resized)).astype(np.float64)
        p = PRESETS[preset]
        if p["order"] == "bgr":
            cropped = cropped[:, :, ::-1]
        return (cropped * p["scale"] - np.array(p["mean"])) / np.array(p["std"])

    add("caffe", "caffe", 224, 256, pil_pipeline(224, 256, "caffe"),
        "Pillow Resize(256) CenterCrop(224), BGR, minus the Caffe means (0..255 units)")
    add("inception", "inception", 299, 342, pil_pipeline(299, 342, "inception"),
        "Pillow Resize(342) CenterCrop(299), x / 127.5 - 1")
    return refs


def main():
    rng = np.random.default_rng(20240611)
    if not PHOTO.exists():
        import skimage.data
        PHOTO.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(skimage.data.chelsea()).save(PHOTO, quality=90)
    write_images(rng)

    lanczos = []
    for (w, h, ow, oh) in [(9, 7, 4, 3), (5, 4, 13, 11), (30, 20, 7, 9), (17, 3, 5, 3), (8, 8, 8, 3), (64, 1, 9, 1)]:
        src = rng.uniform(0, 255, size=(h, w)).astype(np.float32)
        if w >= 9:
            src[:, w // 2:] = 255  # an edge, to show the overshoot that is not clamped here
            src[:, : w // 2] = np.minimum(src[:, : w // 2], 20)
        dst = np.asarray(Image.fromarray(src, "F").resize((ow, oh), Image.Resampling.LANCZOS))
        lanczos.append({"width": w, "height": h, "outWidth": ow, "outHeight": oh,
                        "pixels": [float(v) for v in src.reshape(-1)],
                        "expected": [float(v) for v in dst.reshape(-1)]})

    pipelines = []
    for case in pipeline_cases():
        a = load_hwc(HERE / case["file"])
        case["expected"] = [round(v, 6) for v in pipeline(a, case)]
        pipelines.append(case)

    doc = {"generator": "Tests/AnvilVisionTests/Fixtures/preprocessing/generate.py",
           "pillow": Image.__version__, "lanczos": lanczos, "pipelines": pipelines, "photo": photo_references()}
    (HERE / "expected.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {len(lanczos)} Lanczos cases, {len(pipelines)} pipelines and {len(doc['photo'])} photo references to {HERE}")


if __name__ == "__main__":
    main()
