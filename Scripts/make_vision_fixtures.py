#!/usr/bin/env python3
"""Generate the tiny image fixtures that AnvilVision's tests decode.

Writes into Tests/AnvilVisionTests/Fixtures/vision/:

  *.png / *.jpg          small images in every layout the decoder must handle
                         (grayscale, RGB, RGBA, gray+alpha, palette, 16-bit gray,
                         16-bit RGB, odd sizes, JPEG with and without chroma subsampling)
  expected.json          for each image: width, height, channels and the pixel values
                         (HWC, row-major, 0...255 floats) as Pillow decodes them, plus the
                         tolerance the test allows; and a few Pillow resize results
                         (mode "F", BILINEAR, which antialiases when shrinking) to compare
                         Image.resized(width:height:) against.

Requirements: Pillow and numpy (pip install pillow numpy). The output is deterministic
(fixed random seed); re-running it rewrites the same files.

Usage: python3 Scripts/make_vision_fixtures.py [OUTPUT_DIR]
"""

import json
import struct
import sys
import zlib
from pathlib import Path

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "Tests" / "AnvilVisionTests" / "Fixtures" / "vision"


def pillow_pixels(path):
    """Decode `path` with Pillow into (width, height, channels, HWC float list in 0...255).

    The channel count follows stb_image's rules, which AnvilVision reports:
    gray -> 1, gray+alpha -> 4 (expanded to RGBA), RGB -> 3, RGBA -> 4,
    palette -> RGB (or RGBA if the palette has transparency).
    16-bit samples are scaled to 0...255 as v * 255 / 65535.
    """
    im = Image.open(path)
    im.load()
    mode = im.mode
    if mode in ("I;16", "I;16B", "I;16L", "I"):
        a = np.asarray(im).astype(np.float64) * 255.0 / 65535.0
        a = a[:, :, None]
    elif mode == "L":
        a = np.asarray(im).astype(np.float64)[:, :, None]
    elif mode == "LA":
        la = np.asarray(im).astype(np.float64)
        a = np.stack([la[:, :, 0], la[:, :, 0], la[:, :, 0], la[:, :, 1]], axis=2)
    elif mode == "P":
        has_alpha = "transparency" in im.info
        a = np.asarray(im.convert("RGBA" if has_alpha else "RGB")).astype(np.float64)
    elif mode in ("RGB", "RGBA"):
        a = np.asarray(im).astype(np.float64)
    else:
        raise SystemExit(f"unexpected Pillow mode {mode} for {path}")
    h, w, c = a.shape
    return w, h, c, [round(float(v), 6) for v in a.reshape(-1)]


