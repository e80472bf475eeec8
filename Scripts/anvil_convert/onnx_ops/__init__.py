"""ONNX operator handlers, one mixin class per part of the converter (see from_onnx.OnnxConverter)."""
