import Anvil
import ArgumentParser
import Foundation

/// `anvil run`: runs any model file on raw float32 NHWC input files, streamed in batches.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a model file on raw little-endian float32 NHWC inputs.",
        discussion: """
        Each input file holds N images of the input's shape (from the model file, or --shape); N is \
        the file size divided by the image size, the same for every input. The files are read and \
        run --batch images at a time, so memory does not grow with N, and each output is written as \
        raw float32 NHWC as it comes, one file per model output ("-" skips one you do not need). \
        An input whose height and width (a sequence's length) are open in the model file (null) \
        needs --shape, which sets its size. A progress bar shows on a terminal.
        """
    )

    @Option(help: "The model file.")
    var model: String

    @Option(help: "An input file (repeat for models with several inputs, in order).")
    var input: [String]

    @Option(help: "An output file (repeat for models with several outputs, in order); - skips that output.")
    var output: [String]

    @Option(help: "Images per prediction: the files are streamed this many images at a time.")
    var batch: Int = 64

    @Option(help: "The input shape HxWxC, e.g. 28x28x1 (LxC for a sequence, C for a vector; repeat for several inputs, in order): sets the size of an input whose height/width (or length) are open, checks a fixed one (default: the model's).")
    var shape: [String] = []

    @Option(help: "Threads for OpenBLAS and Anvil's loops.")
    var threads: Int?

    func validate() throws {
        guard batch >= 1 else { throw ValidationError("--batch must be at least 1") }
        if let threads, threads < 1 { throw ValidationError("--threads must be at least 1") }
    }

    func run() throws {
        if let threads { Compute.threadCount = threads }
        let file = try loadModelFile(model)
        let model = file.model
        guard input.count == model.inputShapes.count else {
            throw ValidationError("the model has \(model.inputShapes.count) input(s); \(input.count) --input given")
        }
        guard output.count == model.outputShapes.count else {
            throw ValidationError("the model has \(model.outputShapes.count) output(s); \(output.count) --output given")
        }
        let shapes = try inputShapes(of: model, options: shape)
        do {
            _ = try file.compiledModel()
            let readers = try zip(input, shapes).map { try FloatFileReader(path: $0, imageFloats: $1.count, shape: $1) }
            let images = readers[0].images
            if let other = readers.first(where: { $0.images != images }) {
                throw CommandFailure("'\(other.path)' holds \(other.images) images but '\(readers[0].path)' holds \(images); every input needs the same number")
            }
            let outputShapes = try model.outputShapes(forInputShapes: shapes)
            let writers = try output.map { $0 == "-" ? nil : try FloatFileWriter(path: $0) }
            let progress = ProgressBar(total: images)
            var done = 0
            while done < images {
                let count = min(batch, images - done)
                let tensors = try zip(readers, shapes).map { try Tensor(batch: count, shape: $1, values: try $0.read(images: count)) }
                let results = try model.predict(tensors)
                for (writer, result) in zip(writers, results) { try writer?.write(result.values) }
                done += count
                if images > batch { progress.update(done) }
            }
            for (path, shape) in zip(output, outputShapes) where path != "-" { print("\(path): \(images) × \(shape)") }
        } catch let error as AnvilError {
            throw CommandFailure(error.message)
        }
    }
}
