"""Tests of anvil_convert.from_keras: the layer mapping on small models, .keras and .h5
files, and the error messages. Skipped when keras (with a backend) is not installed."""

import os

import pytest

from helpers import conversion_error, framework, run_anvil

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
    ("unsupported layer", lambda: functional(layers.Cropping2D(1, name="crop")),
     ("'crop'", "Cropping2D", "not supported")),
    ("unsupported activation", lambda: functional(layers.Conv2D(4, 3, activation="hard_shrink", name="c1")),
     ("'c1'", "Conv2D", "hard_shrink")),
    ("zero padding into max pooling of signed values",
     lambda: functional(layers.ZeroPadding2D(1, name="zp"), layers.MaxPooling2D(2, name="mp")),
     ("'mp'", "MaxPooling2D", "ZeroPadding2D")),
    ("lanczos resizing", lambda: functional(layers.Resizing(5, 5, interpolation="lanczos3", name="rz")),
     ("'rz'", "Resizing", "lanczos3", "bicubic")),
    ("resizing padded to the aspect ratio", lambda: functional(layers.Resizing(5, 3, pad_to_aspect_ratio=True, name="rz")),
     ("'rz'", "Resizing", "pad_to_aspect_ratio")),
    ("layer norm over height", lambda: functional(layers.LayerNormalization(axis=1, name="ln")),
     ("'ln'", "LayerNormalization", "axis")),
    ("unshared PReLU", lambda: functional(layers.Conv2D(4, 3, name="c"),
                                          layers.PReLU(alpha_initializer="random_uniform", name="pr")),
     ("'pr'", "PReLU", "shared_axes")),
    ("softmax over height", lambda: functional(layers.Softmax(axis=1, name="sm")), ("'sm'", "Softmax", "axis")),
    ("channels_first", lambda: functional(layers.Conv2D(4, 3, data_format="channels_first", name="cf")),
     ("'cf'", "channels_first")),
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


def test_open_sequence_length_and_open_image_merges_stay_open():
    """Input(shape=(None, 16)): a sequence of open length ([null, 16] in the model file) through
    Conv1D, MaxPooling1D and Dense per position; an open image's squeeze-and-excitation Multiply
    and nearest UpSampling2D keep the size open (Resize by its factors)."""
    inputs = keras.Input((None, 16))
    x = layers.Conv1D(8, 3, padding="same", activation="relu", name="c")(inputs)
    x = layers.MaxPooling1D(2, name="mp")(x)
    y = layers.Dense(4, name="fc")(x)
    writer = KerasConverter(keras.Model(inputs, y)).convert()
    assert writer.inputs[0]["shape"] == [None, 16]
    assert [layer["type"] for layer in writer.layers] == ["Convolution", "MaxPooling", "Dense"]
    image = keras.Input((None, None, 3))
    c = layers.Conv2D(4, 3, padding="same", name="c")(image)
    gate = layers.Dense(4, activation="sigmoid", name="gate")(layers.GlobalAveragePooling2D(name="gap")(c))
    m = layers.Multiply(name="se")([c, gate])
    u = layers.UpSampling2D(2, name="up")(m)
    writer = KerasConverter(keras.Model(image, u)).convert()
    assert writer.inputs[0]["shape"] == [None, None, 3]
    up = next(layer for layer in writer.layers if layer["type"] == "Resize")
    assert up["scale"] == [2.0, 2.0] and up["mode"] == "nearest" and up["coordinates"] == "asymmetric"


def test_new_activations_and_merge_layers_match_keras():
    """silu/swish, gelu, softplus, softsign, mish activations and Multiply (a squeeze-and-excitation
    gate), Subtract, Maximum, Minimum, Average: Anvil layers whose output (NumPy interpreter) is Keras's."""
    import anvil_numpy
    import numpy as np
    inputs = keras.Input((5, 6, 4))
    a = layers.Activation("silu")(inputs)
    b = layers.Activation("gelu")(inputs)
    c = layers.Activation("softplus")(inputs)
    d = layers.Activation("softsign")(inputs)
    e = layers.Activation("mish")(inputs)
    gate = layers.Activation("sigmoid")(layers.GlobalAveragePooling2D(keepdims=True)(a))
    se = layers.Multiply(name="se")([b, gate])
    out = layers.Average(name="avg")([layers.Subtract(name="sub")([se, c]), layers.Maximum(name="max")([d, e, a]),
                                      layers.Minimum(name="min")([a, b])])
    out = layers.Activation("swish")(out)
    model = keras.Model(inputs, out)
    writer = KerasConverter(model).convert()
    by_name = {layer["name"]: layer for layer in writer.layers}
    assert by_name["se"]["type"] == "Elementwise" and by_name["se"]["operation"] == "multiply"
    assert by_name["avg"]["operation"] == "mean" and by_name["max"]["operation"] == "maximum"
    x = np.random.default_rng(3).standard_normal((2, 5, 6, 4)).astype(np.float32) * 2
    expected = np.asarray(model(x))
    actual = anvil_numpy.run(writer, np.transpose(x, (0, 3, 1, 2)))
    np.testing.assert_allclose(np.transpose(actual, (0, 2, 3, 1)), expected, rtol=1e-5, atol=1e-5)


