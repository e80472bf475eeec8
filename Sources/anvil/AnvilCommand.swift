import ArgumentParser

/// The `anvil` command-line tool.
@main
struct AnvilCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "anvil",
        abstract: "Define, inspect and run convolutional networks on the CPU.",
        subcommands: [MNISTCommand.self, SummaryCommand.self, RunCommand.self, BenchCommand.self, ClassifyCommand.self]
    )
}
