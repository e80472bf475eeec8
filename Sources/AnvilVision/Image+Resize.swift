extension Image {
    /// A copy resampled to `width × height`, with half-pixel centres and a filter that
    /// antialiases when shrinking (widened by the shrink factor), as Pillow's `Image.resize`
    /// does on float images; see ``ResamplingFilter``.
    ///
    /// With the default ``ResamplingFilter/bilinear`` a 300 × 300 drawing shrinks cleanly to
    /// 20 × 20, a constant image stays constant, a linear ramp stays linear away from the
    /// edges, and the output never leaves the input's range.
    /// ``ResamplingFilter/lanczos3`` is sharper and can overshoot it near edges (samples are
    /// not clamped; ``ImagePreprocessing`` clamps to 0...255).
    ///
    /// Each channel is resampled independently (RGBA is not premultiplied). The filter
    /// is separable: rows first, then columns.
    ///
    /// - Throws: ``VisionError`` `.invalidArgument` if a size is not positive, or
    ///   `.imageTooLarge` if the result would exceed ``maximumPixelCount``.
    public func resized(width newWidth: Int, height newHeight: Int, filter: ResamplingFilter = .bilinear) throws -> Image {
        try checkResize(newWidth, newHeight)
        if newWidth == width && newHeight == height { return self }
        return resampled(width: newWidth, height: newHeight, filter: filter,
                         columns: 0 ..< newWidth, rows: 0 ..< newHeight)
    }

    /// A copy whose shorter side is `shorterSide` pixels, keeping the aspect ratio: the longer
    /// side becomes `trunc(shorterSide × longer / shorter)`, as torchvision's `Resize(size)`
    /// computes it (a 500 × 375 photo with shorter side 256 becomes 341 × 256). A square image
    /// becomes `shorterSide × shorterSide`.
    ///
    /// - Throws: as ``resized(width:height:filter:)``.
    public func resized(shorterSide: Int, filter: ResamplingFilter = .bilinear) throws -> Image {
        let (w, h) = try Image.sizeWithShorterSide(shorterSide, width: width, height: height, name: name)
        return try resized(width: w, height: h, filter: filter)
    }

    /// The size `width × height` takes when its shorter side is scaled to `shorterSide`.
    static func sizeWithShorterSide(_ shorterSide: Int, width: Int, height: Int, name: String) throws -> (width: Int, height: Int) {
        guard shorterSide > 0 else {
            throw VisionError(.invalidArgument, source: name, message: "cannot resize the shorter side to \(shorterSide): sizes must be positive")
        }
        let short = min(width, height), long = max(width, height)
        let scaledLong = Double(shorterSide) * Double(long) / Double(short)
        guard scaledLong < Double(maximumPixelCount) else {
            throw VisionError(.imageTooLarge, source: name,
                              message: "cannot resize \(width)×\(height) to shorter side \(shorterSide): the longer side would be \(Int(scaledLong)) pixels")
        }
        let newLong = Int(scaledLong)  // torchvision: int(size * long / short), truncated
        return width <= height ? (shorterSide, newLong) : (newLong, shorterSide)
    }

    func checkResize(_ newWidth: Int, _ newHeight: Int) throws {
        guard newWidth > 0, newHeight > 0 else {
            throw VisionError(.invalidArgument, source: name, message: "cannot resize to \(newWidth)×\(newHeight): sizes must be positive")
        }
        guard newWidth <= Image.maximumPixelCount / newHeight else {
            throw VisionError(.imageTooLarge, source: name,
                              message: "cannot resize to \(newWidth)×\(newHeight): more than the limit of \(Image.maximumPixelCount) pixels")
        }
    }

    /// The `columns × rows` window of the image resampled to `width × height`: the same
    /// samples as `resized(width:height:filter:)` followed by a crop, computing only the
    /// window (and reading only the source rows it needs). Sizes must already be valid.
    func resampled(width newWidth: Int, height newHeight: Int, filter: ResamplingFilter,
                   columns: Range<Int>, rows: Range<Int>) -> Image {
        let c = channels
        let outWidth = columns.count, outHeight = rows.count
        let horizontal = ResamplingKernel(inputSize: width, outputSize: newWidth, filter: filter, window: columns)
        let vertical = ResamplingKernel(inputSize: height, outputSize: newHeight, filter: filter, window: rows)
        let needed = vertical.sourceRange  // source rows the vertical pass reads

        // Pass 1: the needed rows, width → the window's columns.
        var rowBuffer = [Float](repeating: 0, count: needed.count * outWidth * c)
        pixels.withUnsafeBufferPointer { src in
            rowBuffer.withUnsafeMutableBufferPointer { dst in
                horizontal.weights.withUnsafeBufferPointer { w in
                    for (r, y) in needed.enumerated() {
                        let srcRow = y * width * c
                        let dstRow = r * outWidth * c
                        for o in 0 ..< outWidth {
                            let start = horizontal.starts[o], taps = horizontal.counts[o]
                            let wo = o * horizontal.maxTaps
                            for ch in 0 ..< c {
                                var sum: Float = 0
                                for t in 0 ..< taps {
                                    sum += w[wo + t] * src[srcRow + (start + t) * c + ch]
                                }
                                dst[dstRow + o * c + ch] = sum
                            }
                        }
                    }
                }
            }
        }

        // Pass 2: columns, the needed rows → the window's rows.
        let rowLength = outWidth * c
        var out = [Float](repeating: 0, count: outHeight * rowLength)
        rowBuffer.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                vertical.weights.withUnsafeBufferPointer { w in
                    for o in 0 ..< outHeight {
                        let start = vertical.starts[o] - needed.lowerBound, taps = vertical.counts[o]
                        let wo = o * vertical.maxTaps
                        let dstRow = o * rowLength
                        for t in 0 ..< taps {
                            let weight = w[wo + t]
                            let srcRow = (start + t) * rowLength
                            for j in 0 ..< rowLength {
                                dst[dstRow + j] += weight * src[srcRow + j]
                            }
                        }
                    }
                }
            }
        }
        return Image(unchecked: outWidth, height: outHeight, channels: c, pixels: out, name: name)
    }
}
