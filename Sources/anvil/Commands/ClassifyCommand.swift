import Anvil
import AnvilModels
import AnvilVision
import ArgumentParser
import Foundation

/// `anvil classify`: the top-k classes of photos, with a zoo network or a model file.
struct ClassifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "classify",
        abstract: "Classify photos (JPEG, PNG, ...) with a zoo network or a model file and print the top classes.",
        discussion: """
        --model is a zoo name (\(zooNames)) or a model file. A zoo network needs --weights: a .safetensors PyTorch state_dict (torchvision's module paths, layout pytorch) or an Anvil model file whose parameters to use. A model file uses its own parameters unless --weights is given.

        Each image is decoded, made RGB (grey replicated, transparency composited over white), resized so that its shorter side is the input size / 0.875 (256 for 224), centre-cropped to the input size and normalised by the preset: caffe (BGR, 0-255 minus the ImageNet means), pytorch (RGB / 255, ImageNet mean and std) or inception (x / 127.5 - 1).

        A zoo network chooses its preset (vgg16: caffe; resnet18, resnet50, squeezenet1_1, mobilenet_v1, mobilenet_v2, mobilenet_v3_large, mobilenet_v3_small, shufflenet_v2_x1_0, efficientnet_b0, densenet121: pytorch; inception_v3, googlenet: inception), and so does a model file whose name is a zoo name; otherwise pass --preset. Weights trained another way need --preset (torchvision's VGG16 weights: --preset pytorch).

        Labels: --labels (one per line, as many as the model has outputs), else the built-in ImageNet names for a 1000-class model, else "class N". Each image prints rank, probability, class index and label.
        """
    )

    static let zooNames = ModelCatalog.entries.filter { $0.preprocessing != nil }.map(\.name).joined(separator: ", ")

    @Option(help: "A zoo name or a model file (model.json).")
    var model: String

    @Option(help: "Weights: a .safetensors PyTorch state_dict or an Anvil model file (required for a zoo name).")
    var weights: String?

    @Option(help: "Input preprocessing: caffe, pytorch or inception (default: the model's).")
    var preset: ImagePreprocessing.Preset?

    @Option(help: "Resampling filter for resizing: bilinear or lanczos3.")
    var filter: ResamplingFilter = .bilinear

    @Option(help: "A label file, one label per line (default: ImageNet's names for 1000 outputs).")
    var labels: String?

    @Option(help: "How many classes to print per image.")
    var top = 5

    @Option(help: "What the model outputs: probabilities, logits (softmax is applied), or auto (probabilities if the output layer is Softmax).")
    var scores: ScoresOption = .auto

    @Option(help: "Threads for OpenBLAS and Anvil's loops (default: all cores).")
    var threads: Int?

    @Argument(help: "Image files to classify.")
    var images: [String]

    enum ScoresOption: String, ExpressibleByArgument, CaseIterable {
        case auto, probabilities, logits
    }

    func validate() throws {
        guard top >= 1 else { throw ValidationError("--top must be at least 1") }
        guard !images.isEmpty else { throw ValidationError("give at least one image file") }
        if let threads, threads < 1 { throw ValidationError("--threads must be at least 1") }
    }

    func run() throws {
        if let threads { Compute.threadCount = threads }
        let loaded = try loadModel()
        let network = loaded.model
        let inputShape = network.inputShapes[0]
        guard network.inputShapes.count == 1, network.outputShapes.count == 1 else {
            throw CommandFailure("'\(model)' has \(network.inputShapes.count) inputs and \(network.outputShapes.count) outputs; classify needs one of each")
        }
        guard !network.hasOpenInputs, network.openOutputShapes.allSatisfy({ !$0.isOpen }) else {
            throw CommandFailure("'\(model)' has an open input size \(network.openInputShapes[0]); classify resizes photos to a fixed size: convert the model with one (e.g. --input-shape)")
        }
        guard inputShape.channels == 3 else {
            throw CommandFailure("'\(model)' takes \(inputShape.channels)-channel input; classify prepares RGB photos (3 channels)\(inputShape.channels == 1 ? " — for digits use `anvil mnist --image`" : "")")
        }
        let classes = network.outputShapes[0].count
        guard let chosenPreset = preset ?? loaded.preset else {
            throw ValidationError("'\(model)' is not a zoo network: pass --preset caffe, pytorch or inception (how its training images were normalised)")
        }
        var preprocessing = ImagePreprocessing(preset: chosenPreset, size: inputShape.height)
        preprocessing.width = inputShape.width
        preprocessing.resize = .shorterSide(ImagePreprocessing.defaultResize(forCrop: max(inputShape.width, inputShape.height)))
        preprocessing.filter = filter

        let (labelSet, labelOrigin) = try loadLabels(classes: classes)
        let kind: ScoreKind
        let kindNote: String
        switch scores {
        case .probabilities: (kind, kindNote) = (.probabilities, "probabilities (as told)")
        case .logits: (kind, kindNote) = (.logits, "logits, softmax applied (as told)")
        case .auto:
            let endsWithSoftmax = network.layers.last { network.outputNames.contains($0.name) }?.layer is Softmax
            (kind, kindNote) = endsWithSoftmax ? (.probabilities, "probabilities (the model ends with Softmax)")
                                               : (.logits, "logits, softmax applied (the model does not end with Softmax)")
        }

        print("model: \(loaded.description)")
        print("input: \(inputShape.height)×\(inputShape.width)×3, preset \(chosenPreset.rawValue)\(preset == nil ? "" : " (--preset)"): \(preprocessing.summary)")
        print("labels: \(labelOrigin); outputs: \(classes) \(kindNote)")

        var failures = 0
        for path in images {
            print("")
            print(path)
            do {
                let values = try preprocessing.preprocess(contentsOf: URL(fileURLWithPath: path))
                let output = try network.predict(Tensor(batch: 1, shape: inputShape, values: values))
                for (rank, p) in try output.values.top(k: top, labels: labelSet, scores: kind).enumerated() {
                    print(String(format: "%3d. %6.2f%%  %4d  ", rank + 1, Double(p.probability) * 100, p.index) + p.label)
                }
            } catch let error as VisionError {
                failures += 1
                print("  error: \(error.message)")
                FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
            } catch let error as AnvilError {
                throw CommandFailure(error.message)
            }
        }
        if failures > 0 { throw ExitCode(1) }
    }

    /// A compiled network, where it came from, and the preset it implies (if any).
    private struct Loaded {
        let model: Model
        let description: String
        let preset: ImagePreprocessing.Preset?
    }

    private func loadModel() throws -> Loaded {
        do {
            if let entry = ModelCatalog.entry(named: model) {
                guard let entryPreset = entry.preprocessing else {
                    throw ValidationError("'\(entry.name)' classifies digit drawings: use `anvil mnist --image FILE`")
                }
                guard let weights else {
                    throw ValidationError("the zoo network '\(entry.name)' needs --weights (a .safetensors PyTorch state_dict or an Anvil model file); Anvil ships no pretrained ImageNet weights")
                }
                let network = try entry.model()
                let opened = try ZooWeights.open(URL(fileURLWithPath: weights))
                try network.compile(layout: opened.layout, from: opened.source)
                return Loaded(model: network, description: "\(entry.name) (zoo: \(entry.summary)); weights \(weights) (\(opened.kind), layout \(opened.layout.rawValue))",
                              preset: ImagePreprocessing.Preset(rawValue: entryPreset.rawValue))
            }
            guard FileManager.default.fileExists(atPath: model) else {
                throw CommandFailure("'\(model)' is neither a zoo network (\(Self.zooNames)) nor a model file")
            }
            let file = try loadModelFile(model)
            let implied = file.name.flatMap { ModelCatalog.entry(named: $0)?.preprocessing }
                .flatMap { ImagePreprocessing.Preset(rawValue: $0.rawValue) }
            let title = file.name.map { "\(model) ('\($0)')" } ?? model
            if let weights {
                let opened = try ZooWeights.open(URL(fileURLWithPath: weights))
                try file.model.compile(layout: opened.layout, from: opened.source)
                return Loaded(model: file.model, description: "\(title); weights \(weights) (\(opened.kind), layout \(opened.layout.rawValue))", preset: implied)
            }
            guard file.parameters != nil else {
                throw CommandFailure("model file '\(model)' names no parameters; pass --weights")
            }
            return Loaded(model: try file.compiledModel(), description: "\(title) with its parameters (layout \(file.layout.rawValue))", preset: implied)
        } catch let error as AnvilError {
            throw CommandFailure(error.message)
        }
    }

    private func loadLabels(classes: Int) throws -> (Labels, String) {
        if let labels {
            do {
                return (try Labels(contentsOf: URL(fileURLWithPath: labels), expectedCount: classes), labels)
            } catch let error as VisionError {
                throw CommandFailure(error.code == .countMismatch
                                      ? "\(labels): \(error.message) (the model has \(classes) outputs)" : error.description)
            }
        }
        if classes == ImageNet.classCount { return (Labels(ImageNet.classNames), "ImageNet (1000 classes, built in)") }
        return (Labels.numbered(classes), "none (\(classes) outputs, named \"class N\"; --labels gives names)")
    }
}

extension ImagePreprocessing.Preset: ExpressibleByArgument {}
extension ResamplingFilter: ExpressibleByArgument {}
