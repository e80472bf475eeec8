extension MNISTPreprocessor {
    /// The ramp of characters used by ``asciiArt(_:width:height:maximum:)``, from empty to full ink.
    public static let asciiRamp: [Character] = [" ", ".", ":", "-", "=", "+", "*", "#", "%", "@"]

    /// A text picture of a one-channel image for terminals: one line per row, each pixel
    /// drawn as two characters (so the picture keeps roughly square proportions) from
    /// ``asciiRamp``, darkest `" "` for 0 to `"@"` for `maximum`. Lines are joined by `"\n"`,
    /// with no trailing newline and no trailing-space trimming.
    ///
    /// - Parameters:
    ///   - pixels: `width × height` values, row-major (e.g. the output of ``preprocess(_:)``).
    ///   - maximum: the value drawn as full ink: 255 for raw pixels, 1 after dividing by 255.
    /// - Precondition: `pixels.count == width × height`, `width` and `height` ≥ 0.
    public static func asciiArt(_ pixels: [Float], width: Int, height: Int, maximum: Float = 255) -> String {
        precondition(width >= 0 && height >= 0 && pixels.count == width * height,
                     "asciiArt: \(pixels.count) pixels given for a \(width)×\(height) picture")
        let steps = Float(asciiRamp.count - 1)
        var lines: [String] = []
        lines.reserveCapacity(height)
        for y in 0..<height {
            var line = ""
            line.reserveCapacity(2 * width)
            for x in 0..<width {
                let level = maximum > 0 ? pixels[y * width + x] / maximum : 0
                let clamped = level.isNaN ? 0 : min(max(level, 0), 1)
                let ch = asciiRamp[Int((clamped * steps).rounded())]
                line.append(ch)
                line.append(ch)
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
