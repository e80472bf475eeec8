extension Image {
    /// The ITU-R BT.601 luma weights (R, G, B) used by ``grayscale(background:)``:
    /// 0.299, 0.587, 0.114 — the same as Pillow's `convert("L")` and OpenCV's `COLOR_RGB2GRAY`.
    public static let lumaWeights: (red: Float, green: Float, blue: Float) = (0.299, 0.587, 0.114)

    /// A one-channel copy of the image: ITU-R BT.601 luma `0.299 R + 0.587 G + 0.114 B`
    /// (not rounded, so values stay in 0...255 as floats).
    ///
    /// RGBA images are first composited over a flat `background` grey level using straight
    /// (non-premultiplied) alpha: `luma × a + background × (1 − a)` with `a = alpha / 255`.
    /// The default background is white (255), which suits the usual drawing of dark ink on a
    /// transparent canvas; pass 0 for light ink on a transparent canvas.
    /// ``MNISTPreprocessor`` picks the background itself from the ink colour.
    /// A one-channel image is returned unchanged.
    public func grayscale(background: Float = 255) -> Image {
        if channels == 1 { return self }
        let (wr, wg, wb) = Image.lumaWeights
        let n = width * height
        var gray = [Float](repeating: 0, count: n)
        pixels.withUnsafeBufferPointer { p in
            for i in 0..<n {
                let o = i * channels
                let luma = wr * p[o] + wg * p[o + 1] + wb * p[o + 2]
                if channels == 4 {
                    let a = p[o + 3] / 255
                    gray[i] = luma * a + background * (1 - a)
                } else {
                    gray[i] = luma
                }
            }
        }
        return Image(unchecked: width, height: height, channels: 1, pixels: gray, name: name)
    }

    /// Whether the image has an alpha channel with at least one pixel that is not fully opaque.
    public var hasTransparency: Bool {
        guard channels == 4 else { return false }
        var i = 3
        while i < pixels.count {
            if pixels[i] < 255 { return true }
            i += 4
        }
        return false
    }
}
