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
    ("unknown input size", lambda: functional(layers.Conv2D(4, 3), shape=(None, None, 3)), ("--input-shape",)),
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


def test_one_dimensional_layers_match_keras(tmp_path):
    """Conv1D, MaxPooling1D, AveragePooling1D, Dense per position, GlobalAveragePooling1D on a
    (length, channels) input: converted, run by `anvil run`, compared with Keras' own output."""
    import subprocess

    import numpy as np

    from conftest import REPOSITORY
    anvil = os.path.join(REPOSITORY, ".build", "debug", "anvil")
    if not os.path.exists(anvil):
        pytest.skip(f"{anvil} is not built (swift build)")
    keras.utils.set_random_seed(5)
    model = functional(layers.Conv1D(6, 3, strides=2, padding="same", activation="relu"),
                       layers.Conv1D(5, 2, dilation_rate=2), layers.MaxPooling1D(2, padding="same"),
                       layers.AveragePooling1D(2, strides=1), layers.Dense(4, activation="tanh"),
                       layers.GlobalAveragePooling1D(), layers.Dense(3), shape=(23, 3))
    x = np.random.default_rng(2).standard_normal((2, 23, 3)).astype(np.float32)
    expected = np.asarray(model.predict(x, verbose=0))
    writer = KerasConverter(model).convert()
    assert [layer["type"] for layer in writer.layers] == ["Convolution", "Convolution", "MaxPooling", "AveragePooling",
                                                          "Dense", "GlobalAveragePooling", "Dense"]
    assert writer.inputs[0]["shape"] == [23, 3]
    writer.write(str(tmp_path / "m"))
    x.tofile(tmp_path / "x.f32")
    completed = subprocess.run([anvil, "run", "--model", str(tmp_path / "m" / "model.json"), "--input",
                                str(tmp_path / "x.f32"), "--output", str(tmp_path / "y.f32")],
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    actual = np.fromfile(tmp_path / "y.f32", np.float32).reshape(expected.shape)
    assert np.abs(actual - expected).max() <= 1e-4 * max(1.0, np.abs(expected).max())
