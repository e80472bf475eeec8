import ArgumentParser
import Foundation

/// The `anvil` command-line tool.
@main
struct AnvilCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "anvil",
        abstract: "Define, inspect and run convolutional networks on the CPU.",
        subcommands: [MNISTCommand.self, SummaryCommand.self, RunCommand.self, BenchCommand.self, ClassifyCommand.self,
                      ConvertCommand.self, ServeCommand.self]
    )

    /// Parses and runs the subcommand; a ``CommandFailure`` prints its message alone and exits 1,
    /// everything else (usage mistakes, help) goes to ArgumentParser.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let failure as CommandFailure {
            FileHandle.standardError.write(Data("anvil: \(failure.message)\n".utf8))
            Foundation.exit(1)
        } catch {
            exit(withError: error)
        }
    }
}
