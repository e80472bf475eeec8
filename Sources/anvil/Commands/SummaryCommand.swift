import Anvil
import ArgumentParser
import Foundation

/// `anvil summary <model.json>`: prints a model file's layer table and totals.
struct SummaryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "summary", abstract: "Print the summary of a model file.")

    @Argument(help: "An Anvil model file (docs/model-format.md).")
    var model: String

    func run() throws {
        let file = try loadModelFile(model)
        if let name = file.name { print("Model: \(name)") }
        print(file.model.summary(), terminator: "")
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
