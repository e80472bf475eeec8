import Foundation
import Testing
import Anvil
import AnvilModels
@testable import AnvilTestSupport

/// The model zoo (`Sources/AnvilModels/Zoo`) against torchvision.
///
/// For each network: the full-size definition has the published parameter count and the
/// expected shapes; and for a reduced variant (`Fixtures/zoo/<net>`, written by
/// `Scripts/fixtures/zoo_reference.py` from PyTorch with seeded random weights and a real photograph)
/// both the converted model file and the Swift definition, compiled from the same
/// weights.bin with layout `.pytorch`, reproduce PyTorch's logits.
@Suite struct ZooTests {
    /// One zoo network: its fixture, the reduced options the fixture was made with, and how
    /// to build it.
    struct Network: CustomStringConvertible, Sendable {
        let fixture: String
        let published: Int
        let width: Double, classes: Int, inputSize: Int
        /// Layers whose output shapes the full-size network must have.
        let shapes: [String: Shape]
        let build: @Sendable (_ classes: Int, _ width: Double, _ inputSize: Int, _ softmax: Bool) throws -> Model

        var description: String { fixture }
    }

    static let networks: [Network] = [
        Network(fixture: "vgg16", published: VGG16.publishedParameterCount, width: 1.0 / 32, classes: 100, inputSize: 224,
                shapes: ["features_30": Shape(height: 7, width: 7, channels: 512), "classifier_0": .vector(4096),
                         "classifier_6": .vector(1000)],
                build: { try VGG16.model(classes: $0, width: $1, inputSize: $2, includeSoftmax: $3) }),
        Network(fixture: "mobilenet_v1", published: MobileNetV1.publishedParameterCount, width: 0.25, classes: 100,
                inputSize: 128,
                shapes: ["conv1_relu": Shape(height: 112, width: 112, channels: 32),
                         "conv_pw_13_relu": Shape(height: 7, width: 7, channels: 1024), "conv_preds": .vector(1000)],
                build: { try MobileNetV1.model(alpha: $1, inputSize: $2, classes: $0, includeSoftmax: $3) }),
        Network(fixture: "inception_v3", published: InceptionV3.publishedParameterCount, width: 1.0 / 16, classes: 100,
                inputSize: 139,
                shapes: ["maxpool2": Shape(height: 35, width: 35, channels: 192),
                         "Mixed_5d_cat": Shape(height: 35, width: 35, channels: 288),
                         "Mixed_6e_cat": Shape(height: 17, width: 17, channels: 768),
                         "Mixed_7c_cat_3": Shape(height: 8, width: 8, channels: 2048), "fc": .vector(1000)],
                build: { try InceptionV3.model(classes: $0, width: $1, inputSize: $2, includeSoftmax: $3) }),
        Network(fixture: "squeezenet1_1", published: SqueezeNet11.publishedParameterCount, width: 0.25, classes: 100,
                inputSize: 100,
                shapes: ["features_2": Shape(height: 55, width: 55, channels: 64),
                         "features_12_cat": Shape(height: 13, width: 13, channels: 512),
                         "classifier_1": Shape(height: 13, width: 13, channels: 1000), "classifier_3": .vector(1000)],
                build: { try SqueezeNet11.model(classes: $0, width: $1, inputSize: $2, includeSoftmax: $3) }),
        Network(fixture: "resnet18", published: ResNet18.publishedParameterCount, width: 1.0 / 8, classes: 100, inputSize: 72,
                shapes: ["maxpool": Shape(height: 56, width: 56, channels: 64),
                         "layer4_1_add": Shape(height: 7, width: 7, channels: 512), "fc": .vector(1000)],
                build: { try ResNet18.model(classes: $0, width: $1, inputSize: $2, includeSoftmax: $3) }),
        Network(fixture: "resnet50", published: ResNet50.publishedParameterCount, width: 1.0 / 16, classes: 100, inputSize: 72,
                shapes: ["layer1_2_add": Shape(height: 56, width: 56, channels: 256),
                         "layer4_2_add": Shape(height: 7, width: 7, channels: 2048), "fc": .vector(1000)],
                build: { try ResNet50.model(classes: $0, width: $1, inputSize: $2, includeSoftmax: $3) }),
        Network(fixture: "mobilenet_v2", published: MobileNetV2.publishedParameterCount, width: 0.1, classes: 10,
                inputSize: 96,
                shapes: ["features_0_2": Shape(height: 112, width: 112, channels: 32),
                         "features_1_conv_2": Shape(height: 112, width: 112, channels: 16),
                         "features_17_conv_3": Shape(height: 7, width: 7, channels: 320),
                         "features_18_2": Shape(height: 7, width: 7, channels: 1280), "classifier_1": .vector(1000)],
                build: { try MobileNetV2.model(classes: $0, width: $1, inputSize: $2, includeSoftmax: $3) }),
        Network(fixture: "googlenet", published: GoogLeNet.publishedParameterCount, width: 1.0 / 16, classes: 100,
                inputSize: 96,
                shapes: ["maxpool2": Shape(height: 28, width: 28, channels: 192),
                         "inception3b_cat": Shape(height: 28, width: 28, channels: 480),
                         "inception4e_cat": Shape(height: 14, width: 14, channels: 832),
                         "maxpool4": Shape(height: 7, width: 7, channels: 832),
                         "inception5b_cat": Shape(height: 7, width: 7, channels: 1024), "fc": .vector(1000)],
                build: { try GoogLeNet.model(classes: $0, width: $1, inputSize: $2, includeSoftmax: $3) }),
        Network(fixture: "densenet121", published: DenseNet121.publishedParameterCount, width: 1.0 / 16, classes: 10,
                inputSize: 64,
                shapes: ["features_pool0": Shape(height: 56, width: 56, channels: 64),
                         "features_denseblock1_cat": Shape(height: 56, width: 56, channels: 256),
                         "features_transition1_pool": Shape(height: 28, width: 28, channels: 128),
                         "features_denseblock3_cat": Shape(height: 14, width: 14, channels: 1024),
                         "features_norm5": Shape(height: 7, width: 7, channels: 1024), "classifier": .vector(1000)],
                build: { try DenseNet121.model(classes: $0, width: $1, inputSize: $2, includeSoftmax: $3) }),
        Network(fixture: "mobilenet_v3_large", published: MobileNetV3.Variant.large.publishedParameterCount, width: 0.1,
                classes: 10, inputSize: 96,
                shapes: ["features_0_2": Shape(height: 112, width: 112, channels: 16),
                         "features_4_block_2_mul": Shape(height: 28, width: 28, channels: 72),
                         "features_16_2": Shape(height: 7, width: 7, channels: 960), "classifier_0": .vector(1280),
                         "classifier_3": .vector(1000)],
                build: { try MobileNetV3.model(.large, classes: $0, width: $1, inputSize: $2, includeSoftmax: $3) }),
        Network(fixture: "mobilenet_v3_small", published: MobileNetV3.Variant.small.publishedParameterCount, width: 0.1,
                classes: 10, inputSize: 96,
                shapes: ["features_0_2": Shape(height: 112, width: 112, channels: 16),
                         "features_1_block_1_mul": Shape(height: 56, width: 56, channels: 16),
                         "features_12_2": Shape(height: 7, width: 7, channels: 576), "classifier_0": .vector(1024),
                         "classifier_3": .vector(1000)],
                build: { try MobileNetV3.model(.small, classes: $0, width: $1, inputSize: $2, includeSoftmax: $3) }),
        Network(fixture: "shufflenet_v2_x1_0", published: ShuffleNetV2.publishedParameterCount, width: 1.0 / 8, classes: 10,
                inputSize: 96,
                shapes: ["maxpool": Shape(height: 56, width: 56, channels: 24),
                         "stage2_1_slice_2": Shape(height: 28, width: 28, channels: 58),
                         "stage2_3_shuffle": Shape(height: 28, width: 28, channels: 116),
                         "stage3_7_shuffle": Shape(height: 14, width: 14, channels: 232),
                         "stage4_3_shuffle": Shape(height: 7, width: 7, channels: 464),
                         "conv5_2": Shape(height: 7, width: 7, channels: 1024), "fc": .vector(1000)],
                build: { try ShuffleNetV2.model(classes: $0, width: $1, inputSize: $2, includeSoftmax: $3) }),
        Network(fixture: "efficientnet_b0", published: EfficientNetB0.publishedParameterCount, width: 0.1, classes: 10,
                inputSize: 96,
                shapes: ["features_0_2": Shape(height: 112, width: 112, channels: 32),
                         "features_2_0_block_2_mul": Shape(height: 56, width: 56, channels: 96),
                         "features_6_3_add": Shape(height: 7, width: 7, channels: 192),
                         "features_8_2": Shape(height: 7, width: 7, channels: 1280), "classifier_1": .vector(1000)],
                build: { try EfficientNetB0.model(classes: $0, width: $1, inputSize: $2, includeSoftmax: $3) }),
    ]

