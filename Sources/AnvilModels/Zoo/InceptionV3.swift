import Anvil

/// Inception-v3 (Szegedy et al. 2015), as torchvision's
/// `inception_v3(aux_logits: false, transform_input: false)`.
///
/// A stem of five convolutions and two max pools, then eleven inception blocks whose
/// branches are joined with ``Concatenate`` — three 35×35 (`Mixed_5b`...`5d`), a reduction
/// (`Mixed_6a`), four 17×17 with factorised 7×7 convolutions (`Mixed_6b`...`6e`), a
/// reduction (`Mixed_7a`) and two 8×8 (`Mixed_7b`, `7c`) — then global average pooling and
/// the classifier: 23,834,568 parameters at 1000 classes (torchvision's published
/// 27,161,264 includes the training-only auxiliary classifier, 3,326,696 more). Input:
/// 299×299×3 (at least 75×75).
///
/// Every convolution is torchvision's `BasicConv2d` unit: convolution without bias, batch
/// normalization with epsilon 0.001, ReLU. The branches' 3×3 average pools count padded
/// cells (PyTorch's `count_include_pad=True`), which changes the border values.
///
/// Layer names are torchvision's module paths with `.` replaced by `_`: unit `Mixed_5b.branch1x1`
/// is `Mixed_5b_branch1x1_conv`, `Mixed_5b_branch1x1_bn` and `Mixed_5b_branch1x1_relu`;
/// the stem units are `Conv2d_1a_3x3` ... `Conv2d_4a_3x3`, its pools `maxpool1`, `maxpool2`;
/// a block's pooling branch reads `<block>_avgpool` (or `<block>_maxpool`) and its output is
/// `<block>_cat` (8×8 blocks: `<block>_cat` and `<block>_cat_2` join the split 1×3/3×1
/// outputs, `<block>_cat_3` the branches); then `avgpool` and `fc`. Weights converted from a
/// torchvision state_dict by `Scripts/convert_pytorch.py` load by name with layout `.pytorch`.
///
/// torchvision's pretrained weights were made for `transform_input: true`, which maps
/// ImageNet-normalised input to `(x − 0.5) / 0.5` per channel: feed this model RGB scaled
/// to 0...1, minus 0.5, divided by 0.5.
public enum InceptionV3 {
    /// torchvision's `inception_v3` without the auxiliary classifier: 23,834,568 parameters.
    public static let publishedParameterCount = 23_834_568
    /// torchvision's published count, which includes the auxiliary classifier: 27,161,264.
    public static let publishedParameterCountWithAuxiliaryClassifier = 27_161_264

    /// Builds Inception-v3.
    ///
    /// - Parameters:
    ///   - classes: Outputs of `fc`.
    ///   - width: Scales every convolution's channels (rounded down, at least 1), for small
    ///     variants in tests; 1 is Inception-v3.
    ///   - inputSize: Height and width of the input, at least 75 (the network ends with global pooling).
    ///   - includeSoftmax: End with a `softmax` layer (probabilities) instead of logits.
    public static func model(classes: Int = 1000, width: Double = 1, inputSize: Int = 299,
                             includeSoftmax: Bool = true) throws -> Model {
        try ZooSupport.check("InceptionV3", classes: classes, width: width, inputSize: inputSize, minimumInputSize: 75)
        let c = { (channels: Int) in ZooSupport.scaled(channels, width) }
        let input = Input(width: inputSize, height: inputSize, channels: 3, name: "input")
        var x = unit(input, "Conv2d_1a_3x3", c(32), (3, 3), stride: 2)
        x = unit(x, "Conv2d_2a_3x3", c(32), (3, 3))
        x = unit(x, "Conv2d_2b_3x3", c(64), (3, 3), padding: (1, 1))
        x = x --> MaxPooling(kernel: (3, 3), stride: (2, 2), name: "maxpool1")
        x = unit(x, "Conv2d_3b_1x1", c(80), (1, 1))
        x = unit(x, "Conv2d_4a_3x3", c(192), (3, 3))
        x = x --> MaxPooling(kernel: (3, 3), stride: (2, 2), name: "maxpool2")
        x = block35(x, "Mixed_5b", poolFeatures: c(32), c)
        x = block35(x, "Mixed_5c", poolFeatures: c(64), c)
        x = block35(x, "Mixed_5d", poolFeatures: c(64), c)
        x = reduction35(x, "Mixed_6a", c)
        x = block17(x, "Mixed_6b", channels7x7: c(128), c)
        x = block17(x, "Mixed_6c", channels7x7: c(160), c)
        x = block17(x, "Mixed_6d", channels7x7: c(160), c)
        x = block17(x, "Mixed_6e", channels7x7: c(192), c)
        x = reduction17(x, "Mixed_7a", c)
        x = block8(x, "Mixed_7b", c)
        x = block8(x, "Mixed_7c", c)
        let logits = x
            --> GlobalAveragePooling(name: "avgpool")
            --> Dense(neurons: classes, name: "fc")
        return try ZooSupport.model(input, logits, includeSoftmax: includeSoftmax)
    }