def test_layers_part_mapping():
    """Conv2DTranspose (valid, same, output_padding), UpSampling2D nearest, an unfolded ZeroPadding2D as a Pad
    layer, LayerNormalization and GroupNormalization map to their layers."""
    model = functional(layers.Conv2DTranspose(6, 3, strides=2, name="valid"),
                       layers.Conv2DTranspose(6, 4, strides=2, padding="same", activation="relu", name="same"),
                       layers.Conv2DTranspose(4, 3, strides=2, padding="same", output_padding=1, name="op"),
                       layers.UpSampling2D(name="up"), layers.LayerNormalization(name="ln"),
                       layers.GroupNormalization(groups=2, name="gn"), layers.ZeroPadding2D(((1, 0), (0, 2)), name="zp"),
                       layers.Flatten(name="fl"), shape=(3, 4, 3))
    writer = KerasConverter(model).convert()
    by = {layer["name"]: layer for layer in writer.layers}
    assert by["valid"]["type"] == "TransposedConvolution" and by["valid"]["padding"] == [0, 0, 0, 0]
    assert by["valid"]["outputPadding"] == [0, 0] and by["same"]["padding"] == [1, 1, 1, 1] and by["same"]["activation"] == "relu"
    # k 3, s 2, output_padding 1, same: Keras pads the dilated input by (2, 1): the full output loses its last row/column
    assert by["op"]["padding"] == [0, 0, 1, 1] and by["op"]["outputPadding"] == [0, 0]
    assert by["up"]["mode"] == "nearest" and by["up"]["nearestRounding"] == "floor"
    assert by["ln"]["type"] == "LayerNormalization" and by["gn"]["groups"] == 2
    pads = [layer for layer in writer.layers if layer["type"] == "Pad"]
    assert len(pads) == 1 and pads[0]["pads"] == [1, 0, 0, 2]


def anvil_output(tmp_path, writer, x):
    """`writer`'s model written and run by `anvil run` on the channels-last batch `x`; flat float32."""
    writer.write(str(tmp_path / "m"))
    return run_anvil(tmp_path / "m" / "model.json", [x])[0]


def test_one_dimensional_layers_match_keras(tmp_path):
    """Conv1D, MaxPooling1D, AveragePooling1D, Dense per position, GlobalAveragePooling1D on a
    (length, channels) input: converted, run by `anvil run`, compared with Keras' own output."""
    import numpy as np

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
    actual = anvil_output(tmp_path, writer, x).reshape(expected.shape)
    assert np.abs(actual - expected).max() <= 1e-4 * max(1.0, np.abs(expected).max())


def test_merge_of_sequences_keeps_the_sequence(tmp_path):
    """Multiply and Add (broadcasting a (1, channels) sequence) of (length, channels) sequences stay
    sequences: the Flatten and Dense after them see length × channels features, as in Keras."""
    import numpy as np

    keras.utils.set_random_seed(6)
    inputs = keras.Input((7, 3))
    a = layers.Conv1D(4, 3, padding="same")(inputs)
    b = layers.Conv1D(4, 1)(inputs)
    pooled = layers.AveragePooling1D(7)(b)
    merged = layers.Add()([layers.Multiply()([a, b]), pooled])
    model = keras.Model(inputs, layers.Dense(5)(layers.Flatten()(merged)))
    x = np.random.default_rng(4).standard_normal((2, 7, 3)).astype(np.float32)
    expected = np.asarray(model.predict(x, verbose=0))
    actual = anvil_output(tmp_path, KerasConverter(model).convert(), x)
    assert actual.size == expected.size
    actual = actual.reshape(expected.shape)
    assert np.abs(actual - expected).max() <= 1e-4 * max(1.0, np.abs(expected).max())


