#!/usr/bin/env python3
"""Builds the converter and safetensors test fixtures.

    Scripts/install_torch.sh && pip install keras h5py onnx onnxruntime safetensors scikit-image
    python3 Scripts/converter_fixtures.py [--only NAME ...]

For each converter a small but non-trivial network is built in the source framework with
seeded random weights, a real photograph (scikit-image's public-domain `astronaut()` /
`coffee()`, resized small) is run through it there, and the network is converted with the
converter script exactly as a user would run it. Written to
Tests/AnvilTests/Fixtures/converters/<name>/: model.json, weights.bin (the converter's
output), input.f32 (one NHWC image) and expected.f32 (the source framework's output).

  keras_functional  Keras 3 (torch backend) Functional graph saved as .keras
  keras_sequential  Keras Sequential saved as legacy .h5
  caffe_resnet      hand-written prototxt (current format) + caffemodel from our own protobuf
                    writer; reference computed with PyTorch ops following Caffe's semantics
  caffe_vgg16       VGG16-style V1 prototxt (conv1_1 ... fc8, input_dim) as in the 2014 model zoo
  onnx_torch        a PyTorch model exported with torch.onnx.export; reference from PyTorch
  onnx_helper       built with onnx.helper; reference from ONNX Runtime (pip install onnxruntime)

Tests/AnvilTests/Fixtures/safetensors/: a small PyTorch model's state_dict saved by the
`safetensors` package as F32, F16, BF16 and F64, one file with Anvil's own tensor names, and
reference weights (reference_<dtype>.bin + reference.json, Anvil names) for ArrayParameterSource.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile

os.environ.setdefault("KERAS_BACKEND", "torch")

import numpy as np

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(SCRIPTS)
FIXTURES = os.path.join(REPOSITORY, "Tests", "AnvilTests", "Fixtures")
sys.path.insert(0, SCRIPTS)


def photo(name, height, width):
    """A scikit-image sample photograph resized to height x width, float32 RGB in [0, 1]."""
    import skimage.data
    import skimage.transform
    image = getattr(skimage.data, name)()
    return skimage.transform.resize(image, (height, width), anti_aliasing=True).astype(np.float32)


def write_case(name, model_directory, input_nhwc, expected):
    """Copies the converter output and writes input/expected; returns the fixture directory."""
    directory = os.path.join(FIXTURES, "converters", name)
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    for file in ("model.json", "weights.bin"):
        shutil.copy(os.path.join(model_directory, file), directory)
    np.ascontiguousarray(input_nhwc, dtype="<f4").tofile(os.path.join(directory, "input.f32"))
    np.ascontiguousarray(expected, dtype="<f4").tofile(os.path.join(directory, "expected.f32"))
    size = sum(os.path.getsize(os.path.join(directory, f)) for f in os.listdir(directory))
    flat = np.asarray(expected, np.float32).reshape(-1)
    order = np.argsort(-flat)
    gaps = np.diff(-flat[order[:6]]) if flat.size > 1 else np.array([np.inf])
    spread = float(flat.max() - flat.min())
    print(f"{name}: {size / 1024:.1f} KiB, output {flat.size} values, range {spread:.4g}, "
          f"top-5 {order[:5].tolist()}, smallest top-6 gap {gaps.min() / max(spread, 1e-12):.2e} x range")
    return directory


def separated(expected, minimum=5e-3):
    """True when the top-6 scores are far enough apart for a stable top-5 comparison."""
    flat = np.asarray(expected, np.float64).reshape(-1)
    top = np.sort(flat)[::-1][:min(6, flat.size)]
    spread = flat.max() - flat.min()
    return spread > 0 and (top.size < 2 or np.min(-np.diff(top)) > minimum * spread)


# ---------------------------------------------------------------------------------------
# Keras


def randomize_batch_norm(model, rng):
    import keras
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            weights = layer.get_weights()
            channels = weights[0].shape[0]
            new = []
            if layer.scale:
                new.append(rng.uniform(0.5, 1.5, channels))
            if layer.center:
                new.append(rng.normal(0, 0.2, channels))
            new += [rng.normal(0, 0.3, channels), rng.uniform(0.3, 2.0, channels)]
            layer.set_weights([w.astype(np.float32) for w in new])
        elif isinstance(layer, keras.layers.PReLU):
            alpha = layer.get_weights()[0]
            layer.set_weights([rng.uniform(0.05, 0.4, alpha.shape).astype(np.float32)])


def keras_functional(seed):
    import keras
    from keras import layers
    keras.utils.set_random_seed(seed)
    rng = np.random.default_rng(seed)
    inputs = keras.Input((32, 32, 3), name="image")
    x = layers.Rescaling(2.0, offset=-1.0, name="rescale")(inputs)
    x = layers.Conv2D(8, 3, strides=2, padding="same", activation="relu", name="conv1")(x)
    b1 = layers.BatchNormalization(name="bn1")(x)
    a = layers.DepthwiseConv2D(3, depth_multiplier=2, padding="same", name="dw")(b1)
    a = layers.ReLU(max_value=6.0, name="relu6")(a)
    b = layers.SeparableConv2D(16, 3, padding="same", dilation_rate=2, activation="relu", name="sep")(b1)
    s = layers.Add(name="add")([a, b])
    p = layers.ZeroPadding2D(1, name="pad")(s)
    p = layers.Conv2D(16, 3, padding="valid", groups=2, activation="elu", name="grouped")(p)
    m = layers.MaxPooling2D(2, name="pool")(p)
    m = layers.LeakyReLU(negative_slope=0.1, name="leaky")(m)
    q = layers.Conv2D(8, 1, use_bias=False, name="squeeze")(m)
    q = layers.PReLU(shared_axes=[1, 2], name="prelu")(q)
    u = layers.UpSampling2D(2, interpolation="bilinear", name="up")(q)
    v = layers.AveragePooling2D(3, strides=1, padding="same", name="avg")(b1)
    c = layers.Concatenate(name="cat")([u, v])
    w = layers.Conv2D(12, 3, strides=2, padding="same", activation="tanh", name="conv2")(c)
    r = layers.Resizing(6, 6, interpolation="bilinear", name="shrink")(w)
    r = layers.ELU(alpha=0.5, name="elu")(r)
    g = layers.Concatenate(name="pooled")([layers.GlobalAveragePooling2D(name="gap")(r),
                                           layers.GlobalMaxPooling2D(name="gmp")(w)])
    d = layers.Dense(32, activation="selu", name="fc1")(g)
    d = layers.Dropout(0.3, name="drop")(d)
    outputs = layers.Dense(10, name="logits")(d)
    model = keras.Model(inputs, outputs, name="keras_functional")
    randomize_batch_norm(model, rng)
    return model, photo("astronaut", 32, 32), ".keras"


def keras_sequential(seed):
    import keras
    from keras import layers
    keras.utils.set_random_seed(seed)
    rng = np.random.default_rng(seed)
    model = keras.Sequential([
        keras.Input((24, 24, 3)),
        layers.ZeroPadding2D(2),
        layers.Conv2D(8, 5, strides=2, padding="valid", activation="relu"),
        layers.ZeroPadding2D(1),
        layers.MaxPooling2D(3, strides=2),
        layers.Conv2D(16, 3, padding="same", activation="hard_sigmoid"),
        layers.BatchNormalization(center=False, epsilon=0.01),
        layers.ZeroPadding2D(((1, 0), (0, 1))),
        layers.AveragePooling2D(2),
        layers.Dense(12, activation="relu6"),
        layers.Activation("sigmoid"),
        layers.Flatten(),
        layers.Dense(24, activation="relu"),
        layers.Dropout(0.5),
        layers.Dense(10, activation="softmax"),
    ], name="keras_sequential")
    randomize_batch_norm(model, rng)
    for layer in model.layers:  # larger weights so the softmax output is not flat
        if isinstance(layer, keras.layers.Dense):
            weights = layer.get_weights()
            layer.set_weights([weights[0] * 3, rng.normal(0, 0.5, weights[1].shape).astype(np.float32)])
    return model, photo("coffee", 24, 24), ".h5"


def build_keras(name, builder):
    import keras
    import convert_keras
    for seed in range(1, 40):
        model, image, extension = builder(seed)
        batch = image[None]
        expected = keras.ops.convert_to_numpy(model(batch, training=False))
        if separated(expected):
            break
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, f"model{extension}")
        model.save(path)
        out = os.path.join(work, "anvil")
        writer = convert_keras.convert_file(path, out, name=name)
        print(f"  converted: {writer.summary()} (seed {seed})")
        write_case(name, out, batch, expected)


# ---------------------------------------------------------------------------------------
# Caffe: the networks as Python data, written as prototxt + caffemodel, computed with PyTorch


def caffe_resnet_spec():
    L = []
    L.append(dict(name="conv1", type="Convolution", bottom=["data"], top=["conv1"],
                  conv=dict(num_output=8, kernel=(3, 3), stride=(2, 2), pad=(1, 1), bias=False)))
    L.append(dict(name="bn1", type="BatchNorm", bottom=["conv1"], top=["conv1"], eps=1e-5))
    L.append(dict(name="scale1", type="Scale", bottom=["conv1"], top=["conv1"], bias=True))
    L.append(dict(name="relu1", type="ReLU", bottom=["conv1"], top=["conv1"]))
    L.append(dict(name="pool1", type="Pooling", bottom=["conv1"], top=["pool1"], pool="MAX", kernel=3, stride=2))
    L.append(dict(name="res2a_branch2a", type="Convolution", bottom=["pool1"], top=["res2a_branch2a"],
                  conv=dict(num_output=8, kernel=(3, 3), pad=(1, 1), bias=False)))
    L.append(dict(name="bn2a_branch2a", type="BatchNorm", bottom=["res2a_branch2a"], top=["res2a_branch2a"], eps=1e-3))
    L.append(dict(name="scale2a_branch2a", type="Scale", bottom=["res2a_branch2a"], top=["res2a_branch2a"], bias=True))
    L.append(dict(name="res2a_branch2a_relu", type="ReLU", bottom=["res2a_branch2a"], top=["res2a_branch2a"], slope=0.1))
    L.append(dict(name="res2a_branch2b", type="Convolution", bottom=["res2a_branch2a"], top=["res2a_branch2b"],
                  conv=dict(num_output=8, kernel=(3, 3), pad=(1, 1), bias=True)))
    L.append(dict(name="bn2a_branch2b", type="BatchNorm", bottom=["res2a_branch2b"], top=["res2a_branch2b"], eps=1e-5))
    L.append(dict(name="scale2a_branch2b", type="Scale", bottom=["res2a_branch2b"], top=["res2a_branch2b"], bias=True))
    L.append(dict(name="res2a", type="Eltwise", bottom=["pool1", "res2a_branch2b"], top=["res2a"]))
    L.append(dict(name="res2a_prelu", type="PReLU", bottom=["res2a"], top=["res2a"]))
    L.append(dict(name="conv3", type="Convolution", bottom=["res2a"], top=["conv3"],
                  conv=dict(num_output=16, kernel=(3, 1), pad=(1, 0), group=2, bias=True)))
    L.append(dict(name="conv3_sigmoid", type="Sigmoid", bottom=["conv3"], top=["conv3"]))
    L.append(dict(name="conv3_dw", type="Convolution", bottom=["res2a"], top=["conv3_dw"],
                  conv=dict(num_output=8, kernel=(3, 3), pad=(2, 2), dilation=2, group=8, bias=True)))
    L.append(dict(name="conv3_dw_tanh", type="TanH", bottom=["conv3_dw"], top=["conv3_dw"]))
    L.append(dict(name="concat3", type="Concat", bottom=["conv3", "conv3_dw"], top=["concat3"]))
    L.append(dict(name="pool2", type="Pooling", bottom=["concat3"], top=["pool2"], pool="AVE", kernel=3, stride=2, pad=1))
    L.append(dict(name="scale2", type="Scale", bottom=["pool2"], top=["pool2"], bias=True))
    L.append(dict(name="fc1", type="InnerProduct", bottom=["pool2"], top=["fc1"], num_output=20))
    L.append(dict(name="relu_fc1", type="ReLU", bottom=["fc1"], top=["fc1"]))
    L.append(dict(name="drop_fc1", type="Dropout", bottom=["fc1"], top=["fc1"]))
    L.append(dict(name="fc2", type="InnerProduct", bottom=["fc1"], top=["fc2"], num_output=10))
    L.append(dict(name="prob", type="Softmax", bottom=["fc2"], top=["prob"]))
    return dict(name="caffe_resnet", input=(3, 32, 32), v1=False, layers=L)


def caffe_vgg16_spec():
    L = []
    previous = "data"
    widths = [4, 8, 8, 16, 16]
    counts = [2, 2, 3, 3, 3]
    for block, (width, count) in enumerate(zip(widths, counts), start=1):
        for i in range(1, count + 1):
            name = f"conv{block}_{i}"
            L.append(dict(name=name, type="Convolution", bottom=[previous], top=[name],
                          conv=dict(num_output=width, kernel=(3, 3), pad=(1, 1), bias=True)))
            L.append(dict(name=f"relu{block}_{i}", type="ReLU", bottom=[name], top=[name]))
            previous = name
        L.append(dict(name=f"pool{block}", type="Pooling", bottom=[previous], top=[f"pool{block}"], pool="MAX",
                      kernel=2, stride=2))
        previous = f"pool{block}"
    for name, width in (("fc6", 32), ("fc7", 32)):
        L.append(dict(name=name, type="InnerProduct", bottom=[previous], top=[name], num_output=width))
        L.append(dict(name=f"relu{name[2:]}", type="ReLU", bottom=[name], top=[name]))
        L.append(dict(name=f"drop{name[2:]}", type="Dropout", bottom=[name], top=[name], ratio=0.5))
        previous = name
    L.append(dict(name="fc8", type="InnerProduct", bottom=[previous], top=["fc8"], num_output=10))
    L.append(dict(name="prob", type="Softmax", bottom=["fc8"], top=["prob"]))
    return dict(name="VGG_ILSVRC_16_layers_mini", input=(3, 64, 64), v1=True, layers=L)


V1_NAMES = {"Convolution": "CONVOLUTION", "ReLU": "RELU", "Pooling": "POOLING", "InnerProduct": "INNER_PRODUCT",
            "Dropout": "DROPOUT", "Softmax": "SOFTMAX"}


def caffe_prototxt(spec):
    v1 = spec["v1"]
    c, h, w = spec["input"]
    lines = [f'name: "{spec["name"]}"']
    if v1:
        lines += ['input: "data"'] + [f"input_dim: {d}" for d in (1, c, h, w)]
    else:
        lines += ['layer {', '  name: "data"', '  type: "Input"', '  top: "data"',
                  f'  input_param {{ shape {{ dim: 1 dim: {c} dim: {h} dim: {w} }} }}', '}']
    for layer in spec["layers"]:
        body = [f'  bottom: "{b}"' for b in layer["bottom"]] + [f'  top: "{t}"' for t in layer["top"]]
        body.append(f'  name: "{layer["name"]}"')
        body.append(f'  type: {V1_NAMES[layer["type"]]}' if v1 else f'  type: "{layer["type"]}"')
        kind = layer["type"]
        if kind == "Convolution":
            p = layer["conv"]
            opts = [f"num_output: {p['num_output']}"]
            if p["kernel"][0] == p["kernel"][1]:
                opts.append(f"kernel_size: {p['kernel'][0]}")
            else:
                opts.append(f"kernel_h: {p['kernel'][0]} kernel_w: {p['kernel'][1]}")
            pad = p.get("pad", (0, 0))
            if pad[0] == pad[1]:
                opts.append(f"pad: {pad[0]}") if pad[0] else None
            else:
                opts.append(f"pad_h: {pad[0]} pad_w: {pad[1]}")
            stride = p.get("stride", (1, 1))
            if stride != (1, 1):
                opts.append(f"stride: {stride[0]}")
            if p.get("dilation", 1) != 1:
                opts.append(f"dilation: {p['dilation']}")
            if p.get("group", 1) != 1:
                opts.append(f"group: {p['group']}")
            if not p.get("bias", True):
                opts.append("bias_term: false")
            body.append("  convolution_param {\n    " + "\n    ".join(opts) + "\n  }")
        elif kind == "Pooling":
            opts = [f"pool: {layer['pool']}", f"kernel_size: {layer['kernel']}", f"stride: {layer['stride']}"]
            if layer.get("pad"):
                opts.append(f"pad: {layer['pad']}")
            body.append("  pooling_param {\n    " + "\n    ".join(opts) + "\n  }")
        elif kind == "InnerProduct":
            body.append(f"  inner_product_param {{\n    num_output: {layer['num_output']}\n  }}")
        elif kind == "BatchNorm":
            body.append(f"  batch_norm_param {{ use_global_stats: true eps: {layer['eps']} }}")
        elif kind == "Scale":
            body.append(f"  scale_param {{ bias_term: {'true' if layer['bias'] else 'false'} }}")
        elif kind == "ReLU" and layer.get("slope"):
            body.append(f"  relu_param {{ negative_slope: {layer['slope']} }}")
        elif kind == "Dropout":
            body.append(f"  dropout_param {{ dropout_ratio: {layer.get('ratio', 0.5)} }}")
        elif kind == "Eltwise":
            body.append("  eltwise_param { operation: SUM }")
        lines.append(("layers {" if v1 else "layer {") + "\n" + "\n".join(body) + "\n}")
    return "\n".join(lines) + "\n"


def caffe_weights(spec, rng):
    """Seeded random blobs in Caffe's shapes, per layer name (channels tracked through the net)."""
    c, h, w = spec["input"]
    shapes = {"data": (c, h, w)}
    blobs = {}
    for layer in spec["layers"]:
        kind, bottom = layer["type"], layer["bottom"][0]
        ic, ih, iw = shapes[bottom] if len(shapes[bottom]) == 3 else (shapes[bottom][0], 1, 1)
        out = shapes[bottom]
        if kind == "Convolution":
            p = layer["conv"]
            kh, kw = p["kernel"]
            g, n = p.get("group", 1), p["num_output"]
            fan_in = ic // g * kh * kw
            weight = rng.normal(0, np.sqrt(2.0 / fan_in), (n, ic // g, kh, kw))
            blobs[layer["name"]] = [weight] + ([rng.normal(0, 0.1, n)] if p.get("bias", True) else [])
            pad, stride, d = p.get("pad", (0, 0)), p.get("stride", (1, 1)), p.get("dilation", 1)
            oh = (ih + 2 * pad[0] - ((kh - 1) * d + 1)) // stride[0] + 1
            ow = (iw + 2 * pad[1] - ((kw - 1) * d + 1)) // stride[1] + 1
            out = (n, oh, ow)
        elif kind == "Pooling":
            k, s, pad = layer["kernel"], layer["stride"], layer.get("pad", 0)

            def size(x):
                o = -(-(x + 2 * pad - k) // s) + 1
                return o - 1 if pad and (o - 1) * s >= x + pad else o
            out = (ic, size(ih), size(iw))
        elif kind == "InnerProduct":
            n, fan_in = layer["num_output"], int(np.prod(shapes[bottom]))
            gain = 6.0 if layer is spec["layers"][-2] else 1.0  # a peakier softmax at the end
            blobs[layer["name"]] = [rng.normal(0, gain * np.sqrt(2.0 / fan_in), (n, fan_in)), rng.normal(0, 0.1, n)]
            out = (n,)
        elif kind == "BatchNorm":
            factor = 999.982  # Caffe's moving-average scale factor; mean and variance are stored multiplied by it
            blobs[layer["name"]] = [rng.normal(0, 0.3, ic) * factor, rng.uniform(0.5, 2.0, ic) * factor,
                                    np.array([factor])]
        elif kind == "Scale":
            blobs[layer["name"]] = [rng.uniform(0.6, 1.4, ic)] + ([rng.normal(0, 0.2, ic)] if layer["bias"] else [])
        elif kind == "PReLU":
            blobs[layer["name"]] = [rng.uniform(0.05, 0.3, ic)]
        elif kind == "Concat":
            out = (sum(shapes[b][0] for b in layer["bottom"]),) + shapes[bottom][1:]
        for top in layer["top"]:
            shapes[top] = out
    return {k: [np.asarray(b, np.float32) for b in v] for k, v in blobs.items()}


def caffe_forward(spec, blobs, image_chw):
    """The network computed with PyTorch ops, following Caffe's layer semantics."""
    import torch
    import torch.nn.functional as F
    t = {"data": torch.from_numpy(image_chw[None].astype(np.float32))}
    for layer in spec["layers"]:
        kind, x = layer["type"], t[layer["bottom"][0]]
        B = [torch.from_numpy(b) for b in blobs.get(layer["name"], [])]
        if kind == "Convolution":
            p = layer["conv"]
            y = F.conv2d(x, B[0], B[1] if len(B) > 1 else None, stride=p.get("stride", (1, 1)), padding=p.get("pad", (0, 0)),
                         dilation=p.get("dilation", 1), groups=p.get("group", 1))
        elif kind == "BatchNorm":
            factor = 0 if B[2].item() == 0 else 1 / B[2].item()
            mean, var = B[0] * factor, B[1] * factor
            y = (x - mean.view(1, -1, 1, 1)) / torch.sqrt(var.view(1, -1, 1, 1) + layer["eps"])
        elif kind == "Scale":
            y = x * B[0].view(1, -1, 1, 1) + (B[1].view(1, -1, 1, 1) if len(B) > 1 else 0)
        elif kind == "ReLU":
            y = F.leaky_relu(x, layer.get("slope", 0.0))
        elif kind == "PReLU":
            y = F.prelu(x, B[0])
        elif kind == "Sigmoid":
            y = torch.sigmoid(x)
        elif kind == "TanH":
            y = torch.tanh(x)
        elif kind == "Pooling":
            k, s, pad = layer["kernel"], layer["stride"], layer.get("pad", 0)
            if layer["pool"] == "MAX":
                y = F.max_pool2d(x, k, s, pad, ceil_mode=True)
            else:  # Caffe's AVE pooling divides by the window clipped to the padded input
                y = F.avg_pool2d(x, k, s, pad, ceil_mode=True, count_include_pad=True)
        elif kind == "Eltwise":
            y = sum(t[b] for b in layer["bottom"])
        elif kind == "Concat":
            y = torch.cat([t[b] for b in layer["bottom"]], 1)
        elif kind == "InnerProduct":
            y = F.linear(x.reshape(x.shape[0], -1), B[0], B[1])
        elif kind == "Dropout":
            y = x
        elif kind == "Softmax":
            y = torch.softmax(x, 1)
        else:
            raise ValueError(kind)
        for top in layer["top"]:
            t[top] = y
    return t[spec["layers"][-1]["top"][0]].numpy()


def build_caffe(name, spec_builder, image, transform):
    import convert_caffe
    spec = spec_builder()
    for seed in range(1, 40):
        rng = np.random.default_rng(seed)
        blobs = caffe_weights(spec, rng)
        chw = transform(image)
        expected = caffe_forward(spec, blobs, chw)
        if separated(expected):
            break
    with tempfile.TemporaryDirectory() as work:
        prototxt = os.path.join(work, "deploy.prototxt")
        caffemodel = os.path.join(work, "weights.caffemodel")
        with open(prototxt, "w") as handle:
            handle.write(caffe_prototxt(spec))
        types = {layer["name"]: layer["type"] for layer in spec["layers"]}
        with open(caffemodel, "wb") as handle:
            handle.write(convert_caffe.encode_caffemodel([(k, types[k], v) for k, v in blobs.items()], v1=spec["v1"],
                                                         name=spec["name"]))
        out = os.path.join(work, "anvil")
        writer = convert_caffe.convert_files(prototxt, caffemodel, out, name=name)
        print(f"  converted: {writer.summary()} (seed {seed})")
        directory = write_case(name, out, chw.transpose(1, 2, 0)[None], expected)
        shutil.copy(prototxt, os.path.join(directory, "deploy.prototxt"))


def caffe_resnet():
    build_caffe("caffe_resnet", caffe_resnet_spec, photo("astronaut", 32, 32),
                lambda img: ((img - 0.5) * 2).transpose(2, 0, 1))


def caffe_vgg16():
    # VGG's preprocessing: BGR, 0-255, mean subtracted.
    mean = np.array([103.939, 116.779, 123.68], np.float32)
    build_caffe("caffe_vgg16", caffe_vgg16_spec, photo("coffee", 64, 64),
                lambda img: ((img[:, :, ::-1] * 255 - mean) / 64).transpose(2, 0, 1))


# ---------------------------------------------------------------------------------------
# ONNX


def onnx_torch():
    import torch
    import torch.nn as nn
    import convert_onnx

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
            self.stem_bn = nn.BatchNorm2d(16)
            self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
            self.dw_bn = nn.BatchNorm2d(16)
            self.pw = nn.Conv2d(16, 24, 1)
            self.mix_bn = nn.BatchNorm2d(48)
            self.prelu = nn.PReLU(48)
            self.grouped = nn.Conv2d(48, 32, 3, padding=2, dilation=2, groups=4)
            self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
            self.a = nn.Conv2d(32, 16, 3, stride=2, padding=1)
            self.b = nn.Conv2d(32, 16, 1, stride=2)
            self.fc1 = nn.Linear(16 * 2 * 2 + 16 + 16, 32)
            self.fc2 = nn.Linear(32, 10)

        def forward(self, x):
            x = torch.relu(self.stem_bn(self.stem(x)))                      # 16x16x16
            x = torch.clamp(self.dw_bn(self.dw(x)), 0, 6)                     # Clip -> relu6
            x = nn.functional.hardswish(self.pw(x))                           # 16x16x24
            m = nn.functional.max_pool2d(x, 3, 2, 0, ceil_mode=True)          # 8x8x24
            a = nn.functional.avg_pool2d(x, 3, 2, 1, count_include_pad=False)
            x = torch.cat([m, a], 1)                                          # 8x8x48
            x = self.prelu(nn.functional.leaky_relu(self.mix_bn(x), 0.1))
            x = nn.functional.elu(self.grouped(x), 0.7)                       # 8x8x32
            x = self.up(x)                                                    # 16x16x32
            x = torch.sigmoid(self.a(x)) + torch.tanh(self.b(x))              # 8x8x16
            spatial = nn.functional.adaptive_avg_pool2d(x, 2)                 # 2x2x16
            features = torch.cat([torch.flatten(spatial, 1),
                                  nn.functional.adaptive_avg_pool2d(x, 1).view(x.size(0), -1),
                                  nn.functional.adaptive_max_pool2d(x, 1).view(x.size(0), -1)], 1)
            x = nn.functional.selu(self.fc1(features))
            x = nn.functional.dropout(x, 0.5, self.training)
            return torch.log_softmax(self.fc2(x), 1)

    for seed in range(1, 40):
        torch.manual_seed(seed)
        net = Net()
        with torch.no_grad():
            for module in net.modules():
                if isinstance(module, nn.BatchNorm2d):
                    module.running_mean.normal_(0, 0.3)
                    module.running_var.uniform_(0.5, 2.0)
                    module.weight.uniform_(0.5, 1.5)
                    module.bias.normal_(0, 0.2)
            net.fc2.weight.mul_(4)
        net.eval()
        image = photo("astronaut", 32, 32)
        x = torch.from_numpy(((image - 0.5) / 0.25).transpose(2, 0, 1)[None].copy())
        with torch.no_grad():
            expected = net(x).numpy()
        if separated(expected):
            break
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "model.onnx")
        torch.onnx.export(net, (x,), path, dynamo=False, opset_version=17, input_names=["image"], output_names=["scores"])
        out = os.path.join(work, "anvil")
        writer = convert_onnx.convert_file(path, out, name="onnx_torch")
        print(f"  converted: {writer.summary()} (seed {seed})")
        write_case("onnx_torch", out, x.numpy().transpose(0, 2, 3, 1), expected)


def onnx_helper_model(rng):
    from onnx import TensorProto, helper, numpy_helper
    inits = {}

    def const(name, array, dtype=np.float32):
        inits[name] = np.asarray(array, dtype)
        return name

    def conv_weights(name, out, inp, k):
        const(f"{name}_w", rng.normal(0, np.sqrt(2 / (inp * k * k)), (out, inp, k, k)))
        const(f"{name}_b", rng.normal(0, 0.1, out))
        return [f"{name}_w", f"{name}_b"]

    N = helper.make_node
    nodes = [
        N("Conv", ["x"] + conv_weights("c1", 8, 3, 4), ["c1"], name="conv_same_lower", auto_pad="SAME_LOWER", strides=[2, 2]),
        N("BatchNormalization", ["c1", const("g", rng.uniform(0.5, 1.5, 8)), const("be", rng.normal(0, 0.2, 8)),
                                 const("mu", rng.normal(0, 0.3, 8)), const("var", rng.uniform(0.5, 2, 8))], ["bn"],
          name="bn", epsilon=1e-3),
        N("Clip", ["bn", const("lo", -0.5), const("hi", 2.5)], ["clip"], name="clip"),
        N("MaxPool", ["clip"], ["mp"], name="maxpool_same", kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
        N("Conv", ["mp"] + conv_weights("c2", 8, 8, 3), ["c2"], name="conv2", pads=[1, 0, 1, 2], dilations=[1, 1]),
        N("Selu", ["c2"], ["selu"], name="selu"),
        N("Conv", ["mp"] + conv_weights("c3", 8, 8, 1), ["c3"], name="conv3", pads=[0, 0, 0, 0]),
        N("HardSigmoid", ["c3"], ["hs"], name="hardsigmoid", alpha=0.3, beta=0.4),
        N("Identity", ["hs"], ["hs_id"]),
        N("Sum", ["selu", "hs_id", "c3"], ["sum"], name="sum3"),
        N("AveragePool", ["sum"], ["ap"], name="avg_including_pads", kernel_shape=[3, 3], strides=[1, 1],
          pads=[1, 1, 1, 1], count_include_pad=1),
        N("Resize", ["ap", "", "", const("sizes", [1, 8, 7, 9], np.int64)], ["rs"], name="resize",
          mode="linear", coordinate_transformation_mode="align_corners"),
        N("Elu", ["rs"], ["elu"], name="elu", alpha=0.5),
        N("LeakyRelu", ["elu"], ["lr"], name="leaky", alpha=0.2),
        N("Softmax", ["lr"], ["sm"], name="channel_softmax", axis=1),
        N("Dropout", ["sm"], ["dr"], name="dropout"),
        N("GlobalMaxPool", ["lr"], ["gmp"], name="gmp"),
        N("Tanh", ["dr"], ["th"], name="tanh"),
        N("Sigmoid", ["th"], ["sg"], name="sigmoid"),
        N("Concat", ["sg", "sm"], ["cat"], name="concat", axis=1),
        N("Shape", ["cat"], ["shape"]),
        N("Gather", ["shape", const("zero", 0, np.int64)], ["batch"], axis=0),
        N("Unsqueeze", ["batch", const("axes0", [0], np.int64)], ["batch1"]),
        N("Concat", ["batch1", const("minus1", [-1], np.int64)], ["target"], axis=0),
        N("Reshape", ["cat", "target"], ["flat"], name="reshape"),
        N("MatMul", ["flat", const("mw", rng.normal(0, np.sqrt(2 / (16 * 7 * 9)), (16 * 7 * 9, 24)))], ["mm"], name="matmul"),
        N("Add", ["mm", const("mb", rng.normal(0, 0.1, 24))], ["mmb"], name="matmul_bias"),
        N("Flatten", ["gmp"], ["gflat"], name="flatten_gmp"),
        N("Gemm", ["gflat", const("gw", rng.normal(0, 0.5, (8, 24))), const("gb", rng.normal(0, 0.1, 24))], ["gm"],
          name="gemm_nt", alpha=0.5, beta=2.0),
        N("Add", ["mmb", "gm"], ["feat"], name="add"),
        N("HardSwish", ["feat"], ["hsw"], name="hardswish"),
        N("PRelu", ["hsw", const("slope", rng.uniform(0.05, 0.3, 24))], ["pr"], name="prelu"),
        N("Gemm", ["pr", const("ow", rng.normal(0, 0.6, (10, 24))), const("ob", rng.normal(0, 0.1, 10))], ["logits"],
          name="classifier", transB=1),
        N("LogSoftmax", ["logits"], ["y"], name="log_softmax", axis=1),
    ]
    graph = helper.make_graph(nodes, "onnx_helper",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 21, 21])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def onnx_reference(model, x):
    """ONNX Runtime's output if installed, else onnx's ReferenceEvaluator. (onnx 1.22's evaluator
    pads strided SAME_UPPER/SAME_LOWER convolutions differently from the ONNX spec, ONNX Runtime,
    TensorFlow and Anvil, so the fixture is made with ONNX Runtime.)"""
    try:
        import onnxruntime
    except ImportError:
        from onnx.reference import ReferenceEvaluator
        print("  (onnxruntime not installed: using onnx.reference.ReferenceEvaluator)")
        return ReferenceEvaluator(model).run(None, {"x": x})[0]
    copy = type(model)()
    copy.CopyFrom(model)
    copy.ir_version = min(copy.ir_version, 9)
    session = onnxruntime.InferenceSession(copy.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def onnx_helper():
    import onnx
    import convert_onnx
    image = photo("coffee", 21, 21)
    x = ((image - 0.45) / 0.25).transpose(2, 0, 1)[None].astype(np.float32).copy()
    for seed in range(1, 40):
        model = onnx_helper_model(np.random.default_rng(seed))
        onnx.checker.check_model(model)
        expected = onnx_reference(model, x)
        if separated(expected):
            break
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "model.onnx")
        onnx.save(model, path)
        out = os.path.join(work, "anvil")
        writer = convert_onnx.convert_file(path, out, name="onnx_helper")
        print(f"  converted: {writer.summary()} (seed {seed})")
        write_case("onnx_helper", out, x.transpose(0, 2, 3, 1), expected)


# ---------------------------------------------------------------------------------------
# safetensors


def safetensors_fixtures():
    import torch
    import torch.nn as nn
    from safetensors.torch import save_file

    torch.manual_seed(7)
    features = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),          # features.0
        nn.BatchNorm2d(8),                      # features.1
        nn.ReLU(),                              # features.2
        nn.Conv2d(8, 8, 3, padding=1, groups=8),  # features.3 (depthwise)
        nn.BatchNorm2d(8),                      # features.4
        nn.PReLU(8),                            # features.5
        nn.MaxPool2d(2),                        # features.6
    )
    classifier = nn.Linear(8 * 6 * 6, 10)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = features
            self.classifier = classifier

        def forward(self, x):
            return self.classifier(torch.flatten(self.features(x), 1))

    net = Net()
    with torch.no_grad():
        for module in net.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.normal_(0, 0.3)
                module.running_var.uniform_(0.5, 2.0)
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_(0, 0.2)
        net.features[5].weight.uniform_(0.05, 0.3)
    net.eval()
    directory = os.path.join(FIXTURES, "safetensors")
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    image = photo("astronaut", 12, 12)
    x = torch.from_numpy(((image - 0.5) * 2).transpose(2, 0, 1)[None].copy())
    with torch.no_grad():
        expected = net(x).numpy()
    x.numpy().transpose(0, 2, 3, 1).astype("<f4").tofile(os.path.join(directory, "input.f32"))
    expected.astype("<f4").tofile(os.path.join(directory, "expected.f32"))

    def anvil_name(key):
        layer, field = key.rsplit(".", 1)
        layer = layer.replace(".", "_")
        suffix = {"weight": "W", "bias": "b", "running_mean": "mean", "running_var": "variance"}[field]
        if layer in ("features_1", "features_4"):
            suffix = {"W": "gamma", "b": "beta"}.get(suffix, suffix)
        if layer == "features_5":
            suffix = "slopes"
        return f"{layer}_{suffix}"

    state = net.state_dict()
    index, offset = {}, 0
    float_keys = [k for k, v in state.items() if v.dtype.is_floating_point]
    for key in float_keys:
        index[anvil_name(key)] = {"offset": offset, "count": state[key].numel(), "key": key}
        offset += state[key].numel() * 4
    with open(os.path.join(directory, "reference.json"), "w") as handle:
        json.dump({"tensors": index}, handle, indent=1)
    for label, dtype in (("f32", torch.float32), ("f16", torch.float16), ("bf16", torch.bfloat16), ("f64", torch.float64)):
        typed = {k: (v.to(dtype) if v.dtype.is_floating_point else v).contiguous() for k, v in state.items()}
        save_file(typed, os.path.join(directory, f"model_{label}.safetensors"), metadata={"format": "pt", "dtype": label})
        with open(os.path.join(directory, f"reference_{label}.bin"), "wb") as handle:
            for key in float_keys:
                handle.write(typed[key].to(torch.float32).numpy().astype("<f4").tobytes())
    anvil = {anvil_name(k): state[k].contiguous() for k in float_keys}
    save_file(anvil, os.path.join(directory, "model_anvil_names.safetensors"))
    size = sum(os.path.getsize(os.path.join(directory, f)) for f in os.listdir(directory))
    print(f"safetensors: {size / 1024:.1f} KiB, {len(float_keys)} float tensors, "
          f"{len(state) - len(float_keys)} integer (num_batches_tracked)")


TARGETS = {
    "keras_functional": lambda: build_keras("keras_functional", keras_functional),
    "keras_sequential": lambda: build_keras("keras_sequential", keras_sequential),
    "caffe_resnet": caffe_resnet,
    "caffe_vgg16": caffe_vgg16,
    "onnx_torch": onnx_torch,
    "onnx_helper": onnx_helper,
    "safetensors": safetensors_fixtures,
}


def main():
    parser = argparse.ArgumentParser(description="Builds the converter and safetensors test fixtures.")
    parser.add_argument("--only", nargs="*", choices=sorted(TARGETS), help="build only these")
    args = parser.parse_args()
    for name in args.only or TARGETS:
        print(f"== {name}")
        TARGETS[name]()
    total = 0
    for root in (os.path.join(FIXTURES, "converters"), os.path.join(FIXTURES, "safetensors")):
        for folder, _, files in os.walk(root):
            total += sum(os.path.getsize(os.path.join(folder, f)) for f in files)
    print(f"total fixture size: {total / 1024:.1f} KiB")


if __name__ == "__main__":
    main()
