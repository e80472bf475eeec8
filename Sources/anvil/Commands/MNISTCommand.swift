import Anvil
import AnvilModels
import AnvilVision
import ArgumentParser
import Foundation

/// `anvil mnist`: the MNIST digit recognizer on the real 10,000-image test set, or on your
/// own digit images.
struct MNISTCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mnist",
        abstract: "Classify the MNIST test set (or your own digit images) with the shipped weights.",
        discussion: """
        Without --image: builds the Deep MNIST network, loads Weights/mnist/, fetches the real \
        MNIST test set into Data/mnist/ if it is absent (Scripts/setup/fetch_mnist.sh), classifies \
        all 10,000 images and prints accuracy, throughput and a confusion matrix. \
        --forge runs Forge's own network and weights (../shared/forge-mnist/) instead.
        """
    )

    @Option(help: "Images per predict call.")
    var batch = 100

    @Option(help: "Threads for OpenBLAS and Anvil's loops (default: all cores).")
    var threads: Int?

    @Option(help: "Classify only the first N test images.")
    var limit: Int?

    @Option(help: "Weights directory (default: Weights/mnist, or ../shared/forge-mnist with --forge).")
    var weights: String?

    @Option(help: "Directory with the MNIST IDX files.")
    var data = "Data/mnist"

    @Flag(help: "Use Forge's MNIST network and its own trained weights.")
    var forge = false

    @Option(help: "Classify this digit image (PNG or JPEG, any size, either polarity) instead of the test set; repeatable.")
    var image: [String] = []

    func validate() throws {
        guard batch >= 1 else { throw ValidationError("--batch must be at least 1") }
        if let threads, threads < 1 { throw ValidationError("--threads must be at least 1") }
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
    }

    func run() throws {
        if let threads { Compute.threadCount = threads }
        let weightsPath = weights ?? (forge ? "../shared/forge-mnist" : "Weights/mnist")
        let model: Model
        do {
            model = forge ? try MNISTNetwork.forge() : try MNISTNetwork.deep()
            try model.compile(from: try DirectoryParameterSource(directory: URL(fileURLWithPath: weightsPath)))
        } catch let error as AnvilError {
            throw CommandFailure("cannot load the \(forge ? "Forge" : "Deep") MNIST weights from '\(weightsPath)': \(error.message)")
        }
        print("Model: \(forge ? "Forge MNIST" : "Deep MNIST") — weights \(weightsPath)")
        print(model.summary())
        let scale = MNISTNetwork.inputScale(forge: forge)
        if !image.isEmpty {
            try classifyImages(model, scale: scale)
        } else {
            try evaluate(model, scale: scale)
        }
    }

    private func classifyImages(_ model: Model, scale: Float) throws {
        for path in image {
            let pixels: [Float]
            do {
                pixels = try MNISTPreprocessor().preprocess(contentsOf: URL(fileURLWithPath: path))
            } catch let error as VisionError {
                throw CommandFailure("\(path): \(error.message)")
            }
            let input = try Tensor(batch: 1, shape: model.inputShapes[0], values: pixels.map { $0 * scale })
            let probabilities = try model.predict(input).values
            print("\(path) as the network sees it (28 × 28):")
            print(MNISTPreprocessor.asciiArt(pixels, width: 28, height: 28))
            let top = probabilities.enumerated().sorted { $0.element > $1.element }.prefix(3)
            for (rank, entry) in top.enumerated() {
                print("\(rank + 1). digit \(entry.offset): \(String(format: "%6.2f", entry.element * 100))%")
            }
        }
    }

    private func evaluate(_ model: Model, scale: Float) throws {
        try fetchIfNeeded()
        let test: MNISTDataset
        do {
            test = try MNISTDataset(directory: URL(fileURLWithPath: data), split: .test)
        } catch let error as VisionError {
            throw CommandFailure(error.description)
        }
        let count = min(limit ?? test.count, test.count)
        print("Classifying \(count) MNIST test images in batches of \(batch) with \(Compute.threadCount) thread(s)")
        var matrix = ConfusionMatrix(classes: 10)
        let progress = ProgressBar(total: count)
        var inference = Duration.zero
        let clock = ContinuousClock()
        var start = 0
        while start < count {
            let range = start ..< min(start + batch, count)
            let input = try Tensor(batch: range.count, shape: model.inputShapes[0], values: try test.images(in: range, scale: scale))
            var output: Tensor?
            inference += try clock.measure { output = try model.predict(input) }
            for (offset, predicted) in output!.argmax().enumerated() {
                matrix.add(truth: test.label(at: start + offset), predicted: predicted)
            }
            start = range.upperBound
            progress.update(start)
        }
        let seconds = Double(inference.components.seconds) + Double(inference.components.attoseconds) * 1e-18
        print(matrix.table())
        print(String(format: "accuracy: %.2f%% (%d/%d)", 100 * Double(matrix.correct) / Double(count), matrix.correct, count))
        print(String(format: "throughput: %.0f images/s", Double(count) / seconds))
    }

    /// Runs `Scripts/setup/fetch_mnist.sh` when the test set is not in `--data`.
    private func fetchIfNeeded() throws {
        let directory = URL(fileURLWithPath: data)
        let needed = ["t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]
        if needed.allSatisfy({ FileManager.default.fileExists(atPath: directory.appendingPathComponent($0).path) }) { return }
        let script = "Scripts/setup/fetch_mnist.sh"
        guard FileManager.default.fileExists(atPath: script) else {
            throw CommandFailure("the MNIST test set is not in '\(data)'; run Scripts/setup/fetch_mnist.sh from the Anvil repository, or pass --data")
        }
        print("Fetching the MNIST test set into \(data) ...")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script, data]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CommandFailure("Scripts/setup/fetch_mnist.sh failed (exit \(process.terminationStatus))")
        }
    }
}
