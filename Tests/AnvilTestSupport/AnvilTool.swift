import Foundation
import Testing

/// Runs the built `anvil` command-line tool, as the command tests and the README's examples do.
enum AnvilTool {
    /// The `anvil` executable built next to the test bundles.
    static var executable: URL? { Fixtures.anvilTool }

    /// Runs `anvil` with `arguments` in the repository root and waits for it. Standard output and
    /// error come back separately, or both in `output` (in the order written, `errors` empty)
    /// with `mergingErrors`. `input`, when given, is the tool's whole standard input.
    static func run(_ arguments: [String], mergingErrors: Bool = false, input: String? = nil) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = try #require(executable, "the anvil executable is not built next to the tests")
        process.arguments = arguments
        process.currentDirectoryURL = Fixtures.repository
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = mergingErrors ? output : errors
        let standardInput = input.map { _ in Pipe() }
        if let standardInput { process.standardInput = standardInput }
        try process.run()
        if let standardInput, let input {
            // Small enough for the pipe's buffer: written whole, then closed, before reading.
            standardInput.fileHandleForWriting.write(Data(input.utf8))
            try standardInput.fileHandleForWriting.close()
        }
        let errorDrain = mergingErrors ? nil : PipeDrain(errors)
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        let errData = errorDrain?.wait() ?? Data()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }
}
