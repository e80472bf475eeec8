import Foundation
import Testing
import Anvil

/// End-to-end: the built `anvil` tool on the model file in the repository.
@Suite struct CommandLineTests {
    static var tool: URL? { Fixtures.anvilTool }

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = try #require(tool)
        process.arguments = arguments
        process.currentDirectoryURL = Fixtures.repository
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func summaryPrintsTheTable() throws {
        let (status, output) = try Self.run(["summary", "Weights/mnist/model.json"])
        #expect(status == 0)
        #expect(output.contains("3,274,634"))
        #expect(output.contains("fc1 (Dense)"))
        #expect(output.contains("(7, 7, 64)"))
    }

    @Test func runMatchesTheLibrary() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("anvil-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pixels = try Fixtures.bytes(Fixtures.root.appendingPathComponent("mnist/images_first256.u8")).prefix(3 * 784)
        let input = pixels.map { Float($0) / 255 }
        let inputFile = directory.appendingPathComponent("in.f32"), outputFile = directory.appendingPathComponent("out.f32")
        try input.withUnsafeBufferPointer { Data(buffer: $0) }.write(to: inputFile)
        let (status, output) = try Self.run(["run", "--model", "Weights/mnist/model.json", "--input", inputFile.path, "--output", outputFile.path])
        #expect(status == 0, "\(output)")
        let written = try Fixtures.floats(outputFile)
        let model = try ModelFile(contentsOf: Fixtures.repository.appendingPathComponent("Weights/mnist/model.json")).compiledModel()
        let expected = try model.predict(Tensor(batch: 3, shape: model.inputShapes[0], values: input))
        #expect(written == expected.values)
    }

    @Test func runRejectsAPartialImage() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("anvil-partial-\(UUID().uuidString).f32")
        try [Float](repeating: 0, count: 100).withUnsafeBufferPointer { Data(buffer: $0) }.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let (status, output) = try Self.run(["run", "--model", "Weights/mnist/model.json", "--input", file.path, "--output", "/dev/null"])
        #expect(status != 0)
        #expect(output.contains("not a whole number"))
    }

    @Test func benchWarmsUpForAtLeastTheAskedTime() throws {
        // One warm-up run asked for, but 300 ms of warm-up: the tool keeps running MNIST (a few
        // milliseconds a pass, even unoptimised) until the time is up, and says so. Under
        // ThreadSanitizer on a loaded machine a pass took 340 ms, so the time asked for is at least
        // four times that of the one-run warm-up (the first pass, the slowest).
        func warmup(_ milliseconds: Int) throws -> (runs: Int, milliseconds: Double) {
            let (status, output) = try Self.run(["bench", "mnist", "--iterations", "2", "--warmup", "1",
                                                 "--warmup-ms", "\(milliseconds)"])
            #expect(status == 0 && output.contains("over 2 runs"), "\(output)")
            let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("warmup: ") })
            let words = line.split(separator: " ")
            return (try #require(Int(words[1])), try #require(Double(words[4])))
        }
        let quick = try warmup(0)
        let asked = max(300, Int(4 * quick.milliseconds) + 1), warmed = try warmup(asked)
        #expect(quick.runs == 1)
        #expect(warmed.runs > 1 && warmed.milliseconds >= Double(asked), "\(warmed.runs) runs in \(warmed.milliseconds) ms of \(asked) asked")
        let (status, output) = try Self.run(["bench", "mnist", "--warmup-ms=-1"])
        #expect(status != 0 && output.contains("--warmup-ms must be 0 or more"))
    }
}
