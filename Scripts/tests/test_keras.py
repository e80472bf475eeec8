"""Tests of anvil_convert.from_keras: the layer mapping on small models, .keras and .h5
files, and the error messages. Skipped when keras (with a backend) is not installed."""

import os

import pytest

from helpers import conversion_error, framework

os.environ.setdefault("KERAS_BACKEND", "torch")
keras = framework("keras")
from keras import layers  # noqa: E402

from anvil_convert.from_keras import KerasConverter, convert_file  # noqa: E402


def functional(*stack, shape=(8, 8, 3)):
    """A Functional model applying `stack` in order to one input of `shape`."""
    inputs = keras.Input(shape)
    x = inputs
    for layer in stack:
        x = layer(x)
    return keras.Model(inputs, x)


@pytest.mark.parametrize("label, build, fragments", [
    ("unsupported layer", lambda: functional(layers.Conv2DTranspose(4, 3, name="up1")),
     ("'up1'", "Conv2DTranspose", "not supported")),
    ("unsupported activation", lambda: functional(layers.Conv2D(4, 3, activation="gelu", name="c1")),
     ("'c1'", "Conv2D", "gelu")),
    ("zero padding into max pooling of signed values",
     lambda: functional(layers.ZeroPadding2D(1, name="zp"), layers.MaxPooling2D(2, name="mp")),
     ("'mp'", "MaxPooling2D", "ZeroPadding2D")),
    ("zero padding into dense", lambda: functional(layers.ZeroPadding2D(1, name="zp"), layers.Flatten(name="fl")),
     ("'fl'", "Flatten", "ZeroPadding2D")),
    ("zero padding as output", lambda: functional(layers.ZeroPadding2D(1, name="zp")), ("'zp'", "ZeroPadding2D")),
    ("nearest upsampling", lambda: functional(layers.UpSampling2D(name="us")), ("'us'", "UpSampling2D", "nearest")),
    ("unshared PReLU", lambda: functional(layers.Conv2D(4, 3, name="c"),
                                          layers.PReLU(alpha_initializer="random_uniform", name="pr")),
     ("'pr'", "PReLU", "shared_axes")),
    ("softmax over height", lambda: functional(layers.Softmax(axis=1, name="sm")), ("'sm'", "Softmax", "axis")),
    ("channels_first", lambda: functional(layers.Conv2D(4, 3, data_format="channels_first", name="cf")),
     ("'cf'", "channels_first")),
    ("multiply", lambda: (lambda i: keras.Model(i, layers.Multiply(name="mul")([i, i])))(keras.Input((4, 4, 2))),
     ("'mul'", "Multiply")),
    ("reshape", lambda: functional(layers.Reshape((64, 3), name="rs")), ("'rs'", "Reshape")),
    ("flatten of an open size", lambda: functional(layers.Conv2D(4, 3), layers.Flatten(name="fl"), shape=(None, None, 3)),
     ("'fl'", "Flatten", "open", "--input-shape")),
    ("zero padding on an open size", lambda: functional(layers.ZeroPadding2D(1, name="zp"), layers.Conv2D(4, 3, name="c"),
                                                       shape=(None, None, 3)), ("'c'", "open", "--input-shape")),
])
def test_errors_name_the_layer(label, build, fragments):
    """Each unsupported construct is one ConversionError naming the layer, its class and why."""
    conversion_error(lambda: KerasConverter(build()).convert(), *fragments)


@pytest.mark.parametrize("extension", ["keras", "h5"])
def test_files_convert_with_padding_folded(tmp_path, extension):
    """A Sequential model saved as .keras and as legacy .h5 converts; every ZeroPadding2D is
    folded into the next layer's explicit padding; the layout is tensorflow."""
    model = keras.Sequential([keras.Input((9, 9, 3)), layers.ZeroPadding2D(((1, 2), (0, 1))),
                              layers.Conv2D(4, 3, strides=2, padding="same", activation="relu"),
                              layers.ZeroPadding2D(1), layers.MaxPooling2D(2),
                              layers.ZeroPadding2D(1), layers.AveragePooling2D(3),
                              layers.Flatten(), layers.Dropout(0.5), layers.Dense(3, activation="softmax")])
    path = str(tmp_path / f"m.{extension}")
    model.save(path)
    writer = convert_file(path, str(tmp_path / "out"))
    types = [layer["type"] for layer in writer.layers]
    assert "ZeroPadding2D" not in types and types[0] == "Convolution" and types[-1] == "Softmax"
    assert isinstance(writer.layers[0]["padding"], list) and writer.layout == "tensorflow"
    assert os.path.exists(tmp_path / "out" / "weights.bin")


def test_open_input_size_stays_open(tmp_path):
    """Input(shape=(None, None, 3)): the model file's input is [null, null, 3]; the layers are
    written as for a fixed size, bilinear UpSampling2D as a Resize by its factors. With
    --input-shape the sizes are fixed instead."""
    inputs = keras.Input((None, None, 3))
    x = layers.Conv2D(4, 3, strides=2, padding="same", activation="relu", name="c1")(inputs)
    x = layers.MaxPooling2D(2, name="mp")(x)
    x = layers.UpSampling2D(2, interpolation="bilinear", name="up")(x)
    y = layers.Conv2D(2, 1, name="head")(x)
    model = keras.Model(inputs, y)
    writer = KerasConverter(model).convert()
    assert writer.inputs[0]["shape"] == [None, None, 3]
    up = next(layer for layer in writer.layers if layer["type"] == "Resize")
    assert up["scale"] == [2.0, 2.0] and up["coordinates"] == "halfPixel"
    fixed = KerasConverter(model, input_shape=(16, 12)).convert()
    assert fixed.inputs[0]["shape"] == [16, 12, 3]
    assert next(layer for layer in fixed.layers if layer["type"] == "Resize")["size"] == [8, 6]
