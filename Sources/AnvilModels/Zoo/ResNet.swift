import Anvil

/// ResNet (He et al. 2015) as torchvision builds it: the stem, four stages of residual
/// blocks, global average pooling and the classifier. ``ResNet18`` and ``ResNet50`` are the
/// two depths the zoo names; ``model(block:stages:classes:width:inputSize:includeSoftmax:)``
/// builds any other (ResNet-34: basic blocks `[3, 4, 6, 3]`; ResNet-101: bottlenecks
/// `[3, 4, 23, 3]`).
///
/// Layer names are torchvision's module paths with `.` replaced by `_`: `conv1`, `bn1`,
/// `relu`, `maxpool`; in block `layerS_B` the convolutions `layerS_B_conv1`...,
/// batch norms `layerS_B_bn1`..., the shortcut `layerS_B_downsample_0` (1×1 convolution)
/// and `layerS_B_downsample_1` (batch norm); then `avgpool` and `fc`. torchvision applies one
/// ReLU module several times per block: here its first use is `layerS_B_relu`, a bottleneck's
/// second `layerS_B_relu_2`, and the ReLU after the addition is the activation of the
/// `layerS_B_add` layer. Batch normalization uses PyTorch's epsilon, 1e-5. Weights converted
/// from a torchvision state_dict by `Scripts/convert_pytorch.py` load by name with layout
/// `.pytorch`. Input: 224×224×3 RGB normalised with ImageNet's mean and standard deviation.
public enum ResNet {
    /// The residual block of a ResNet.
    public enum Block: Sendable {
        /// Two 3×3 convolutions (ResNet-18 and -34); output channels = planes.
        case basic
        /// 1×1, 3×3 (carrying the stride, torchvision's "v1.5"), 1×1 convolutions
        /// (ResNet-50 and deeper); output channels = 4 × planes.
        case bottleneck

        /// Output channels per plane.
        var expansion: Int { self == .basic ? 1 : 4 }
    }

    /// Planes of the four stages at width 1.
    public static let stagePlanes = [64, 128, 256, 512]

    /// Builds a ResNet.
    ///
    /// - Parameters:
    ///   - block: The residual block.
    ///   - stages: Blocks in each of the four stages (ResNet-18 `[2, 2, 2, 2]`, ResNet-50 `[3, 4, 6, 3]`).
    ///   - classes: Outputs of `fc`.
    ///   - width: Scales the stem's 64 channels and every stage's planes (rounded down, at
    ///     least 1), for small variants in tests; 1 is torchvision's network.
    ///   - inputSize: Height and width of the input (the network ends with global pooling).
    ///   - includeSoftmax: End with a `softmax` layer (probabilities) instead of logits.
    public static func model(block: Block, stages: [Int], classes: Int = 1000, width: Double = 1, inputSize: Int = 224,
                             includeSoftmax: Bool = true) throws -> Model {
        try ZooSupport.check("ResNet", classes: classes, width: width, inputSize: inputSize, minimumInputSize: 1)
        guard stages.count == 4, stages.allSatisfy({ $0 > 0 }) else {
            throw AnvilError(.invalidOption, "ResNet: stages must be four positive block counts, got \(stages)")
        }
        let input = Input(width: inputSize, height: inputSize, channels: 3, name: "input")
        let x = backbone(input, prefix: "", block: block, stages: stages, width: width)
        let logits = x
            --> GlobalAveragePooling(name: "avgpool")
            --> Dense(neurons: classes, name: "fc")
        return try ZooSupport.model(input, logits, includeSoftmax: includeSoftmax)
    }

