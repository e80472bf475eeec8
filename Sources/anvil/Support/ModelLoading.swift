import Anvil
import AnvilModels
import AnvilONNX
import Foundation

/// A model ready to serve or run, with the name it goes by.
struct LoadedModel {
    /// The compiled model.
    let model: Model
    /// The file's model name, else the file name without its extension, else the zoo name.
    let name: String
}

/// Loads and compiles a model from a path or a zoo name, for `anvil serve` and any subcommand:
/// an `.onnx` file (converted in memory by AnvilONNX), an Anvil model file (model.json, with its
/// own parameters; random ones when it names none), or a zoo name (random parameters: for load
/// tests; real weights come through a model file). Errors are ``CommandFailure``s naming the
/// file or name.
func loadCompiledModel(_ pathOrZooName: String) throws -> LoadedModel {
    do {
        if !FileManager.default.fileExists(atPath: pathOrZooName), let zoo = try ModelCatalog.model(named: pathOrZooName) {
            try zoo.compile(from: RandomParameterSource())
            return LoadedModel(model: zoo, name: pathOrZooName)
        }
        let file = try loadModelFile(pathOrZooName)
        let model: Model
        if file.parameters == nil {
            try file.model.compile(from: RandomParameterSource())
            model = file.model
        } else {
            model = try Model(compiling: file)
        }
        let stem = URL(fileURLWithPath: pathOrZooName).deletingPathExtension().lastPathComponent
        return LoadedModel(model: model, name: file.name ?? stem)
    } catch let error as AnvilError {
        throw CommandFailure(error.message)
    }
}
