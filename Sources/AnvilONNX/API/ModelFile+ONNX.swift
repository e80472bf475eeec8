import Anvil
import Foundation

extension ModelFile {
    /// Opens an `.onnx` file as a model file (converted in memory, parameters held in memory,
    /// layout "pytorch"); `inputShape` (channels, height, width) fills in open input dimensions.
    ///
    /// ```swift
    /// let file = try ModelFile(onnx: URL(fileURLWithPath: "resnet18.onnx"))
    /// print(try file.model.summary())
    /// ```
    public init(onnx url: URL, inputShape: (channels: Int, height: Int, width: Int)? = nil) throws {
        let conversion = try ONNXConversion(contentsOf: url, inputShape: inputShape)
        self = try (consume conversion).takeModelFile(source: url.path)
    }

    /// Opens a model file by path: an `.onnx` file (converted in memory) or an Anvil model file
    /// (model.json); what every `anvil` subcommand calls.
    public static func open(path: String) throws -> ModelFile {
        let url = URL(fileURLWithPath: path)
        if url.pathExtension.lowercased() == "onnx" { return try ModelFile(onnx: url) }
        return try ModelFile(contentsOf: url)
    }
}

extension Model {
    /// Opens an `.onnx` file and compiles it, ready for `predict`: no Python needed.
    ///
    /// ```swift
    /// let model = try Model(onnx: URL(fileURLWithPath: "mnist.onnx"))
    /// let output = try model.predict(image)
    /// ```
    ///
    /// Inputs are NHWC (an NCHW ONNX input of [N, 3, 224, 224] takes [N, 224, 224, 3]); an open
    /// height/width stays open unless `inputShape` (channels, height, width) fixes it. Throws
    /// ``ONNXImportError`` naming the node(s), field or file at fault.
    public convenience init(onnx url: URL, inputShape: (channels: Int, height: Int, width: Int)? = nil) throws {
        try self.init(compiling: try ModelFile(onnx: url, inputShape: inputShape))
    }
}