    /// A fixture directory: the converted model, the photograph and PyTorch's logits.
    struct Fixture {
        let directory: URL
        let input: Tensor
        let expected: [Float]
        let reference: [String: Any]

        init(_ name: String) throws {
            try self.init(directory: Fixtures.shared.appendingPathComponent("zoo/\(name)"))
        }

        init(directory: URL) throws {
            self.directory = directory
            let model = try ModelFile(contentsOf: directory.appendingPathComponent("model.json"))
            input = try Tensor(batch: 1, shape: model.model.inputShapes[0],
                               values: Fixtures.floats(directory.appendingPathComponent("input.f32")))
            expected = try Fixtures.floats(directory.appendingPathComponent("expected.f32"))
            let json = try Data(contentsOf: directory.appendingPathComponent("reference.json"))
            reference = try JSONSerialization.jsonObject(with: json) as? [String: Any] ?? [:]
        }

        /// weights.bin with the tensor index of model.json.
        func weights() throws -> BlobParameterSource {
            let json = try Data(contentsOf: directory.appendingPathComponent("model.json"))
            let root = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            let parameters = try #require(root["parameters"] as? [String: Any])
            #expect(parameters["layout"] as? String == "pytorch")
            let source = try #require(parameters["source"] as? [String: Any])
            let tensors = try #require(source["tensors"] as? [String: [String: Int]])
            let index = try tensors.mapValues { entry in
                BlobParameterSource.Entry(offset: try #require(entry["offset"]), count: try #require(entry["count"]))
            }
            return try BlobParameterSource(url: directory.appendingPathComponent("weights.bin"), index: index)
        }
    }

