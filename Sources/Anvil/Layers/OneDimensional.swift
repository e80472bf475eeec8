/// 1-D spellings of the windowed layers, for sequences `[N, L, C]` (``Shape/sequence(length:channels:)``):
/// a window of `kernel` along the length, run as a height-1 2-D window (kernel `(1, k)`,
/// stride `(1, s)`, dilation `(1, d)`). The layers and their model-file entries are the 2-D ones.
///
/// ```swift
/// let audio = Input(shape: .sequence(length: 16000, channels: 1))
/// audio --> Convolution(kernel: 9, channels: 32, stride: 4, activation: .relu) --> MaxPooling(kernel: 2)
/// ```
extension Convolution {
    /// A 1-D convolution of `kernel` taps along a sequence.
    public convenience init(kernel: Int, channels: Int, stride: Int = 1, padding: Padding = .same, dilation: Int = 1,
                            groups: Int = 1, useBias: Bool = true, activation: ActivationFunction = .none, name: String? = nil) {
        self.init(kernel: (1, kernel), channels: channels, stride: (1, stride), padding: padding, dilation: (1, dilation),
                  groups: groups, useBias: useBias, activation: activation, name: name)
    }
}

extension DepthwiseConvolution {
    /// A 1-D depthwise convolution of `kernel` taps along a sequence.
    public convenience init(kernel: Int, multiplier: Int = 1, stride: Int = 1, padding: Padding = .same, dilation: Int = 1,
                            useBias: Bool = true, activation: ActivationFunction = .none, name: String? = nil) {
        self.init(kernel: (1, kernel), multiplier: multiplier, stride: (1, stride), padding: padding, dilation: (1, dilation),
                  useBias: useBias, activation: activation, name: name)
    }
}

extension MaxPooling {
    /// 1-D max pooling over `kernel` positions (the stride defaults to the kernel).
    public convenience init(kernel: Int, stride: Int? = nil, padding: Padding = .valid, dilation: Int = 1,
                            ceilMode: Bool = false, name: String? = nil) {
        self.init(kernel: (1, kernel), stride: (1, stride ?? kernel), padding: padding, dilation: (1, dilation),
                  ceilMode: ceilMode, name: name)
    }
}

extension AveragePooling {
    /// 1-D average pooling over `kernel` positions (the stride defaults to the kernel).
    public convenience init(kernel: Int, stride: Int? = nil, padding: Padding = .valid, dilation: Int = 1,
                            ceilMode: Bool = false, countIncludesPadding: Bool = false, name: String? = nil) {
        self.init(kernel: (1, kernel), stride: (1, stride ?? kernel), padding: padding, dilation: (1, dilation),
                  ceilMode: ceilMode, countIncludesPadding: countIncludesPadding, name: name)
    }
}

extension LpPooling {
    /// 1-D Lp pooling over `kernel` positions (the stride defaults to the kernel).
    public convenience init(p: Float = 2, kernel: Int, stride: Int? = nil, padding: Padding = .valid, dilation: Int = 1,
                            ceilMode: Bool = false, name: String? = nil) {
        self.init(p: p, kernel: (1, kernel), stride: (1, stride ?? kernel), padding: padding, dilation: (1, dilation),
                  ceilMode: ceilMode, name: name)
    }
}