@pytest.mark.parametrize("interpolation", ["nearest", "bicubic", "bilinear"])
@pytest.mark.parametrize("height, width", [(13, 7), (5, 11), (3, 3), (1, 2)])
def test_resizing_and_upsampling_interpolations_match_keras(tmp_path, interpolation, height, width):
    """Resizing to sizes up, down and mixed (non-integer ratios) and UpSampling2D by (2, 3), with
    nearest, bicubic and bilinear interpolation: one Resize each (nearest: half-pixel rounding half
    up as torch's nearest-exact, or row repetition for UpSampling2D; bicubic: a = −0.75), run by
    `anvil run` against Keras's own output (torch backend)."""
    import numpy as np

    model = functional(layers.Resizing(height, width, interpolation=interpolation, name="rz"),
                       layers.UpSampling2D((2, 3), interpolation=interpolation, name="up"), shape=(6, 8, 3))
    writer = KerasConverter(model).convert()
    by = {layer["name"]: layer for layer in writer.layers}
    assert by["rz"]["type"] == "Resize" and by["rz"]["size"] == [height, width]
    assert by["up"]["size"] == [2 * height, 3 * width]
    if interpolation == "bicubic":
        assert by["rz"]["mode"] == "cubic" and by["rz"]["cubicCoefficient"] == -0.75
    if interpolation == "nearest":
        assert by["rz"]["nearestRounding"] == "roundPreferCeil" and by["up"]["nearestRounding"] == "floor"
    x = np.random.default_rng(11).uniform(-1, 1, (2, 6, 8, 3)).astype(np.float32)
    expected = np.asarray(model(x)).reshape(-1)
    writer.write(str(tmp_path / "m"))
    got = run_anvil(tmp_path / "m" / "model.json", [x], batch=2)[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("interpolation", ["bilinear", "bicubic", "nearest"])
@pytest.mark.parametrize("height, width, crop", [(5, 3, False), (4, 9, True), (3, 2, True), (20, 6, True), (9, 12, False)])
def test_antialiased_and_cropped_resizing_matches_keras(tmp_path, interpolation, height, width, crop):
    """Resizing(antialias=True), down, up and mixed, with and without crop_to_aspect_ratio: a Resize with
    antialias (bilinear, bicubic with a = −0.5; nearest ignores it as Keras does) after the centred
    crop's Slice layers; run by `anvil run` against Keras's own output (torch backend)."""
    import numpy as np

    model = functional(layers.Resizing(height, width, interpolation=interpolation, antialias=True,
                                       crop_to_aspect_ratio=crop, name="rz"), shape=(13, 11, 3))
    writer = KerasConverter(model).convert()
    resize = [layer for layer in writer.layers if layer["type"] == "Resize"]
    assert len(resize) == 1 and resize[0].get("antialias", False) == (interpolation != "nearest")
    if interpolation == "bicubic":
        assert resize[0]["cubicCoefficient"] == -0.5
    assert any(layer["type"] == "Slice" for layer in writer.layers) == crop
    x = np.random.default_rng(12).uniform(-1, 1, (2, 13, 11, 3)).astype(np.float32)
    expected = np.asarray(model(x)).reshape(-1)
    writer.write(str(tmp_path / "m"))
    got = run_anvil(tmp_path / "m" / "model.json", [x], batch=2)[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("interpolation", ["bicubic", "nearest"])
def test_upsampling_on_an_open_size_matches_keras(tmp_path, interpolation):
    """UpSampling2D on an open input size is a Resize by its factors; bicubic and nearest give
    Keras's own output (torch backend) at a size picked at run time."""
    import numpy as np

    model = functional(layers.UpSampling2D((2, 3), interpolation=interpolation, name="up"), shape=(None, None, 3))
    writer = KerasConverter(model).convert()
    assert writer.layers[0]["scale"] == [2.0, 3.0] and writer.inputs[0]["shape"] == [None, None, 3]
    x = np.random.default_rng(12).uniform(-1, 1, (1, 5, 4, 3)).astype(np.float32)
    expected = np.asarray(model(x)).reshape(-1)
    writer.write(str(tmp_path / "m"))
    got = run_anvil(tmp_path / "m" / "model.json", [x], shape=(5, 4, 3))[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
