"""Anvil's model converters: PyTorch, Keras, Caffe and ONNX models into Anvil model files.

    writer        ModelWriter: the one writer of the model format (docs/model-format.md)
    cli           the command line the four converters share
    from_pytorch  PyTorch modules, traced with torch.fx   (Scripts/convert_pytorch.py)
    torch_zoo     the zoo networks in PyTorch, with a width factor
    from_keras    .keras / .h5 files                     (Scripts/convert_keras.py)
    from_caffe    .prototxt + .caffemodel, numpy only     (Scripts/convert_caffe.py)
    from_onnx     .onnx files                            (Scripts/convert_onnx.py)

Importable without installation: put Scripts/ on sys.path (the entry points and tests do),
or run `python3 -m anvil_convert.from_caffe ...` from Scripts/. Each front end imports its
framework only when used, except from_pytorch and torch_zoo, which need torch.
"""

from .writer import ConversionError, ModelWriter  # noqa: F401
