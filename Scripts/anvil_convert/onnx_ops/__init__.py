"""ONNX operator handlers, one mixin class per part of the operator set (OnnxConverter derives from each)."""
