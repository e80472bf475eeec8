extension Image {
    /// A copy resampled to `width × height` with a bilinear filter on half-pixel centres
    /// that antialiases when shrinking (the tent is widened by the shrink factor, as in
    /// Pillow's `BILINEAR`), so that a 300 × 300 drawing shrinks cleanly to 20 × 20.
    ///
    /// Each channel is resampled independently (RGBA is not premultiplied). The filter
    /// is separable: rows first, then columns. A constant image stays constant, a linear
    /// ramp stays linear away from the edges, and the output never leaves the input's range.
    ///
    /// - Throws: ``VisionError`` `.invalidArgument` if a size is not positive, or
    ///   `.imageTooLarge` if the result would exceed ``maximumPixelCount``.
    public func resized(width newWidth: Int, height newHeight: Int) throws -> Image {
        guard newWidth > 0, newHeight > 0 else {
            throw VisionError(.invalidArgument, source: name, message: "cannot resize to \(newWidth)×\(newHeight): sizes must be positive")
        }
        guard newWidth <= Image.maximumPixelCount / newHeight else {
            throw VisionError(.imageTooLarge, source: name,
                              message: "cannot resize to \(newWidth)×\(newHeight): more than the limit of \(Image.maximumPixelCount) pixels")
        }
        if newWidth == width && newHeight == height { return self }

        let c = channels
        let horizontal = ResamplingKernel(inputSize: width, outputSize: newWidth)
        let vertical = ResamplingKernel(inputSize: height, outputSize: newHeight)

        // Pass 1: rows, width → newWidth (height rows).
        var rows = [Float](repeating: 0, count: height * newWidth * c)
        pixels.withUnsafeBufferPointer { src in
            rows.withUnsafeMutableBufferPointer { dst in
                horizontal.weights.withUnsafeBufferPointer { w in
                    for y in 0..<height {
                        let srcRow = y * width * c
                        let dstRow = y * newWidth * c
                        for o in 0..<newWidth {
                            let start = horizontal.starts[o], taps = horizontal.counts[o]
                            let wo = o * horizontal.maxTaps
                            for ch in 0..<c {
                                var sum: Float = 0
                                for t in 0..<taps {
                                    sum += w[wo + t] * src[srcRow + (start + t) * c + ch]
                                }
                                dst[dstRow + o * c + ch] = sum
                            }
                        }
                    }
                }
            }
        }

        // Pass 2: columns, height → newHeight.
        let rowLength = newWidth * c
        var out = [Float](repeating: 0, count: newHeight * rowLength)
        rows.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                vertical.weights.withUnsafeBufferPointer { w in
                    for o in 0..<newHeight {
                        let start = vertical.starts[o], taps = vertical.counts[o]
                        let wo = o * vertical.maxTaps
                        let dstRow = o * rowLength
                        for t in 0..<taps {
                            let weight = w[wo + t]
                            let srcRow = (start + t) * rowLength
                            for j in 0..<rowLength {
                                dst[dstRow + j] += weight * src[srcRow + j]
                            }
                        }
                    }
                }
            }
        }
        return Image(unchecked: newWidth, height: newHeight, channels: c, pixels: out, name: name)
    }
}