    /// Trainable parameters: batch-norm running statistics are buffers in PyTorch and
    /// non-trainable in Keras, and published counts leave them out.
    static func trainableParameters(_ model: Model) -> Int {
        model.layers.flatMap(\.parameters).filter { $0.kind != .mean && $0.kind != .variance }.reduce(0) { $0 + $1.count }
    }

    static func top5(_ values: [Float]) -> [Int] {
        Array(values.indices.sorted { values[$0] > values[$1] || (values[$0] == values[$1] && $0 < $1) }.prefix(5))
    }

    /// Anvil's logits match PyTorch's: max |diff| ≤ 1e-3 × (max − min) and the same top-5.
    /// Prints the figures.
    static func expectMatch(_ output: [Float], _ expected: [Float], _ what: String) {
        #expect(output.count == expected.count, "\(what): \(output.count) outputs, PyTorch \(expected.count)")
        guard output.count == expected.count, let high = expected.max(), let low = expected.min() else { return }
        let difference = zip(output, expected).map { abs($0 - $1) }.max() ?? 0
        #expect(difference <= 1e-3 * (high - low), "\(what): max |diff| \(difference), logit range \(high - low)")
        #expect(top5(output) == top5(expected), "\(what): top-5 \(top5(output)), PyTorch \(top5(expected))")
        print("\(what): max |diff| \(difference) of logit range \(high - low); top-5 \(top5(output) == top5(expected) ? "agrees" : "differs")")
    }

