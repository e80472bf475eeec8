/// How a network's input images must be prepared, by the name of the convention it was
/// trained with. AnvilVision's `ImagePreprocessing.Preset` implements each one under the same
/// raw value (`ImagePreprocessing.Preset(rawValue: preset.rawValue)`); this module names them
/// without depending on AnvilVision.
public enum PreprocessingPreset: String, Sendable, Hashable, CaseIterable {
    /// Caffe / VGG: BGR, 0...255, minus the ImageNet channel means (B 103.939, G 116.779, R 123.68).
    case caffe
    /// PyTorch / torchvision: RGB / 255, then `(x − mean) / std` with ImageNet's mean and std.
    case pytorch
    /// Inception / TensorFlow: RGB mapped to −1...1 as `x / 127.5 − 1`.
    case inception
}