    /// torchvision's `BasicConv2d`: `<name>_conv` (no bias), `<name>_bn` (ε 0.001), `<name>_relu`.
    static func unit(_ x: SymbolicTensor, _ name: String, _ channels: Int, _ kernel: (Int, Int), stride: Int = 1,
                     padding: (Int, Int) = (0, 0)) -> SymbolicTensor {
        x
            --> Convolution(kernel: kernel, channels: channels, stride: (stride, stride),
                            padding: .explicit(top: padding.0, left: padding.1, bottom: padding.0, right: padding.1),
                            useBias: false, name: "\(name)_conv")
            --> BatchNormalization(epsilon: 0.001, name: "\(name)_bn")
            --> Activation(.relu, name: "\(name)_relu")
    }

    /// The pooling branch's 3×3 average, padded cells counted as PyTorch does.
    static func averagePool(_ x: SymbolicTensor, _ block: String) -> SymbolicTensor {
        x --> AveragePooling(kernel: (3, 3), stride: (1, 1), padding: .explicit(1), countIncludesPadding: true,
                             name: "\(block)_avgpool")
    }

    /// torchvision's `InceptionA` (35×35): 1×1 | 1×1 → 5×5 | 1×1 → 3×3 → 3×3 | avgpool → 1×1.
    static func block35(_ x: SymbolicTensor, _ name: String, poolFeatures: Int, _ c: (Int) -> Int) -> SymbolicTensor {
        let branch1x1 = unit(x, "\(name)_branch1x1", c(64), (1, 1))
        var branch5x5 = unit(x, "\(name)_branch5x5_1", c(48), (1, 1))
        branch5x5 = unit(branch5x5, "\(name)_branch5x5_2", c(64), (5, 5), padding: (2, 2))
        var branch3x3 = unit(x, "\(name)_branch3x3dbl_1", c(64), (1, 1))
        branch3x3 = unit(branch3x3, "\(name)_branch3x3dbl_2", c(96), (3, 3), padding: (1, 1))
        branch3x3 = unit(branch3x3, "\(name)_branch3x3dbl_3", c(96), (3, 3), padding: (1, 1))
        let branchPool = unit(averagePool(x, name), "\(name)_branch_pool", poolFeatures, (1, 1))
        return [branch1x1, branch5x5, branch3x3, branchPool] --> Concatenate(name: "\(name)_cat")
    }

    /// torchvision's `InceptionB` (35 → 17): 3×3/2 | 1×1 → 3×3 → 3×3/2 | maxpool 3×3/2.
    static func reduction35(_ x: SymbolicTensor, _ name: String, _ c: (Int) -> Int) -> SymbolicTensor {
        let branch3x3 = unit(x, "\(name)_branch3x3", c(384), (3, 3), stride: 2)
        var branch3x3dbl = unit(x, "\(name)_branch3x3dbl_1", c(64), (1, 1))
        branch3x3dbl = unit(branch3x3dbl, "\(name)_branch3x3dbl_2", c(96), (3, 3), padding: (1, 1))
        branch3x3dbl = unit(branch3x3dbl, "\(name)_branch3x3dbl_3", c(96), (3, 3), stride: 2)
        let branchPool = x --> MaxPooling(kernel: (3, 3), stride: (2, 2), name: "\(name)_maxpool")
        return [branch3x3, branch3x3dbl, branchPool] --> Concatenate(name: "\(name)_cat")
    }

