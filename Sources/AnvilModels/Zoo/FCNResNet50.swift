import Anvil

/// FCN (Long et al. 2015) with a ResNet-50 backbone, as torchvision's
/// `fcn_resnet50(aux_loss: false)`: semantic segmentation, one score per class and pixel.
///
/// The backbone is torchvision's ResNet-50 with `replace_stride_with_dilation = [false,
/// true, true]`: stages 3 and 4 keep the resolution (output stride 8) and dilate their 3×3
/// convolutions by 2 and 4 instead (each stage's first block by the previous dilation); it
/// has no pooling or classifier. The head is a 3×3 convolution to 512 channels with batch
/// norm and ReLU, then a 1×1 convolution to the classes; a bilinear ``Resize`` (PyTorch's
/// `align_corners=False`) brings the scores back to the input size. 32,957,013 parameters at
/// 21 classes (PASCAL VOC's); torchvision's published 35,322,218 includes the training-only
/// auxiliary head (2,365,205 more). Input: RGB normalised with ImageNet's mean and standard
/// deviation, of any size the model was built for (torchvision's evaluation uses 520); output
/// `inputSize × inputSize × classes`.
///
/// Layer names are torchvision's module paths with `.` replaced by `_`: the backbone's
/// layers are ``ResNet``'s names prefixed with `backbone_` (`backbone_conv1`,
/// `backbone_layer3_0_conv2`, ...), the head `classifier_0` (convolution), `classifier_1`
/// (batch norm), `classifier_2` (ReLU), `classifier_4` (convolution), then `resize`.
/// Weights converted from a torchvision state_dict by `Scripts/convert_pytorch.py` load by
/// name with layout `.pytorch`.
public enum FCNResNet50 {
    /// torchvision's `fcn_resnet50` without the auxiliary head: 32,957,013 parameters.
    public static let publishedParameterCount = 32_957_013
    /// torchvision's published count, which includes the auxiliary head: 35,322,218.
    public static let publishedParameterCountWithAuxiliaryClassifier = 35_322_218

    /// Builds FCN-ResNet50.
    ///
    /// - Parameters:
    ///   - classes: Score maps of the output (21 for PASCAL VOC).
    ///   - width: Scales the backbone's stem and planes and the head's 512 channels (rounded
    ///     down, at least 1), for small variants in tests; 1 is FCN-ResNet50.
    ///   - inputSize: Height and width of the input and of the output, at least 8.
    ///   - includeSoftmax: End with a `softmax` layer (per-pixel probabilities over the classes)
    ///     instead of scores.
    public static func model(classes: Int = 21, width: Double = 1, inputSize: Int = 520,
                             includeSoftmax: Bool = false) throws -> Model {
        try ZooSupport.check("FCNResNet50", classes: classes, width: width, inputSize: inputSize, minimumInputSize: 8)
        let input = Input(width: inputSize, height: inputSize, channels: 3, name: "input")
        let x = ResNet.backbone(input, prefix: "backbone_", block: .bottleneck, stages: [3, 4, 6, 3], width: width,
                                dilatedStages: [2, 3])
        let scores = x
            --> Convolution(kernel: (3, 3), channels: ZooSupport.scaled(512, width), padding: .explicit(1), useBias: false,
                            name: "classifier_0")
            --> BatchNormalization(epsilon: 1e-5, name: "classifier_1")
            --> Activation(.relu, name: "classifier_2")
            --> Convolution(kernel: (1, 1), channels: classes, padding: .valid, name: "classifier_4")
            --> Resize(height: inputSize, width: inputSize, coordinates: .pytorchHalfPixel, name: "resize")
        return try ZooSupport.model(input, scores, includeSoftmax: includeSoftmax)
    }
}
