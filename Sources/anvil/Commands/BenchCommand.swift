import Anvil
import AnvilModels
import ArgumentParser
import Foundation

/// `anvil bench`: times a model's predictions (median over runs), optionally per layer.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Time a zoo network or a model file (random weights unless the file has its own).",
        discussion: "Zoo names: \(ModelCatalog.names.joined(separator: ", ")). The last line is `median_ms: X (min Y, max Z) over K runs`."
    )

    @Argument(help: "A zoo name or a model file.")
    var model: String

    @Option(help: "Images per prediction.")
    var batch = 1

    @Option(help: "Threads for OpenBLAS and Anvil's loops (default: all cores).")
    var threads: Int?

    @Option(help: "Timed runs.")
    var iterations = 10

    @Option(help: "Untimed warm-up runs.")
    var warmup = 2

    @Option(name: .customLong("warmup-ms"),
            help: "Keep warming up until this many milliseconds have passed as well (an idle VM's CPUs need some to reach speed).")
    var warmupMilliseconds: Double = 0

    @Flag(help: "Print the median time of each layer.")
    var layers = false

    @Flag(help: "Use random weights even when the model file has parameters.")
    var randomWeights = false

    @Option(help: "The input shape HxWxC (LxC for a sequence, C for a vector): required for a model whose input size is open, checked otherwise.")
    var shape: String?

    @Option(help: "Instruction set of Anvil's C kernels: scalar, avx2 or avx512 (default: ANVIL_ISA, else the best the CPU runs).")
    var isa: String?

    @Flag(help: ArgumentHelp(
        "After the warm-up, run on request: print `ready`, then for each line of standard input (a count N) run N predictions and print `runs_ms:` and their times; at the end of input print the median of them all.",
        discussion: "For timing engines or builds in alternation, run by run (Scripts/benchmarks/ab_paced.py), so a change in the machine's speed falls on all of them alike. --iterations is not used."))
    var paced = false

    func validate() throws {
        guard batch >= 1, iterations >= 1, warmup >= 0 else { throw ValidationError("--batch and --iterations must be at least 1") }
        guard warmupMilliseconds >= 0, warmupMilliseconds.isFinite else { throw ValidationError("--warmup-ms must be 0 or more") }
        if let threads, threads < 1 { throw ValidationError("--threads must be at least 1") }
        if let isa { _ = try instructionSet(isa) }
        if paced && layers { throw ValidationError("--paced and --layers do not go together: --layers times its own runs") }
    }

    /// The set `--isa` names, or a validation error saying why the CPU cannot run it.
    private func instructionSet(_ name: String) throws -> InstructionSet {
        do {
            return try InstructionSet.parse(name, source: "--isa")
        } catch {
            throw CommandFailure(error.message)
        }
    }

    func run() throws {
        if let threads { Compute.threadCount = threads }
        // Before the model compiles: its kernels keep the set current when they are built.
        if let isa { InstructionSet.current = try instructionSet(isa) }
        let cpu = CPUInfo.current
        print("cpu: \(cpu.model)")
        print("cpu_flags: \(cpu.vectorFlags.isEmpty ? "none of note" : cpu.vectorFlags.joined(separator: " "))")
        let source = isa != nil ? "--isa" : (InstructionSet.override != nil ? "ANVIL_ISA" : "detected")
        print("isa: \(InstructionSet.current) (\(source); the CPU runs \(InstructionSet.supported.map(\.rawValue).joined(separator: ", ")))")
        let clock = ContinuousClock()
        do {
            var built: Model!
            let compileTime = try clock.measure { built = try loadForBenchmark() }
            let model = built!
            let shape = try inputShape(of: model)
            let outputShape = try model.outputShapes(forInputShapes: [shape])[0]
            let input = (0 ..< batch * shape.count).map { Float(($0 * 7919) % 255) / 255 }
            var output = [Float](repeating: 0, count: batch * outputShape.count)
            func once() throws {
                try input.withUnsafeBufferPointer { source in
                    try output.withUnsafeMutableBufferPointer { try model.predict(source, shape: shape, batch: batch, into: $0) }
                }
            }
            let warmupStart = clock.now, warmupEnd = warmupStart + .microseconds(Int64(warmupMilliseconds * 1000))
            var warmed = 0
            while warmed < warmup || clock.now < warmupEnd {
                try once()
                warmed += 1
            }
            let warmupTime = warmupStart.duration(to: clock.now)
            print("model: \(model.outputNames.joined(separator: ", ")) from \(self.model); batch \(batch); threads \(Compute.threadCount)")
            print(String(format: "load+compile_ms: %.1f", milliseconds(compileTime)))
            print("batch_passes: \(try model.batchPasses(batch: batch, inputShapes: [shape]).map(\.description) ?? "none (every step on the whole batch)")")
            if let cache = WeightCache.standard {
                let s = cache.statistics
                print("weight_cache: \(s.hits) mapped, \(s.misses + s.rejected) made (\(s.rejected) refused), \(s.written) written in \(cache.directory.path)")
            } else {
                print("weight_cache: off (ANVIL_WEIGHT_CACHE)")
            }
            print(String(format: "warmup: %d runs in %.1f ms", warmed, milliseconds(warmupTime)))
            var times: [Double] = []
            if paced {
                times = try PacedRuns.serve { try clock.measure { try once() } }
                guard !times.isEmpty else { return }
            } else {
                for _ in 0 ..< iterations { times.append(milliseconds(try clock.measure { try once() })) }
            }
            times.sort()
            let median = times[times.count / 2]
            let flops = 2 * Double(try model.macs(forInputShapes: [shape])) * Double(batch)
            if layers {
                for timing in try model.profile(batch: batch, iterations: iterations, inputShapes: [shape]) {
                    let name = timing.name.padding(toLength: max(28, timing.name.count), withPad: " ", startingAt: 0)
                    let type = timing.typeName.padding(toLength: max(22, timing.typeName.count), withPad: " ", startingAt: 0)
                    print("  \(name) \(type) " + String(format: "%9.3f ms", timing.seconds * 1000))
                }
            }
            print(String(format: "images_per_s: %.1f", Double(batch) * 1000 / median))
            print(String(format: "gflops: %.1f", flops / (median / 1000) / 1e9))
            print(String(format: "median_ms: %.3f (min %.3f, max %.3f) over %d runs", median, times.first!, times.last!, times.count))
        } catch let error as AnvilError {
            throw CommandFailure(error.message)
        }
    }

    /// The one input's shape: `--shape`, which an open input size needs.
    private func inputShape(of model: Model) throws -> Shape {
        guard model.inputShapes.count == 1 else {
            throw CommandFailure("bench times single-input models; this one has \(model.inputShapes.count) inputs")
        }
        return try inputShapes(of: model, options: shape.map { [$0] } ?? [])[0]
    }

    private func loadForBenchmark() throws -> Model {
        if let model = try ModelCatalog.model(named: model) {
            try model.compile(from: RandomParameterSource())
            return model
        }
        let file = try loadModelFile(model)
        if randomWeights || file.parameters == nil {
            try file.model.compile(from: RandomParameterSource())
            return file.model
        }
        return try file.compiledModel()
    }
}

/// Milliseconds in a duration.
func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) * 1e-15
}
