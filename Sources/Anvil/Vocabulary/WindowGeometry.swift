/// The resolved geometry of a sliding window (convolution or pooling) over one input shape:
/// kernel, stride, dilation, the pads on each side and the output size.
struct WindowGeometry: Hashable, Sendable {
    var inputHeight: Int, inputWidth: Int
    var kernelHeight: Int, kernelWidth: Int
    var strideHeight: Int, strideWidth: Int
    var dilationHeight: Int, dilationWidth: Int
    var padTop: Int, padLeft: Int, padBottom: Int, padRight: Int
    var outputHeight: Int, outputWidth: Int

    /// A 1×1 kernel from a 1×1 input to a 1×1 output: a fully connected layer in disguise.
    var isSinglePixel: Bool {
        inputHeight == 1 && inputWidth == 1 && kernelHeight == 1 && kernelWidth == 1 && outputHeight == 1 && outputWidth == 1
    }

    /// The extent of a dilated kernel.
    var effectiveKernelHeight: Int { (kernelHeight - 1) * dilationHeight + 1 }
    var effectiveKernelWidth: Int { (kernelWidth - 1) * dilationWidth + 1 }

    /// Resolves the geometry, or throws a message naming the sizes that do not fit.
    init(input: Shape, kernel: (Int, Int), stride: (Int, Int), dilation: (Int, Int),
         padding: Padding, ceilMode: Bool = false) throws {
        guard kernel.0 > 0, kernel.1 > 0 else {
            throw AnvilError(.invalidOption, "kernel \(kernel.0)x\(kernel.1) must be positive")
        }
        guard stride.0 > 0, stride.1 > 0 else {
            throw AnvilError(.invalidOption, "stride \(stride.0)x\(stride.1) must be positive")
        }
        guard dilation.0 > 0, dilation.1 > 0 else {
            throw AnvilError(.invalidOption, "dilation \(dilation.0)x\(dilation.1) must be positive")
        }
        guard kernel.0 < 1 << 20, kernel.1 < 1 << 20, dilation.0 < 1 << 20, dilation.1 < 1 << 20 else {
            throw AnvilError(.invalidOption, "kernel \(kernel.0)x\(kernel.1) with dilation \(dilation.0)x\(dilation.1) is too large")
        }
        inputHeight = input.height; inputWidth = input.width
        (kernelHeight, kernelWidth) = kernel
        (strideHeight, strideWidth) = stride
        (dilationHeight, dilationWidth) = dilation
        let (h, ph0, ph1) = try Self.axis(input.height, kernel: kernel.0, stride: stride.0, dilation: dilation.0,
                                          padding: padding, leading: \.0, trailing: \.2, ceilMode: ceilMode, axis: "height")
        let (w, pw0, pw1) = try Self.axis(input.width, kernel: kernel.1, stride: stride.1, dilation: dilation.1,
                                          padding: padding, leading: \.1, trailing: \.3, ceilMode: ceilMode, axis: "width")
        outputHeight = h; outputWidth = w
        padTop = ph0; padBottom = ph1; padLeft = pw0; padRight = pw1
    }

    private static func axis(_ size: Int, kernel: Int, stride: Int, dilation: Int, padding: Padding,
                             leading: KeyPath<(Int, Int, Int, Int), Int>, trailing: KeyPath<(Int, Int, Int, Int), Int>,
                             ceilMode: Bool, axis: String) throws -> (Int, Int, Int) {
        let extent = (kernel - 1) * dilation + 1
        switch padding {
        case .same:
            let output = ceilingDivide(size, stride)
            // (output - 1) * stride < size, so only adding the extent can overflow.
            let (total, overflow) = ((output - 1) * stride).addingReportingOverflow(extent)
            guard !overflow else { throw AnvilError(.invalidShape, "kernel extent \(extent) is too large for the \(axis)") }
            let pad = max(total - size, 0)
            return (output, pad / 2, pad - pad / 2)
        case .valid:
            return (try outputSize(size, extent: extent, stride: stride, before: 0, after: 0, ceilMode: ceilMode, axis: axis), 0, 0)
        case .explicit(let t, let l, let b, let r):
            let pads = (t, l, b, r)
            let before = pads[keyPath: leading], after = pads[keyPath: trailing]
            guard before >= 0, after >= 0, before < 1 << 24, after < 1 << 24 else {
                throw AnvilError(.invalidOption, "padding \(padding) must be non-negative and reasonable")
            }
            return (try outputSize(size, extent: extent, stride: stride, before: before, after: after, ceilMode: ceilMode, axis: axis), before, after)
        }
    }

    private static func outputSize(_ size: Int, extent: Int, stride: Int, before: Int, after: Int,
                                   ceilMode: Bool, axis: String) throws -> Int {
        let (partial, overflow1) = size.addingReportingOverflow(before)
        let (padded, overflow2) = partial.addingReportingOverflow(after)
        guard !overflow1, !overflow2 else { throw AnvilError(.invalidShape, "padded \(axis) is too large") }
        guard extent <= padded else {
            throw AnvilError(.invalidShape, "kernel extent \(extent) is larger than the padded input \(axis) \(padded)")
        }
        let span = padded - extent
        var output = (ceilMode ? ceilingDivide(span, stride) : span / stride) + 1
        // In ceil mode the last window must start inside the input or its leading pad;
        // (output - 1) * stride <= span + stride - 1 cannot overflow after the division.
        if ceilMode, (output - 1).multipliedReportingOverflow(by: stride).partialValue >= size + before { output -= 1 }
        return output
    }
}

/// `ceil(a / b)` for non-negative `a` and positive `b`, without the overflow of `(a + b - 1) / b`.
func ceilingDivide(_ a: Int, _ b: Int) -> Int {
    a / b + (a % b == 0 ? 0 : 1)
}

extension WindowGeometry {
    /// The same windows read from the tensor before a zero ``Pad`` of `pad` rows and columns:
    /// the pad moves into the window's own (zero) padding and the input shrinks by it, so the
    /// output is unchanged. `nil` leaves the geometry as it is.
    func absorbing(_ pad: AbsorbedPad?) -> WindowGeometry {
        guard let pad else { return self }
        var g = self
        g.inputHeight -= pad.top + pad.bottom
        g.inputWidth -= pad.left + pad.right
        g.padTop += pad.top; g.padBottom += pad.bottom
        g.padLeft += pad.left; g.padRight += pad.right
        return g
    }

    /// Whether every window still holds at least one input cell once `pad` is absorbed: the
    /// first starts before the input's first cell ends the window, the last starts inside the
    /// input. Otherwise the pad stays a layer of its own, so no kernel sees windows of padding only.
    func canAbsorb(_ pad: AbsorbedPad) -> Bool {
        let g = absorbing(pad)
        return g.inputHeight > 0 && g.inputWidth > 0
            && g.padTop < g.effectiveKernelHeight && g.padLeft < g.effectiveKernelWidth
            && (g.outputHeight - 1) * g.strideHeight - g.padTop < g.inputHeight
            && (g.outputWidth - 1) * g.strideWidth - g.padLeft < g.inputWidth
    }
}

/// The rows and columns of a zero ``Pad`` folded into the windowed layer after it.
struct AbsorbedPad: Hashable, Sendable {
    let top: Int, left: Int, bottom: Int, right: Int
}
