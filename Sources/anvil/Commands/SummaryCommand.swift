import Anvil
import AnvilONNX
import AnvilModels
import ArgumentParser
import Foundation

/// `anvil summary <model.json | zoo name>`: prints a model's layer table and totals.
struct SummaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "summary", abstract: "Print the summary of a model file or zoo network.",
                                                    discussion: "Zoo names: \(ModelCatalog.names.joined(separator: ", ")).")

    @Argument(help: "An Anvil model file (docs/model-format.md) or a zoo name.")
    var model: String

    @Option(help: "The input shape HxWxC (LxC for a sequence, C for a vector; repeat for several inputs, in order): the table at that size (for a model whose input height/width are open, shown as ?).")
    var shape: [String] = []

    func run() throws {
        let network: Model
        do {
            if let zoo = try ModelCatalog.model(named: model) {
                print("Model: \(model)")
                network = zoo
            } else {
                let file = try loadModelFile(model)
                if let name = file.name { print("Model: \(name)") }
                network = file.model
            }
        } catch let error as AnvilError {
            throw CommandFailure(error.message)
        }
        guard !shape.isEmpty else {
            print(network.summary(), terminator: "")
            return
        }
        let shapes = try inputShapes(of: network, options: shape)
        do {
            print(try network.summary(inputShapes: shapes), terminator: "")
        } catch let error as AnvilError {
            throw CommandFailure(error.message)
        }
    }
}

/// Reads a model file — an Anvil model file (model.json) or an `.onnx` file, converted in
/// memory — turning Anvil's and the ONNX importer's errors into a message for the shell.
func loadModelFile(_ path: String) throws -> ModelFile {
    do {
        return try ModelFile.open(path: path)
    } catch let error as AnvilError {
        throw CommandFailure(error.message)
    } catch let error as ONNXImportError {
        throw CommandFailure(error.message)
    }
}
