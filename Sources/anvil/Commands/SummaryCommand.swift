import Anvil
import ArgumentParser
import Foundation

/// `anvil summary <model.json>`: prints a model file's layer table and totals.
struct SummaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "summary", abstract: "Print the summary of a model file.")

    @Argument(help: "An Anvil model file (docs/model-format.md).")
    var model: String

    @Option(help: "The input shape HxWxC: the table at that size (for a model whose input height/width are open, shown as ?).")
    var shape: String?

    func run() throws {
        let file = try loadModelFile(model)
        if let name = file.name { print("Model: \(name)") }
        guard let shape else {
            print(file.model.summary(), terminator: "")
            return
        }
        let dims = shape.split(separator: "x", omittingEmptySubsequences: false).map { Int($0) }
        guard dims.count == 3, let height = dims[0], let width = dims[1], let channels = dims[2] else {
            throw ValidationError("--shape \(shape) is not HxWxC (three integers, e.g. 224x224x3)")
        }
        do {
            print(try file.model.summary(inputShapes: [Shape(height: height, width: width, channels: channels)]), terminator: "")
        } catch let error as AnvilError {
            throw ValidationError(error.message)
        }
    }
}

/// Reads a model file, turning Anvil's errors into a one-line message for the shell.
func loadModelFile(_ path: String) throws -> ModelFile {
    do {
        return try ModelFile(contentsOf: URL(fileURLWithPath: path))
    } catch let error as AnvilError {
        throw ValidationError(error.message)
    }
}
