import Anvil
import ArgumentParser
import Foundation

/// `anvil run`: runs any model file on raw float32 NHWC input files.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a model file on raw little-endian float32 NHWC inputs.",
        discussion: """
        Each input file holds N images of the input's shape (from the model file, or --shape);
        N is the file size divided by the image size unless --batch says it. Each output is
        written as raw float32 NHWC, one file per model output. An input whose height and width
        (a sequence's length) are open in the model file (null) needs --shape, which sets its size.
        """
    )

    @Option(help: "The model file.")
    var model: String

    @Option(help: "An input file (repeat for models with several inputs, in order).")
    var input: [String]

    @Option(help: "An output file (repeat for models with several outputs, in order).")
    var output: [String]

    @Option(help: "Images per input file (default: inferred from the file size).")
    var batch: Int?

    @Option(help: "The input shape HxWxC, e.g. 28x28x1 (LxC for a sequence, C for a vector; repeat for several inputs, in order): sets the size of an input whose height/width (or length) are open, checks a fixed one (default: the model's).")
    var shape: [String] = []

    @Option(help: "Threads for OpenBLAS and Anvil's loops.")
    var threads: Int?

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
            var tensors: [Tensor] = []
            for (path, shape) in zip(input, shapes) {
                let values = try readFloats(path)
                let images = batch ?? values.count / shape.count
                guard images >= 1, images * shape.count == values.count else {
                    throw CommandFailure("'\(path)' holds \(values.count) floats, not a whole number of \(shape) images\(batch.map { " (× \($0))" } ?? "")")
                }
                tensors.append(try Tensor(batch: images, shape: shape, values: values))
            }
            let results = try model.predict(tensors)
            for (path, result) in zip(output, results) {
                try writeFloats(result.values, to: path)
                print("\(path): \(result.batch) × \(result.shape)")
            }
        } catch let error as AnvilError {
            throw CommandFailure(error.message)
        }
    }
}

/// Reads a raw little-endian float32 file.
func readFloats(_ path: String) throws -> [Float] {
    guard let data = FileManager.default.contents(atPath: path) else { throw CommandFailure("cannot read '\(path)'") }
    guard data.count % 4 == 0 else { throw CommandFailure("'\(path)' has \(data.count) bytes, not a multiple of 4") }
    return data.withUnsafeBytes { raw in (0 ..< data.count / 4).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: Float.self) } }
}

/// Writes a raw little-endian float32 file.
func writeFloats(_ values: [Float], to path: String) throws {
    let data = values.withUnsafeBufferPointer { Data(buffer: $0) }
    guard FileManager.default.createFile(atPath: path, contents: data) else { throw CommandFailure("cannot write '\(path)'") }
}