    /// torchvision's `InceptionC` (17×17): 1×1 | 1×1 → 1×7 → 7×1 | 1×1 → 7×1 → 1×7 → 7×1 → 1×7 | avgpool → 1×1.
    static func block17(_ x: SymbolicTensor, _ name: String, channels7x7 c7: Int, _ c: (Int) -> Int) -> SymbolicTensor {
        let branch1x1 = unit(x, "\(name)_branch1x1", c(192), (1, 1))
        var branch7x7 = unit(x, "\(name)_branch7x7_1", c7, (1, 1))
        branch7x7 = unit(branch7x7, "\(name)_branch7x7_2", c7, (1, 7), padding: (0, 3))
        branch7x7 = unit(branch7x7, "\(name)_branch7x7_3", c(192), (7, 1), padding: (3, 0))
        var branch7x7dbl = unit(x, "\(name)_branch7x7dbl_1", c7, (1, 1))
        branch7x7dbl = unit(branch7x7dbl, "\(name)_branch7x7dbl_2", c7, (7, 1), padding: (3, 0))
        branch7x7dbl = unit(branch7x7dbl, "\(name)_branch7x7dbl_3", c7, (1, 7), padding: (0, 3))
        branch7x7dbl = unit(branch7x7dbl, "\(name)_branch7x7dbl_4", c7, (7, 1), padding: (3, 0))
        branch7x7dbl = unit(branch7x7dbl, "\(name)_branch7x7dbl_5", c(192), (1, 7), padding: (0, 3))
        let branchPool = unit(averagePool(x, name), "\(name)_branch_pool", c(192), (1, 1))
        return [branch1x1, branch7x7, branch7x7dbl, branchPool] --> Concatenate(name: "\(name)_cat")
    }

    /// torchvision's `InceptionD` (17 → 8): 1×1 → 3×3/2 | 1×1 → 1×7 → 7×1 → 3×3/2 | maxpool 3×3/2.
    static func reduction17(_ x: SymbolicTensor, _ name: String, _ c: (Int) -> Int) -> SymbolicTensor {
        var branch3x3 = unit(x, "\(name)_branch3x3_1", c(192), (1, 1))
        branch3x3 = unit(branch3x3, "\(name)_branch3x3_2", c(320), (3, 3), stride: 2)
        var branch7x7x3 = unit(x, "\(name)_branch7x7x3_1", c(192), (1, 1))
        branch7x7x3 = unit(branch7x7x3, "\(name)_branch7x7x3_2", c(192), (1, 7), padding: (0, 3))
        branch7x7x3 = unit(branch7x7x3, "\(name)_branch7x7x3_3", c(192), (7, 1), padding: (3, 0))
        branch7x7x3 = unit(branch7x7x3, "\(name)_branch7x7x3_4", c(192), (3, 3), stride: 2)
        let branchPool = x --> MaxPooling(kernel: (3, 3), stride: (2, 2), name: "\(name)_maxpool")
        return [branch3x3, branch7x7x3, branchPool] --> Concatenate(name: "\(name)_cat")
    }

    /// torchvision's `InceptionE` (8×8): 1×1 | 1×1 → (1×3, 3×1) | 1×1 → 3×3 → (1×3, 3×1) | avgpool → 1×1.
    static func block8(_ x: SymbolicTensor, _ name: String, _ c: (Int) -> Int) -> SymbolicTensor {
        let branch1x1 = unit(x, "\(name)_branch1x1", c(320), (1, 1))
        let branch3x3 = unit(x, "\(name)_branch3x3_1", c(384), (1, 1))
        let split3x3 = [unit(branch3x3, "\(name)_branch3x3_2a", c(384), (1, 3), padding: (0, 1)),
                        unit(branch3x3, "\(name)_branch3x3_2b", c(384), (3, 1), padding: (1, 0))]
            --> Concatenate(name: "\(name)_cat")
        var branch3x3dbl = unit(x, "\(name)_branch3x3dbl_1", c(448), (1, 1))
        branch3x3dbl = unit(branch3x3dbl, "\(name)_branch3x3dbl_2", c(384), (3, 3), padding: (1, 1))
        let split3x3dbl = [unit(branch3x3dbl, "\(name)_branch3x3dbl_3a", c(384), (1, 3), padding: (0, 1)),
                           unit(branch3x3dbl, "\(name)_branch3x3dbl_3b", c(384), (3, 1), padding: (1, 0))]
            --> Concatenate(name: "\(name)_cat_2")
        let branchPool = unit(averagePool(x, name), "\(name)_branch_pool", c(192), (1, 1))
        return [branch1x1, split3x3, split3x3dbl, branchPool] --> Concatenate(name: "\(name)_cat_3")
    }
}
