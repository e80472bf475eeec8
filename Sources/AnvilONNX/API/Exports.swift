// `import AnvilONNX` brings Anvil along: `Model(onnx:)` returns Anvil's `Model`.
@_exported import Anvil