    @Test(arguments: networks)
    func fullSizeMatchesPublishedCountAndShapes(_ network: Network) throws {
        let model = try network.build(1000, 1, network.fixture == "inception_v3" ? 299 : 224, true)
        #expect(Self.trainableParameters(model) == network.published)
        let shapes = Dictionary(uniqueKeysWithValues: model.layers.map { ($0.name, $0.outputShape) })
        for (layer, shape) in network.shapes {
            #expect(shapes[layer] == shape, "\(network): layer '\(layer)' is \(shapes[layer].map(\.description) ?? "missing")")
        }
        #expect(model.outputNames == ["softmax"])
        #expect(model.outputShapes == [.vector(1000)])
    }

    /// The summary's total is Keras's count (running statistics included) and says how many of
    /// those are statistics, so torchvision's count is the difference.
    @Test(arguments: networks)
    func summaryTotalSaysHowManyAreNormalizationStatistics(_ network: Network) throws {
        let model = try network.build(1000, 1, network.fixture == "inception_v3" ? 299 : 224, true)
        let total = model.layers.flatMap(\.parameters).reduce(0) { $0 + $1.count }
        let summary = model.summary()
        let statistics = total - network.published
        func grouped(_ value: Int) -> String {
            let formatter = NumberFormatter()
            formatter.numberStyle = .decimal
            formatter.groupingSeparator = ","
            formatter.usesGroupingSeparator = true
            return formatter.string(from: NSNumber(value: value))!
        }
        let line = try #require(summary.split(separator: "\n").first { $0.hasPrefix("Parameters: ") }, "\(summary)")
        #expect(line.hasPrefix("Parameters: \(grouped(total)) ("), "\(network): \(line)")
        if statistics > 0 {
            #expect(line.hasSuffix(", of which \(grouped(statistics)) normalization statistics (running mean, variance)"),
                    "\(network): \(line); torchvision counts \(grouped(network.published))")
        } else {
            #expect(!line.contains("of which"), "\(network): \(line)")
        }
    }

    @Test(arguments: networks)
    func convertedModelMatchesPyTorch(_ network: Network) throws {
        let fixture = try Fixture(network.fixture)
        let model = try ModelFile(contentsOf: fixture.directory.appendingPathComponent("model.json")).compiledModel()
        Self.expectMatch(try model.predict(fixture.input).values, fixture.expected, "\(network) model.json")
        #expect(Self.top5(fixture.expected) == fixture.reference["top5"] as? [Int])
    }

    @Test(arguments: networks)
    func zooDefinitionMatchesPyTorch(_ network: Network) throws {
        let fixture = try Fixture(network.fixture)
        #expect(fixture.reference["width"] as? Double == network.width)
        #expect(fixture.reference["classes"] as? Int == network.classes)
        #expect(fixture.reference["inputSize"] as? Int == network.inputSize)
        let model = try network.build(network.classes, network.width, network.inputSize, false)
        #expect(Self.trainableParameters(model) == fixture.reference["parameters"] as? Int)
        try model.compile(layout: .pytorch, from: try fixture.weights())
        Self.expectMatch(try model.predict(fixture.input).values, fixture.expected, "\(network) zoo definition")
    }