def write_png_rgb16(path, rgb16):
    """Write a 16-bit-per-channel RGB PNG by hand (Pillow cannot write one)."""
    h, w, _ = rgb16.shape

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + rgb16[y].astype(">u2").tobytes() for y in range(h))  # filter 0 per row
    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9))
    png += chunk(b"IEND", b"")
    path.write_bytes(png)


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_OUT
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20240601)
    entries = []

    def add(name, tolerance, note):
        w, h, c, pixels = pillow_pixels(out / name)
        entries.append({"file": name, "width": w, "height": h, "channels": c,
                        "tolerance": tolerance, "note": note, "pixels": pixels})

    # 8-bit grayscale, odd size.
    gray = rng.integers(0, 256, size=(5, 7), dtype=np.uint8)
    Image.fromarray(gray, "L").save(out / "gray_7x5.png")
    add("gray_7x5.png", 0, "8-bit grayscale PNG, 7x5")

    # 8-bit RGB, odd size.
    rgb = rng.integers(0, 256, size=(5, 7, 3), dtype=np.uint8)
    Image.fromarray(rgb, "RGB").save(out / "rgb_7x5.png")
    add("rgb_7x5.png", 0, "8-bit RGB PNG, 7x5")

    # 8-bit RGBA with fully transparent, half and opaque alpha values.
    rgba = rng.integers(0, 256, size=(3, 5, 4), dtype=np.uint8)
    rgba[0, 0, 3] = 0
    rgba[0, 1, 3] = 128
    rgba[0, 2, 3] = 255
    Image.fromarray(rgba, "RGBA").save(out / "rgba_5x3.png")
    add("rgba_5x3.png", 0, "8-bit RGBA PNG, 5x3")

    # Gray + alpha: decoded as RGBA (gray replicated).
    la = rng.integers(0, 256, size=(3, 4, 2), dtype=np.uint8)
    Image.fromarray(la, "LA").save(out / "gray_alpha_4x3.png")
    add("gray_alpha_4x3.png", 0, "8-bit gray+alpha PNG, 4x3, expands to RGBA")

    # Palette PNG: expands to RGB.
    pal_rgb = rng.integers(0, 256, size=(4, 5, 3), dtype=np.uint8)
    Image.fromarray(pal_rgb, "RGB").quantize(colors=6, dither=Image.Dither.NONE).save(out / "palette_5x4.png")
    add("palette_5x4.png", 0, "8-bit palette PNG, 5x4, expands to RGB")

    # 16-bit grayscale with values whose low byte matters (an 8-bit decode would be off).
    g16 = rng.integers(0, 65536, size=(4, 6), dtype=np.uint16)
    g16[0, 0], g16[0, 1], g16[0, 2] = 0, 65535, 257 * 100 + 128
    Image.fromarray(g16).save(out / "gray16_6x4.png")
    add("gray16_6x4.png", 0.0001, "16-bit grayscale PNG, 6x4, scaled v*255/65535")

    # 16-bit RGB, written by hand; expected values come from the source array (Pillow would
    # truncate to 8 bits when reading it).
    c16 = rng.integers(0, 65536, size=(2, 3, 3), dtype=np.uint16)
    c16[0, 0] = (0, 65535, 32768)
    write_png_rgb16(out / "rgb16_3x2.png", c16)
    entries.append({"file": "rgb16_3x2.png", "width": 3, "height": 2, "channels": 3,
                    "tolerance": 0.0001, "note": "16-bit RGB PNG, 3x2, written by hand",
                    "pixels": [round(float(v) * 255.0 / 65535.0, 6) for v in c16.reshape(-1)]})

    # JPEGs: smooth content so the codecs' IDCT/upsampling differences stay small.
    # stb_image and libjpeg (Pillow) use different IDCTs and chroma upsamplers, so the
    # comparison has a tolerance: with stb_image 2.27 and Pillow 13 the measured maximum
    # differences are 0 (gray), 2 (4:4:4) and 2 (4:2:0) levels; the tolerances add a margin.
    yy, xx = np.mgrid[0:7, 0:9]
    gj = (40 + 20 * xx + 8 * yy).clip(0, 255).astype(np.uint8)
    Image.fromarray(gj, "L").save(out / "gray_9x7.jpg", quality=95)
    add("gray_9x7.jpg", 1, "grayscale JPEG, 9x7, quality 95")

    yy, xx = np.mgrid[0:12, 0:16]
    cj = np.stack([(30 + 12 * xx), (200 - 10 * yy), (60 + 6 * xx + 5 * yy)], axis=2).clip(0, 255).astype(np.uint8)
    Image.fromarray(cj, "RGB").save(out / "rgb444_16x12.jpg", quality=95, subsampling=0)
    add("rgb444_16x12.jpg", 3, "RGB JPEG, 16x12, quality 95, 4:4:4")

    yy, xx = np.mgrid[0:9, 0:15]
    cj2 = np.stack([(20 + 14 * xx), (220 - 12 * yy), (90 + 5 * xx + 6 * yy)], axis=2).clip(0, 255).astype(np.uint8)
    Image.fromarray(cj2, "RGB").save(out / "rgb420_15x9.jpg", quality=95, subsampling=2)
    add("rgb420_15x9.jpg", 4, "RGB JPEG, 15x9 (odd), quality 95, 4:2:0 chroma subsampling")

    # Resize references: Pillow's BILINEAR on float images ("F" mode) uses a triangle filter
    # widened by the shrink factor, with pixel centres at half-integers.
    resizes = []
    for (w, h, ow, oh) in [(9, 7, 4, 3), (5, 4, 13, 11), (30, 20, 7, 9)]:
        src = rng.uniform(0, 255, size=(h, w)).astype(np.float32)
        dst = np.asarray(Image.fromarray(src, "F").resize((ow, oh), Image.Resampling.BILINEAR))
        resizes.append({"width": w, "height": h, "outWidth": ow, "outHeight": oh,
                        "pixels": [float(v) for v in src.reshape(-1)],
                        "expected": [float(v) for v in dst.reshape(-1)]})

    doc = {"generator": "Scripts/make_vision_fixtures.py",
           "pillow": Image.__version__ if hasattr(Image, "__version__") else "",
           "images": entries, "resize": resizes}
    (out / "expected.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {len(entries)} images and {len(resizes)} resize cases to {out}")


if __name__ == "__main__":
    main()