    /// The stem (7×7 convolution, batch norm, ReLU, max pooling) and the four stages, with layer
    /// names prefixed by `prefix`. `dilatedStages` are the stages whose stride becomes dilation
    /// (torchvision's `replace_stride_with_dilation`): they keep the resolution and dilate their
    /// 3×3 convolutions instead, each stage's first block by the previous dilation.
    static func backbone(_ input: SymbolicTensor, prefix: String, block: Block, stages: [Int], width: Double,
                         dilatedStages: Set<Int> = []) -> SymbolicTensor {
        var x = input
            --> Convolution(kernel: (7, 7), channels: ZooSupport.scaled(64, width), stride: (2, 2), padding: .explicit(3),
                            useBias: false, name: "\(prefix)conv1")
            --> BatchNormalization(epsilon: 1e-5, name: "\(prefix)bn1")
            --> Activation(.relu, name: "\(prefix)relu")
            --> MaxPooling(kernel: (3, 3), stride: (2, 2), padding: .explicit(1), name: "\(prefix)maxpool")
        var channels = ZooSupport.scaled(64, width)
        var dilation = 1
        for (stage, count) in stages.enumerated() {
            let planes = ZooSupport.scaled(stagePlanes[stage], width)
            var stride = stage > 0 ? 2 : 1
            let previous = dilation
            if dilatedStages.contains(stage) {
                dilation *= stride
                stride = 1
            }
            for index in 0 ..< count {
                let name = "\(prefix)layer\(stage + 1)_\(index)"
                let blockStride = index == 0 ? stride : 1
                let downsample = index == 0 && (stride != 1 || channels != planes * block.expansion)
                switch block {
                case .basic: x = basicBlock(x, name, planes: planes, stride: blockStride, downsample: downsample)
                case .bottleneck:
                    x = bottleneck(x, name, planes: planes, stride: blockStride, downsample: downsample,
                                   dilation: index == 0 ? previous : dilation)
                }
                channels = planes * block.expansion
            }
        }
        return x
    }

    /// Two 3×3 convolutions with batch norm, added to the (downsampled) input, then ReLU.
    static func basicBlock(_ x: SymbolicTensor, _ name: String, planes: Int, stride: Int, downsample: Bool) -> SymbolicTensor {
        let residual = x
            --> Convolution(kernel: (3, 3), channels: planes, stride: (stride, stride), padding: .explicit(1), useBias: false,
                            name: "\(name)_conv1")
            --> BatchNormalization(epsilon: 1e-5, name: "\(name)_bn1")
            --> Activation(.relu, name: "\(name)_relu")
            --> Convolution(kernel: (3, 3), channels: planes, padding: .explicit(1), useBias: false, name: "\(name)_conv2")
            --> BatchNormalization(epsilon: 1e-5, name: "\(name)_bn2")
        let identity = downsample ? shortcut(x, name, channels: planes, stride: stride) : x
        return [residual, identity] --> Add(activation: .relu, name: "\(name)_add")
    }

    /// 1×1, 3×3 (strided, dilated by `dilation`), 1×1 convolutions with batch norm, added to the
    /// (downsampled) input, then ReLU.
    static func bottleneck(_ x: SymbolicTensor, _ name: String, planes: Int, stride: Int, downsample: Bool,
                           dilation: Int = 1) -> SymbolicTensor {
        let residual = x
            --> Convolution(kernel: (1, 1), channels: planes, padding: .valid, useBias: false, name: "\(name)_conv1")
            --> BatchNormalization(epsilon: 1e-5, name: "\(name)_bn1")
            --> Activation(.relu, name: "\(name)_relu")
            --> Convolution(kernel: (3, 3), channels: planes, stride: (stride, stride), padding: .explicit(dilation),
                            dilation: (dilation, dilation), useBias: false, name: "\(name)_conv2")
            --> BatchNormalization(epsilon: 1e-5, name: "\(name)_bn2")
            --> Activation(.relu, name: "\(name)_relu_2")
            --> Convolution(kernel: (1, 1), channels: planes * 4, padding: .valid, useBias: false, name: "\(name)_conv3")
            --> BatchNormalization(epsilon: 1e-5, name: "\(name)_bn3")
        let identity = downsample ? shortcut(x, name, channels: planes * 4, stride: stride) : x
        return [residual, identity] --> Add(activation: .relu, name: "\(name)_add")
    }

    /// torchvision's `downsample`: a strided 1×1 convolution and batch norm.
    static func shortcut(_ x: SymbolicTensor, _ name: String, channels: Int, stride: Int) -> SymbolicTensor {
        x
            --> Convolution(kernel: (1, 1), channels: channels, stride: (stride, stride), padding: .valid, useBias: false,
                            name: "\(name)_downsample_0")
            --> BatchNormalization(epsilon: 1e-5, name: "\(name)_downsample_1")
    }
}