    /// Opt-in, at full size: with `ANVIL_ZOO_FULL=<directory>` holding what
    /// `Scripts/fixtures/zoo_full_check.py` writes (torchvision's networks with seeded random weights,
    /// converted, with a photograph and PyTorch's logits), each full-size zoo definition
    /// compiled from those weights reproduces PyTorch. Slow in debug builds; skipped otherwise.
    @Test(arguments: networks)
    func fullSizeZooDefinitionMatchesPyTorch(_ network: Network) throws {
        guard let root = ProcessInfo.processInfo.environment["ANVIL_ZOO_FULL"] else { return }
        let directory = URL(fileURLWithPath: root).appendingPathComponent(network.fixture)
        guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("expected.f32").path) else {
            print("skipped: \(directory.path) has no full-size reference (run Scripts/fixtures/zoo_full_check.py)")
            return
        }
        let fixture = try Fixture(directory: directory)
        let model = try network.build(1000, 1, fixture.input.shape.height, false)
        try model.compile(layout: .pytorch, from: try fixture.weights())
        Self.expectMatch(try model.predict(fixture.input).values, fixture.expected, "\(network) full-size zoo definition")
    }

    /// FCN-ResNet50 at full size: torchvision's count without the auxiliary head, output
    /// stride 8 with dilated stages, scores upsampled to the input size.
    @Test func fcnFullSizeMatchesPublishedCountAndShapes() throws {
        let model = try FCNResNet50.model()
        #expect(Self.trainableParameters(model) == FCNResNet50.publishedParameterCount)
        #expect(FCNResNet50.publishedParameterCountWithAuxiliaryClassifier - FCNResNet50.publishedParameterCount
                == 1024 * 256 * 9 + 2 * 256 + 256 * 21 + 21)  // FCNHead(1024, 21) on layer3: 3x3 conv, BN, 1x1 conv
        let shapes = Dictionary(uniqueKeysWithValues: model.layers.map { ($0.name, $0.outputShape) })
        let expected: [String: Shape] = [
            "backbone_maxpool": Shape(height: 130, width: 130, channels: 64),
            "backbone_layer2_3_add": Shape(height: 65, width: 65, channels: 512),
            "backbone_layer3_5_add": Shape(height: 65, width: 65, channels: 1024),
            "backbone_layer4_2_add": Shape(height: 65, width: 65, channels: 2048),
            "classifier_4": Shape(height: 65, width: 65, channels: 21),
            "resize": Shape(height: 520, width: 520, channels: 21),
        ]
        for (layer, shape) in expected {
            #expect(shapes[layer] == shape, "fcn_resnet50: layer '\(layer)' is \(shapes[layer].map(\.description) ?? "missing")")
        }
        #expect(model.outputNames == ["resize"])
    }

    /// Per-pixel scores match PyTorch's (max |diff| ≤ 1e-3 × range), and every pixel whose
    /// best class leads the second by more than that bound gets PyTorch's class.
    static func expectSegmentationMatch(_ output: [Float], _ expected: [Float], classes: Int, _ what: String) {
        #expect(output.count == expected.count, "\(what): \(output.count) outputs, PyTorch \(expected.count)")
        guard output.count == expected.count, let high = expected.max(), let low = expected.min() else { return }
        let bound = 1e-3 * (high - low)
        let difference = zip(output, expected).map { abs($0 - $1) }.max() ?? 0
        #expect(difference <= bound, "\(what): max |diff| \(difference), score range \(high - low)")
        var checked = 0, disagreeing = 0
        for pixel in 0 ..< expected.count / classes {
            let theirs = Array(expected[pixel * classes ..< (pixel + 1) * classes])
            let ours = Array(output[pixel * classes ..< (pixel + 1) * classes])
            let order = theirs.indices.sorted { theirs[$0] > theirs[$1] }
            guard theirs[order[0]] - theirs[order[1]] > bound else { continue }
            checked += 1
            if ours.indices.max(by: { ours[$0] < ours[$1] }) != order[0] { disagreeing += 1 }
        }
        #expect(disagreeing == 0, "\(what): \(disagreeing) of \(checked) clear pixels get another class")
        #expect(checked > expected.count / classes / 2, "\(what): only \(checked) clear pixels")
        print("\(what): max |diff| \(difference) of score range \(high - low); \(checked) clear pixels, \(disagreeing) differ")
    }

    @Test func fcnConvertedModelAndDefinitionMatchPyTorch() throws {
        let fixture = try Fixture("fcn_resnet50")
        #expect(fixture.reference["width"] as? Double == 1.0 / 32)
        #expect(fixture.reference["classes"] as? Int == 21)
        #expect(fixture.reference["inputSize"] as? Int == 48)
        #expect(fixture.reference["outputShape"] as? [Int] == [48, 48, 21])
        let converted = try ModelFile(contentsOf: fixture.directory.appendingPathComponent("model.json")).compiledModel()
        Self.expectSegmentationMatch(try converted.predict(fixture.input).values, fixture.expected, classes: 21,
                                     "fcn_resnet50 model.json")
        let model = try FCNResNet50.model(classes: 21, width: 1.0 / 32, inputSize: 48)
        #expect(Self.trainableParameters(model) == fixture.reference["parameters"] as? Int)
        try model.compile(layout: .pytorch, from: try fixture.weights())
        Self.expectSegmentationMatch(try model.predict(fixture.input).values, fixture.expected, classes: 21,
                                     "fcn_resnet50 zoo definition")
    }

    @Test func softmaxGivesProbabilitiesOfTheLogits() throws {
        let network = Self.networks[4]
        let fixture = try Fixture(network.fixture)
        let model = try network.build(network.classes, network.width, network.inputSize, true)
        try model.compile(layout: .pytorch, from: try fixture.weights())
        let probabilities = try model.predict(fixture.input).values
        #expect(abs(probabilities.reduce(0, +) - 1) < 1e-4)
        #expect(probabilities.allSatisfy { $0 >= 0 })
        #expect(Self.top5(probabilities) == Self.top5(fixture.expected))
    }

    @Test func mobileNetResolutionAndWidthOptions() throws {
        let model = try MobileNetV1.model(alpha: 0.5, depthMultiplier: 2, inputSize: 160, classes: 10)
        let shapes = Dictionary(uniqueKeysWithValues: model.layers.map { ($0.name, $0.outputShape) })
        #expect(shapes["conv1"] == Shape(height: 80, width: 80, channels: 16))
        #expect(shapes["conv_dw_1"] == Shape(height: 80, width: 80, channels: 32))
        #expect(shapes["conv_pw_13"] == Shape(height: 5, width: 5, channels: 512))
        #expect(model.outputShapes == [.vector(10)])
    }

    @Test func vggLargerInputsPoolTo7x7() throws {
        let model = try VGG16.model(classes: 10, width: 1.0 / 16, inputSize: 448, includeSoftmax: false)
        let shapes = Dictionary(uniqueKeysWithValues: model.layers.map { ($0.name, $0.outputShape) })
        #expect(shapes["features_30"] == Shape(height: 14, width: 14, channels: 32))
        #expect(shapes["avgpool"] == Shape(height: 7, width: 7, channels: 32))
        #expect(model.outputNames == ["classifier_6"])
    }

    @Test func invalidOptionsAreErrors() {
        #expect(throws: AnvilError.self) { try VGG16.model(inputSize: 200) }
        #expect(throws: AnvilError.self) { try SqueezeNet11.model(classes: 0) }
        #expect(throws: AnvilError.self) { try ResNet50.model(width: 0) }
        #expect(throws: AnvilError.self) { try InceptionV3.model(inputSize: 74) }
        #expect(throws: AnvilError.self) { try MobileNetV1.model(depthMultiplier: 0) }
        #expect(throws: AnvilError.self) { try ResNet.model(block: .basic, stages: [2, 2, 2]) }
        #expect(throws: AnvilError.self) { try MobileNetV2.model(width: -1) }
        #expect(throws: AnvilError.self) { try GoogLeNet.model(inputSize: 31) }
        #expect(throws: AnvilError.self) { try DenseNet121.model(classes: 0) }
        #expect(throws: AnvilError.self) { try FCNResNet50.model(inputSize: 7) }
        #expect(throws: AnvilError.self) { try MobileNetV3.model(.small, width: .infinity) }
        #expect(throws: AnvilError.self) { try ShuffleNetV2.model(inputSize: 0) }
        #expect(throws: AnvilError.self) { try EfficientNetB0.model(classes: -1) }
    }
}
