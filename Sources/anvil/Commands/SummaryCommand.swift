import Anvil
import ArgumentParser
import Foundation

/// `anvil summary <model.json>`: prints a model file's layer table and totals.
struct SummaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "summary", abstract: "Print the summary of a model file.")

    @Argument(help: "An Anvil model file (docs/model-format.md).")
    var model: String

    @Option(help: "The input shape HxWxC (LxC for a sequence, C for a vector; repeat for several inputs, in order): the table at that size (for a model whose input height/width are open, shown as ?).")
    var shape: [String] = []

    func run() throws {
        let file = try loadModelFile(model)
        if let name = file.name { print("Model: \(name)") }
        guard !shape.isEmpty else {
            print(file.model.summary(), terminator: "")
            return
        }
        let shapes = try inputShapes(of: file.model, options: shape)
        do {
            print(try file.model.summary(inputShapes: shapes), terminator: "")
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
