"""Operator handlers of the ONNX converter, one mixin class per part (see from_onnx.OnnxConverter)."""
