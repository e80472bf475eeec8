import Anvil

/// A random pooling window and input, as the pooling kernel tests draw them: kernels up to 4 × 4,
/// strides up to 3, dilations up to 2, no padding or up to one pixel a side, 1–2 images of 4–9 ×
/// 4–9 pixels and channel counts that reach every vector width and tail of the bodies.
struct RefPoolingWindow: CustomStringConvertible {
    let x: RefTensor
    let kernel: (Int, Int), stride: (Int, Int), dilation: (Int, Int)
    let padding: Padding

    var description: String { "\(x) kernel \(kernel) stride \(stride) dilation \(dilation) \(padding)" }
}

extension RefRandom {
    /// The next ``RefPoolingWindow`` of this stream.
    mutating func poolingWindow() -> RefPoolingWindow {
        let kernel = (int(1 ... 4), int(1 ... 4)), stride = (int(1 ... 3), int(1 ... 3))
        let dilation = (int(1 ... 2), int(1 ... 2))
        let padding: Padding = bool() ? .valid
            : .explicit(top: int(0 ... 1), left: int(0 ... 1), bottom: int(0 ... 1), right: int(0 ... 1))
        let x = tensor(n: int(1 ... 2), h: int(4 ... 9), w: int(4 ... 9), c: pick([1, 3, 8, 13, 16, 17, 32, 40, 64, 75, 81, 150]))
        return RefPoolingWindow(x: x, kernel: kernel, stride: stride, dilation: dilation, padding: padding)
    }
}
