import Anvil

/// The networks `anvil` knows by name (for `anvil bench` and `anvil classify`), with what a
/// caller needs to feed them: input size, class count and image preprocessing.
///
/// ```swift
/// let entry = ModelCatalog.entry(named: "resnet50")!        // 224×224, pytorch preset
/// let model = try entry.model()                             // not compiled
/// ```
///
/// Names are torchvision's function names (`vgg16`, `resnet18`, ...) and are matched
/// ignoring case, with `-` and `_` interchangeable (`mobilenet-v1` finds `mobilenet_v1`).
public enum ModelCatalog {
    /// One named network.
    public struct Entry: Sendable {
        /// The catalog name, e.g. `"resnet50"`.
        public let name: String
        /// A short description, e.g. `"ResNet-50 (torchvision), 25.6 M parameters"`.
        public let summary: String
        /// The input shape (height, width, channels).
        public let inputShape: Shape
        /// The number of outputs (classes).
        public let classes: Int
        /// How photos are prepared for it (`nil` for the MNIST networks, which take digit
        /// drawings: AnvilVision's `MNISTPreprocessor`).
        ///
        /// The default the network's usual pretrained weights expect; `anvil classify --preset`
        /// overrides it. VGG16 is listed as ``PreprocessingPreset/caffe``, the convention of the
        /// original VGG release that Forge's VGGNet port used; torchvision's VGG16 weights were
        /// trained with ``PreprocessingPreset/pytorch`` instead. GoogLeNet, like Inception-v3, is
        /// listed as ``PreprocessingPreset/inception``: torchvision's pretrained weights expect
        /// its `transform_input`, which is that normalisation.
        public let preprocessing: PreprocessingPreset?
        private let build: @Sendable () throws -> Model

        /// Creates an entry.
        public init(name: String, summary: String, inputShape: Shape, classes: Int, preprocessing: PreprocessingPreset?,
                    build: @escaping @Sendable () throws -> Model) {
            self.name = name
            self.summary = summary
            self.inputShape = inputShape
            self.classes = classes
            self.preprocessing = preprocessing
            self.build = build
        }

        /// A new, uncompiled instance of the network.
        public func model() throws -> Model { try build() }
    }

    /// Every network, in the order help texts list them.
    public static let entries: [Entry] = [
        Entry(name: "mnist", summary: "Deep MNIST digit recognizer (Anvil's trained weights in Weights/mnist)",
              inputShape: Shape(height: 28, width: 28, channels: 1), classes: 10, preprocessing: nil) { try MNISTNetwork.deep() },
        Entry(name: "forge-mnist", summary: "Forge's MNIST network",
              inputShape: Shape(height: 28, width: 28, channels: 1), classes: 10, preprocessing: nil) { try MNISTNetwork.forge() },
        Entry(name: "vgg16", summary: "VGG16 (torchvision layer names), 138.4 M parameters",
              inputShape: imageNet(224), classes: 1000, preprocessing: .caffe) { try VGG16.model() },
        Entry(name: "resnet18", summary: "ResNet-18 (torchvision), 11.7 M parameters",
              inputShape: imageNet(224), classes: 1000, preprocessing: .pytorch) { try ResNet18.model() },
        Entry(name: "resnet50", summary: "ResNet-50 v1.5 (torchvision), 25.6 M parameters",
              inputShape: imageNet(224), classes: 1000, preprocessing: .pytorch) { try ResNet50.model() },
        Entry(name: "squeezenet1_1", summary: "SqueezeNet 1.1 (torchvision), 1.2 M parameters",
              inputShape: imageNet(224), classes: 1000, preprocessing: .pytorch) { try SqueezeNet11.model() },
        Entry(name: "mobilenet_v1", summary: "MobileNet v1, α = 1 (Keras layer names), 4.2 M parameters",
              inputShape: imageNet(224), classes: 1000, preprocessing: .pytorch) { try MobileNetV1.model() },
        Entry(name: "inception_v3", summary: "Inception-v3 (torchvision, no auxiliary classifier), 23.8 M parameters",
              inputShape: imageNet(299), classes: 1000, preprocessing: .inception) { try InceptionV3.model() },
        Entry(name: "mobilenet_v2", summary: "MobileNet v2 (torchvision), 3.5 M parameters",
              inputShape: imageNet(224), classes: 1000, preprocessing: .pytorch) { try MobileNetV2.model() },
        Entry(name: "googlenet", summary: "GoogLeNet (torchvision, no auxiliary classifiers), 6.6 M parameters",
              inputShape: imageNet(224), classes: 1000, preprocessing: .inception) { try GoogLeNet.model() },
        Entry(name: "densenet121", summary: "DenseNet-121 (torchvision), 8.0 M parameters",
              inputShape: imageNet(224), classes: 1000, preprocessing: .pytorch) { try DenseNet121.model() },
        Entry(name: "mobilenet_v3_large", summary: "MobileNet v3 large (torchvision), 5.5 M parameters",
              inputShape: imageNet(224), classes: 1000, preprocessing: .pytorch) { try MobileNetV3.model(.large) },
        Entry(name: "mobilenet_v3_small", summary: "MobileNet v3 small (torchvision), 2.5 M parameters",
              inputShape: imageNet(224), classes: 1000, preprocessing: .pytorch) { try MobileNetV3.model(.small) },
        Entry(name: "shufflenet_v2_x1_0", summary: "ShuffleNet v2 1.0× (torchvision), 2.3 M parameters",
              inputShape: imageNet(224), classes: 1000, preprocessing: .pytorch) { try ShuffleNetV2.model() },
        Entry(name: "efficientnet_b0", summary: "EfficientNet-B0 (torchvision), 5.3 M parameters",
              inputShape: imageNet(224), classes: 1000, preprocessing: .pytorch) { try EfficientNetB0.model() },
    ]

    /// Known names, in the order help texts list them.
    public static var names: [String] { entries.map(\.name) }

    /// The entry called `name` (ignoring case, `-` and `_` interchangeable), or `nil`.
    public static func entry(named name: String) -> Entry? {
        let wanted = normalized(name)
        return entries.first { normalized($0.name) == wanted }
    }

    /// The network called `name` (not compiled), or `nil` for an unknown name.
    public static func model(named name: String) throws -> Model? {
        try entry(named: name)?.model()
    }

    private static func normalized(_ name: String) -> String {
        name.lowercased().replacingOccurrences(of: "-", with: "_")
    }

    private static func imageNet(_ size: Int) -> Shape { Shape(height: size, width: size, channels: 3) }
}
