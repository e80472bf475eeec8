extension Image {
    /// A three-channel RGB copy: grey samples are replicated to R, G and B; RGBA is
    /// composited over a background or has its alpha dropped, as `alpha` says (default:
    /// composited over white). An RGB image is returned unchanged.
    public func rgb(alpha: AlphaHandling = .compositeOverWhite) -> Image {
        if channels == 3 { return self }
        let n = width * height
        var out = [Float](repeating: 0, count: n * 3)
        pixels.withUnsafeBufferPointer { p in
            out.withUnsafeMutableBufferPointer { o in
                switch channels {
                case 1:
                    for i in 0 ..< n {
                        let g = p[i]
                        o[3 * i] = g; o[3 * i + 1] = g; o[3 * i + 2] = g
                    }
                default:  // 4
                    for i in 0 ..< n {
                        switch alpha {
                        case .drop:
                            for ch in 0 ..< 3 { o[3 * i + ch] = p[4 * i + ch] }
                        case .composite(let background):
                            let a = p[4 * i + 3] / 255
                            for ch in 0 ..< 3 { o[3 * i + ch] = p[4 * i + ch] * a + background * (1 - a) }
                        }
                    }
                }
            }
        }
        return Image(unchecked: width, height: height, channels: 3, pixels: out, name: name)
    }
}
