import Foundation
import Testing
import Anvil
import AnvilModels
@testable import AnvilTestSupport

/// End-to-end: the built `anvil` tool on the model file in the repository.
@Suite struct CommandLineTests {
    static var tool: URL? { AnvilTool.executable }

    /// Runs `anvil`; standard output and error together.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let result = try AnvilTool.run(arguments, mergingErrors: true)
        return (result.status, result.output)
    }

    @Test func summaryPrintsTheTable() throws {
        let (status, output) = try Self.run(["summary", "Weights/mnist/model.json"])
        #expect(status == 0)
        #expect(output.contains("3,274,634"))
        #expect(output.contains("fc1 (Dense)"))
        #expect(output.contains("(7, 7, 64)"))
    }

    @Test("summary takes a zoo name, as bench and classify do")
    func summaryOfAZooNetwork() throws {
        let (status, output) = try Self.run(["summary", "mobilenet_v3_small"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("Model: mobilenet_v3_small"))
        // The CLI prints the library's table of the same network.
        #expect(output.contains(try #require(try ModelCatalog.model(named: "mobilenet_v3_small")).summary()))
    }

    /// A command that cannot do its work exits 1 with its message alone; a usage mistake exits
    /// 64 with the usage line.
    @Test("Runtime errors exit 1 with just the message; usage mistakes exit 64 with the usage")
    func exitStatuses() throws {
        let missing = try AnvilTool.run(["summary", "/nonexistent/model.json"])
        #expect(missing.status == 1)
        #expect(missing.errors.contains("/nonexistent/model.json") && !missing.errors.contains("Usage"), "\(missing.errors)")
        #expect(missing.output.isEmpty)
        let run = try AnvilTool.run(["run", "--model", "/nonexistent.json", "--input", "a.f32", "--output", "b.f32"])
        #expect(run.status == 1 && !run.errors.contains("Usage"), "\(run.errors)")
        let unknown = try AnvilTool.run(["bench", "no_such_network_or_file"])
        #expect(unknown.status == 1 && unknown.errors.contains("no_such_network_or_file") && !unknown.errors.contains("Usage"),
                "\(unknown.errors)")
        let usage = try AnvilTool.run(["bench", "mnist", "--batch", "0"])
        #expect(usage.status == 64 && usage.errors.contains("--batch") && usage.errors.contains("Usage"), "\(usage.errors)")
        let noArgument = try AnvilTool.run(["run"])
        #expect(noArgument.status == 64 && noArgument.errors.contains("Usage"), "\(noArgument.errors)")
    }

    /// The argument parser wraps every help text itself: a line broken by hand shows as a line
    /// that stops although the next line's first word would have fitted after it. The parser
    /// fills lines to 79 of the 80 columns it assumes off a terminal; a next line that starts a
    /// new entry of a list (a name, then its description after two spaces) is not a break.
    @Test("Help texts are wrapped by the parser, never broken by hand",
          arguments: [[], ["mnist"], ["summary"], ["run"], ["bench"], ["classify"], ["convert"], ["serve"]])
    func helpIsWrappedByTheParser(_ subcommand: [String]) throws {
        let help = try AnvilTool.run(subcommand + ["--help"], mergingErrors: true)
        #expect(help.status == 0, "\(help.output)")
        let lines = help.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let width = 79
        for (line, next) in zip(lines, lines.dropFirst()) {
            let indent = line.prefix { $0 == " " }.count, nextIndent = next.prefix { $0 == " " }.count
            let nextText = next.trimmingCharacters(in: .whitespaces)
            guard indent == nextIndent, !line.trimmingCharacters(in: .whitespaces).isEmpty, !nextText.contains("  "),
                  let word = next.split(separator: " ").first, !word.hasPrefix("-") else { continue }
            #expect(line.count + 1 + word.count > width,
                    "anvil \(subcommand.joined(separator: " ")) --help breaks a line by hand:\n\(line)\n\(next)")
        }
    }

    @Test func runMatchesTheLibrary() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("anvil-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pixels = try Fixtures.bytes(Fixtures.shared.appendingPathComponent("mnist/images_first256.u8")).prefix(3 * 784)
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

    /// `--batch` is the images per prediction: 7 images in batches of 3 (the last one short) give
    /// what the library gives for the same batches, the file is read and written in pieces, and
    /// `-` skips an output.
    @Test func runStreamsInBatches() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("anvil-stream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pixels = try Fixtures.bytes(Fixtures.shared.appendingPathComponent("mnist/images_first256.u8")).prefix(7 * 784)
        let input = pixels.map { Float($0) / 255 }
        let inputFile = directory.appendingPathComponent("in.f32"), outputFile = directory.appendingPathComponent("out.f32")
        try input.withUnsafeBufferPointer { Data(buffer: $0) }.write(to: inputFile)
        let (status, output) = try Self.run(["run", "--model", "Weights/mnist/model.json", "--input", inputFile.path,
                                             "--output", outputFile.path, "--batch", "3"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("7 × (10)"), "\(output)")
        let model = try ModelFile(contentsOf: Fixtures.repository.appendingPathComponent("Weights/mnist/model.json")).compiledModel()
        var expected: [Float] = []
        for start in stride(from: 0, to: 7, by: 3) {
            let count = min(3, 7 - start)
            let images = Array(input[(start * 784) ..< ((start + count) * 784)])
            expected += try model.predict(Tensor(batch: count, shape: model.inputShapes[0], values: images)).values
        }
        #expect(try Fixtures.floats(outputFile) == expected)

        let (skipStatus, skipOutput) = try Self.run(["run", "--model", "Weights/mnist/model.json", "--input", inputFile.path,
                                                     "--output", "-", "--batch", "4"])
        #expect(skipStatus == 0 && !skipOutput.contains("×"), "\(skipOutput)")
        #expect(!FileManager.default.fileExists(atPath: Fixtures.repository.appendingPathComponent("-").path))
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: directory.path)) == ["in.f32", "out.f32"])
        let zero = try AnvilTool.run(["run", "--model", "Weights/mnist/model.json", "--input", inputFile.path, "--output", "-",
                                      "--batch", "0"])
        #expect(zero.status == 64 && zero.errors.contains("--batch must be at least 1"), "\(zero.errors)")
    }

    /// The converted model with open height and width (fixture `converters/onnx_open`): `--shape`
    /// sets the size; without it `run` and `bench` say what is missing; `summary` shows `?`.
    @Test func runSetsTheSizeOfAnOpenInput() throws {
        let fixture = "Tests/AnvilTests/Fixtures/converters/onnx_open"
        let directory = Fixtures.repository.appendingPathComponent(fixture)
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("anvil-open-\(UUID().uuidString).f32")
        defer { try? FileManager.default.removeItem(at: outputFile) }
        for (h, w) in [(20, 28), (44, 36)] {
            let (status, output) = try Self.run(["run", "--model", "\(fixture)/model.json", "--input", "\(fixture)/input_\(h)x\(w).f32",
                                                 "--output", outputFile.path, "--shape", "\(h)x\(w)x3"])
            #expect(status == 0, "\(output)")
            #expect(output.contains("1 × (\(h), \(w), 4)"), "\(output)")
            let written = try Fixtures.floats(outputFile)
            let expected = try Fixtures.floats(directory.appendingPathComponent("expected_\(h)x\(w).f32"))
            try #require(written.count == expected.count)
            let range = expected.max()! - expected.min()!
            #expect(zip(written, expected).allSatisfy { abs($0 - $1) <= 1e-3 * range }, "\(h)x\(w)")
        }
        let missing = try Self.run(["run", "--model", "\(fixture)/model.json", "--input", "\(fixture)/input_20x28.f32", "--output", "/dev/null"])
        #expect(missing.status != 0 && missing.output.contains("open size") && missing.output.contains("--shape"), "\(missing.output)")
        let wrong = try Self.run(["run", "--model", "\(fixture)/model.json", "--input", "\(fixture)/input_20x28.f32", "--output", "/dev/null",
                                  "--shape", "20x28x4"])
        #expect(wrong.status != 0 && wrong.output.contains("(?, ?, 3)"), "\(wrong.output)")
        let summary = try Self.run(["summary", "\(fixture)/model.json"])
        #expect(summary.status == 0 && summary.output.contains("(?, ?, 3)") && summary.output.contains("(?, ?, 4)"), "\(summary.output)")
        let sized = try Self.run(["summary", "\(fixture)/model.json", "--shape", "16x24x3"])
        #expect(sized.status == 0 && sized.output.contains("(16, 24, 4)") && sized.output.contains("MACs per image"), "\(sized.output)")
        let bench = try Self.run(["bench", "\(fixture)/model.json", "--iterations", "1", "--warmup", "0"])
        #expect(bench.status != 0 && bench.output.contains("--shape"), "\(bench.output)")
        let timed = try Self.run(["bench", "\(fixture)/model.json", "--iterations", "1", "--warmup", "0", "--shape", "16x16x3"])
        #expect(timed.status == 0 && timed.output.contains("median_ms"), "\(timed.output)")
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
        // milliseconds a pass, even unoptimised) until the time is up, and says so.
        func warmup(_ milliseconds: Int) throws -> (runs: Int, milliseconds: Double) {
            let (status, output) = try Self.run(["bench", "mnist", "--iterations", "2", "--warmup", "1",
                                                 "--warmup-ms", "\(milliseconds)"])
            #expect(status == 0 && output.contains("over 2 runs"), "\(output)")
            let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("warmup: ") })
            let words = line.split(separator: " ")
            return (try #require(Int(words[1])), try #require(Double(words[4])))
        }
        // Ask for three times what one pass took here (at least 300 ms): under a sanitizer on a
        // busy machine one pass took 340 ms, so a fixed 300 ms did not always need a second run.
        let quick = try warmup(0)
        let asked = max(300, Int(3 * quick.milliseconds))
        let warmed = try warmup(asked)
        #expect(quick.runs == 1)
        #expect(warmed.runs > 1 && warmed.milliseconds >= Double(asked),
                "\(warmed.runs) runs in \(warmed.milliseconds) ms for \(asked) ms asked")
        let (status, output) = try Self.run(["bench", "mnist", "--warmup-ms=-1"])
        #expect(status != 0 && output.contains("--warmup-ms must be 0 or more"))
    }

    @Test("bench --paced runs what standard input asks for, one line at a time")
    func benchPacedRunsOnRequest() throws {
        let result = try AnvilTool.run(["bench", "mnist", "--paced", "--warmup", "0"], mergingErrors: true, input: "2\n\nmany\n0\n1\n")
        #expect(result.status == 0, "\(result.output)")
        let lines = result.output.split(separator: "\n").map(String.init)
        let ready = try #require(lines.firstIndex(of: "ready"), "\(result.output)")
        // After `ready`: an answer per request, in order; a bad count is refused and nothing runs.
        let answers = Array(lines[(ready + 1)...].prefix(4))
        #expect(answers.count == 4)
        func times(_ line: String) -> [Double]? {
            guard line.hasPrefix("runs_ms: ") else { return nil }
            let values = line.dropFirst("runs_ms: ".count).split(separator: " ").compactMap { Double($0) }
            return values.allSatisfy { $0 > 0 } ? values : nil
        }
        #expect(times(answers[0])?.count == 2, "\(answers)")
        #expect(answers[1].hasPrefix("error: ") && answers[1].contains("'many'"), "\(answers)")
        #expect(answers[2].hasPrefix("error: ") && answers[2].contains("'0'"), "\(answers)")
        #expect(times(answers[3])?.count == 1, "\(answers)")
        // At the end of input the usual summary, over the runs asked for.
        #expect(lines.last?.hasPrefix("median_ms: ") == true && lines.last?.hasSuffix("over 3 runs") == true, "\(result.output)")

        let silent = try AnvilTool.run(["bench", "mnist", "--paced", "--warmup", "0"], mergingErrors: true, input: "")
        #expect(silent.status == 0 && silent.output.contains("ready") && !silent.output.contains("median_ms"), "\(silent.output)")
        let both = try Self.run(["bench", "mnist", "--paced", "--layers"])
        #expect(both.status != 0 && both.output.contains("--paced and --layers"), "\(both.output)")
    }

    @Test func benchNamesTheCPUAndTheInstructionSet() throws {
        let (status, output) = try Self.run(["bench", "mnist", "--iterations", "1", "--warmup", "0", "--isa", "scalar"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("cpu: ") && output.contains("cpu_flags: "), "\(output)")
        #expect(output.contains("isa: scalar (--isa"), "\(output)")
        let (badStatus, badOutput) = try Self.run(["bench", "mnist", "--isa", "sse9"])
        #expect(badStatus != 0 && badOutput.contains("--isa=sse9 names no instruction set"), "\(badOutput)")
        for isa in InstructionSet.allCases where !isa.isSupported {
            let (status, output) = try Self.run(["bench", "mnist", "--isa", isa.rawValue])
            #expect(status != 0 && output.contains("this CPU lacks"), "\(output)")
        }
    }
}
