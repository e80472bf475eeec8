extension Image {
    /// The `width × height` region whose top-left pixel is `(x, y)`.
    ///
    /// - Throws: ``VisionError`` `.invalidArgument` if the region is empty or not inside the image.
    public func cropped(x: Int, y: Int, width cropWidth: Int, height cropHeight: Int) throws -> Image {
        guard cropWidth > 0, cropHeight > 0, x >= 0, y >= 0, x <= width - cropWidth, y <= height - cropHeight else {
            throw VisionError(.invalidArgument, source: name,
                              message: "cannot crop \(cropWidth)×\(cropHeight) at (\(x), \(y)) from a \(width)×\(height) image")
        }
        if cropWidth == width && cropHeight == height { return self }
        let c = channels
        var out = [Float]()
        out.reserveCapacity(cropWidth * cropHeight * c)
        for row in y ..< y + cropHeight {
            let start = (row * width + x) * c
            out.append(contentsOf: pixels[start ..< start + cropWidth * c])
        }
        return Image(unchecked: cropWidth, height: cropHeight, channels: c, pixels: out, name: name)
    }

    /// The centred `width × height` region, placed as torchvision's `CenterCrop` places it:
    /// left `round((self.width − width) / 2)`, top `round((self.height − height) / 2)`, rounding
    /// halves to even (Python's `round`): cropping 224 from 255 starts at column 16, from 257 at 16.
    ///
    /// - Throws: ``VisionError`` `.invalidArgument` if a size is not positive or larger than the image.
    public func centerCropped(width cropWidth: Int, height cropHeight: Int) throws -> Image {
        let (x, y) = try Image.centeredOrigin(crop: (cropWidth, cropHeight), in: (width, height), name: name)
        return try cropped(x: x, y: y, width: cropWidth, height: cropHeight)
    }

    /// The top-left corner of a centred `crop` in an image of size `size` (see ``centerCropped(width:height:)``).
    static func centeredOrigin(crop: (width: Int, height: Int), in size: (width: Int, height: Int), name: String) throws -> (x: Int, y: Int) {
        guard crop.width > 0, crop.height > 0, crop.width <= size.width, crop.height <= size.height else {
            throw VisionError(.invalidArgument, source: name,
                              message: "cannot centre-crop \(crop.width)×\(crop.height) from a \(size.width)×\(size.height) image")
        }
        func offset(_ outer: Int, _ inner: Int) -> Int {
            Int((Double(outer - inner) / 2).rounded(.toNearestOrEven))
        }
        return (offset(size.width, crop.width), offset(size.height, crop.height))
    }
}
