import Anvil
import AnvilModels
import AnvilVision
import Foundation
import Testing
@testable import AnvilTestSupport

/// The zoo's catalog entries, the ImageNet labels, and opening zoo weights.
@Suite("Classify: catalog, labels, zoo weights")
struct ClassifyCatalogTests {
    @Test func catalogListsTheZooWithInputSizesAndPresets() throws {
        let expected: [(String, Int, PreprocessingPreset)] = [
            ("vgg16", 224, .caffe), ("resnet18", 224, .pytorch), ("resnet50", 224, .pytorch),
            ("squeezenet1_1", 224, .pytorch), ("mobilenet_v1", 224, .pytorch), ("inception_v3", 299, .inception),
            ("mobilenet_v2", 224, .pytorch), ("googlenet", 224, .inception), ("densenet121", 224, .pytorch),
            ("mobilenet_v3_large", 224, .pytorch), ("mobilenet_v3_small", 224, .pytorch), ("shufflenet_v2_x1_0", 224, .pytorch), ("efficientnet_b0", 224, .pytorch),
        ]
        for (name, size, preset) in expected {
            let entry = try #require(ModelCatalog.entry(named: name))
            #expect(entry.inputShape == Shape(height: size, width: size, channels: 3))
            #expect(entry.preprocessing == preset)
            #expect(entry.classes == 1000)
            #expect(ImagePreprocessing.Preset(rawValue: preset.rawValue) != nil)
        }
        #expect(ModelCatalog.names.prefix(2) == ["mnist", "forge-mnist"])
        #expect(ModelCatalog.entry(named: "MobileNet-V1")?.name == "mobilenet_v1")
        #expect(ModelCatalog.entry(named: "forge_mnist")?.name == "forge-mnist")
        #expect(ModelCatalog.entry(named: "alexnet") == nil)
        #expect(ModelCatalog.entry(named: "mnist")?.preprocessing == nil)
    }

    /// Building every network is cheap (no weights); its shapes must be what the entry says.
    @Test func entriesBuildTheirNetworks() throws {
        for entry in ModelCatalog.entries {
            let model = try entry.model()
            #expect(model.inputShapes == [entry.inputShape], "\(entry.name)")
            #expect(model.outputShapes[0].count == entry.classes, "\(entry.name)")
        }
        #expect(try ModelCatalog.model(named: "squeezenet1_1")?.parameterCount == SqueezeNet11.publishedParameterCount)
    }

    @Test func builtInImageNetNamesAreTheLabelFile() throws {
        let file = Fixtures.repository.appendingPathComponent("Weights/imagenet/classes.txt")
        let labels = try Labels(contentsOf: file, expectedCount: 1000)
        #expect(labels.names == ImageNet.classNames)
        #expect(labels[0] == "tench" && labels[281] == "tabby" && labels[999] == "toilet tissue")
        #expect(Set(labels.names).count == 1000)
    }

    @Test func modulePathNamingFindsTorchvisionKeys() throws {
        let keys = ["Mixed_5b.branch1x1.conv.weight", "Mixed_5b.branch1x1.bn.running_var", "conv_dw_1.weight",
                    "features.3.squeeze.bias", "layer1.0.downsample.1.running_mean", "fc.weight"]
        let naming = try ZooWeights.pytorchModulePaths(in: keys, file: "test")
        func key(_ layer: String, _ kind: ParameterKind) -> String { naming.key(ParameterRequest(layer: layer, kind: kind, count: 1)) }
        #expect(key("Mixed_5b_branch1x1_conv", .weights) == "Mixed_5b.branch1x1.conv.weight")
        #expect(key("Mixed_5b_branch1x1_bn", .variance) == "Mixed_5b.branch1x1.bn.running_var")
        #expect(key("conv_dw_1", .weights) == "conv_dw_1.weight")
        #expect(key("features_3_squeeze", .biases) == "features.3.squeeze.bias")
        #expect(key("layer1_0_downsample_1", .mean) == "layer1.0.downsample.1.running_mean")
        #expect(key("fc", .weights) == "fc.weight")
        #expect(key("missing_layer", .gamma) == "missing.layer.weight")  // PyTorch's rule for the message
        #expect(throws: AnvilError.self) { try ZooWeights.pytorchModulePaths(in: ["a_b.c.weight", "a.b_c.weight"], file: "x") }
    }

