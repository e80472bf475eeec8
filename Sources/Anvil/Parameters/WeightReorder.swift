/// Reorders weight tensors from a declared ``WeightLayout`` into the layouts Anvil's kernels
/// compute in. Runs once, at compile time.
enum WeightReorder {
    /// Convolution weights into `[out][kh][kw][in]` (Forge's layout, which the GEMM uses as is).
    /// Returns `nil` when the data is already in that layout and can be used without a copy.
    static func convolution(_ data: UnsafeBufferPointer<Float>, layout: WeightLayout,
                            outputs: Int, kernelHeight: Int, kernelWidth: Int, inputs: Int) -> [Float]? {
        switch layout {
        case .forge:
            return nil
        case .pytorch:  // [o][i][kh][kw]
            var result = [Float](repeating: 0, count: data.count)
            for o in 0 ..< outputs { for i in 0 ..< inputs { for y in 0 ..< kernelHeight { for x in 0 ..< kernelWidth {
                result[((o * kernelHeight + y) * kernelWidth + x) * inputs + i] =
                    data[((o * inputs + i) * kernelHeight + y) * kernelWidth + x]
            } } } }
            return result
        case .tensorflow:  // [kh][kw][i][o]
            var result = [Float](repeating: 0, count: data.count)
            for y in 0 ..< kernelHeight { for x in 0 ..< kernelWidth { for i in 0 ..< inputs { for o in 0 ..< outputs {
                result[((o * kernelHeight + y) * kernelWidth + x) * inputs + i] =
                    data[((y * kernelWidth + x) * inputs + i) * outputs + o]
            } } } }
            return result
        }
    }

    /// Depthwise weights (`channels` = c·m output channels) into `[kh][kw][c·m]`.
    static func depthwise(_ data: UnsafeBufferPointer<Float>, layout: WeightLayout,
                          channels: Int, kernelHeight: Int, kernelWidth: Int) -> [Float] {
        let taps = kernelHeight * kernelWidth
        switch layout {
        case .forge, .pytorch:  // [c·m][kh][kw] (PyTorch's [c·m][1][kh][kw] is the same order)
            var result = [Float](repeating: 0, count: data.count)
            for c in 0 ..< channels { for t in 0 ..< taps { result[t * channels + c] = data[c * taps + t] } }
            return result
        case .tensorflow:  // [kh][kw][c][m] is already [kh][kw][c·m]
            return Array(data)
        }
    }

    /// Dense weights for an input of `inputShape` into `[out][h][w][c]`; `nil` when no copy is
    /// needed. (PyTorch's `[out][c][h][w]` over a spatial input is not copied either: the Dense
    /// kernel reorders its input instead.)
    static func dense(_ data: UnsafeBufferPointer<Float>, layout: WeightLayout, outputs: Int, inputShape: Shape) -> [Float]? {
        let inputs = inputShape.count
        switch layout {
        case .forge, .pytorch:
            return nil
        case .tensorflow:  // [h·w·c][o]
            var result = [Float](repeating: 0, count: data.count)
            for i in 0 ..< inputs { for o in 0 ..< outputs { result[o * inputs + i] = data[i * outputs + o] } }
            return result
        }
    }

    /// Transposed-convolution weights into `[group][kh][kw][out per group][in per group]`, the
    /// GEMM operand of ``TransposedConvolutionKernel``, from `.forge` `[out][kh][kw][in per group]`,
    /// `.pytorch` `[in][out per group][kh][kw]` or `.tensorflow` `[kh][kw][out per group][in]`.
    static func transposedConvolution(_ data: UnsafeBufferPointer<Float>, layout: WeightLayout, outputs: Int,
                                      kernelHeight: Int, kernelWidth: Int, inputs: Int, groups: Int) -> [Float] {
        let outPerGroup = outputs / groups, inPerGroup = inputs / groups
        var result = [Float](repeating: 0, count: data.count)
        for g in 0 ..< groups { for y in 0 ..< kernelHeight { for x in 0 ..< kernelWidth {
            for o in 0 ..< outPerGroup { for i in 0 ..< inPerGroup {
                let target = (((g * kernelHeight + y) * kernelWidth + x) * outPerGroup + o) * inPerGroup + i
                let source: Int
                switch layout {
                case .forge: source = (((g * outPerGroup + o) * kernelHeight + y) * kernelWidth + x) * inPerGroup + i
                case .pytorch: source = (((g * inPerGroup + i) * outPerGroup + o) * kernelHeight + y) * kernelWidth + x
                case .tensorflow: source = ((y * kernelWidth + x) * outPerGroup + o) * inputs + g * inPerGroup + i
                }
                result[target] = data[source]
            } }
        } } }
        return result
    }
}
