import Anvil
import AnvilModels
import AnvilONNX
import Foundation

/// The one place `anvil serve` turns a `--model` argument into a compiled model: an `.onnx` file
/// (converted in memory; its tensors stay NCHW on the wire, as ONNX declares them), an Anvil
/// model file (`model.json`, with its own parameters), or a zoo name (the network with seeded
/// random weights — for trying the server and load tests; trained weights come as a file).
public enum ModelLoader {
    /// A loaded, compiled model with the name it is served under by default and its wire layout.
    public struct LoadedModel: Sendable {
        /// The compiled model.
        public let model: Model
        /// The served name unless `--name` gives one: the zoo name, or the file name without its
        /// extension — the directory's name for a file called `model.json`.
        public let defaultName: String
        /// How its inputs and outputs are declared, and so laid out on the wire.
        public let layout: WireLayout
        /// Where it came from, for logs.
        public let description: String
    }

    /// Loads `reference`: a zoo name (``ModelCatalog``) or a model file path; throws an
    /// ``AnvilError`` naming the file or the layer at fault.
    public static func load(_ reference: String) throws -> LoadedModel {
        let url = URL(fileURLWithPath: reference)
        if !FileManager.default.fileExists(atPath: reference), let entry = ModelCatalog.entry(named: reference) {
            let model = try entry.model()
            try model.compile(from: RandomParameterSource(seed: 1))
            return LoadedModel(model: model, defaultName: entry.name, layout: .channelsLast,
                               description: "zoo network \(entry.name) (\(entry.summary)) with seeded random weights")
        }
        let stem = url.deletingPathExtension().lastPathComponent
        if url.pathExtension.lowercased() == "onnx" {
            let model = try Model(onnx: url)
            return LoadedModel(model: model, defaultName: stem, layout: .channelsFirst, description: "ONNX file \(reference)")
        }
        let file = try ModelFile(contentsOf: url)
        guard file.parameters != nil else {
            throw AnvilError(.missingParameter, "model file '\(reference)' names no parameters; serve needs a model with its weights")
        }
        let model = try file.compiledModel()
        let name = stem == "model" ? url.deletingLastPathComponent().lastPathComponent : stem
        return LoadedModel(model: model, defaultName: name, layout: .channelsLast,
                           description: "model file \(reference)\(file.name.map { " (\($0))" } ?? "")")
    }
}