    /// Reduced Inception-v3 and MobileNet v1 — whose module names hold underscores — load from
    /// state_dict-style safetensors files (with Inception's `AuxLogits` and BatchNorm counters
    /// present and ignored) and predict exactly as with the same tensors under Anvil names.
    @Test(arguments: ["inception_v3", "mobilenet_v1"])
    func zooWeightsOpenAStateDict(network: String) throws {
        let directory = try ClassifySupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        func build() throws -> Model {
            network == "inception_v3" ? try InceptionV3.model(classes: 10, width: 1.0 / 16, inputSize: 75)
                                      : try MobileNetV1.model(alpha: 0.25, inputSize: 32, classes: 10)
        }
        let model = try build()
        let parameters = try ClassifySupport.randomParameters(of: model)
        var tensors: [(key: String, values: [Float])] = parameters.map { p in
            (key: Self.torchvisionModule(p.request.layer, network: network) + "."
                  + SafetensorsParameterSource.Naming.pytorchSuffix(p.request.kind), values: p.values)
        }
        if network == "inception_v3" {
            tensors.append((key: "AuxLogits.fc.weight", values: [1, 2, 3]))
            tensors.append((key: "Mixed_5b.branch1x1.bn.num_batches_tracked", values: [0]))
        }
        let url = directory.appendingPathComponent("\(network).safetensors")
        try ClassifySupport.writeSafetensors(tensors, to: url)

        let opened = try ZooWeights.open(url)
        #expect(opened.layout == .pytorch)
        try model.compile(layout: opened.layout, from: opened.source)
        let reference = try build()
        try reference.compile(layout: .pytorch, from: ArrayParameterSource(Dictionary(uniqueKeysWithValues: parameters.map { ($0.request.tensorName, $0.values) })))
        let shape = model.inputShapes[0]
        let input = try Tensor(batch: 1, shape: shape, values: (0 ..< shape.count).map { Float(($0 * 31) % 97) / 48 - 1 })
        #expect(try model.predict(input) == reference.predict(input))
    }

    @Test func zooWeightsOpenAModelFile() throws {
        let opened = try ZooWeights.open(ClassifySupport.zooFixture("squeezenet1_1"))
        #expect(opened.layout == .pytorch && opened.kind == "Anvil model file")
        let model = try SqueezeNet11.model(classes: 100, width: 0.25, inputSize: 100, includeSoftmax: false)
        try model.compile(layout: opened.layout, from: opened.source)
        #expect(model.isCompiled)
        #expect(throws: AnvilError.self) { try ZooWeights.open(Fixtures.repository.appendingPathComponent("README.md")) }
    }

    /// torchvision's module path for a zoo layer, written out independently of ZooWeights:
    /// Inception's units are `<block>.<branch>.<conv|bn>` (`Mixed_5b_branch5x5_1_conv` →
    /// `Mixed_5b.branch5x5_1.conv`) or `<stem unit>.<conv|bn>`; MobileNet's names are flat.
    static func torchvisionModule(_ layer: String, network: String) -> String {
        guard network == "inception_v3" else { return layer }
        for part in ["_conv", "_bn"] where layer.hasSuffix(part) {
            let unit = String(layer.dropLast(part.count)), leaf = String(part.dropFirst())
            if unit.hasPrefix("Mixed_") {
                let block = unit.prefix(8)  // Mixed_5b
                return "\(block).\(unit.dropFirst(9)).\(leaf)"
            }
            return "\(unit).\(leaf)"
        }
        return layer  // fc
    }
}
