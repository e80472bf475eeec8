import Foundation

/// Turns a picture of a single handwritten digit into the 28 × 28 input an MNIST network
/// expects, the way the MNIST images themselves were made.
///
/// ```swift
/// let digit = try Image(contentsOf: URL(fileURLWithPath: "five.png"))
/// let input = try MNISTPreprocessor().preprocess(digit)     // 784 floats, 0...255
/// print(MNISTPreprocessor.asciiArt(input, width: 28, height: 28))
/// // networks trained on 0...1 inputs: input.map { $0 / 255 }
/// ```
///
/// The steps, in order:
///
/// 1. **Grayscale**: ITU-R BT.601 luma. An image with transparency is composited over
///    white when its visible pixels are dark on average (dark ink on a transparent canvas)
///    and over black otherwise (light ink).
/// 2. **Polarity**: the background level is the median of the outermost ring of pixels.
///    If it is light (above 127.5) the image is inverted, so the digit is light on dark
///    like MNIST.
/// 3. **Contrast**: levels are stretched so that the background becomes 0 and the
///    brightest ink 255 (paper grey, pencil and photos come out like MNIST's black-and-white
///    scans). If the brightest pixel is less than ``minimumContrast`` above the background
///    there is no ink, and a `.blankImage` error is thrown.
/// 4. **Crop** to the tight bounding box (no margin) of the pixels above
///    ``inkThreshold`` × 255.
/// 5. **Scale** the box so that its larger side is ``digitSize`` (20) pixels, keeping the
///    aspect ratio (the smaller side is rounded, at least 1), with the antialiasing
///    resampler of ``Image/resized(width:height:)``.
/// 6. **Centre** the scaled digit in a ``fieldSize`` × ``fieldSize`` (28 × 28) black field
///    so that the centre of mass of its intensities lands on pixel (14, 14), the pixel just
///    right of and below the middle, in coordinates where pixel (x, y)'s centre is at
///    (x, y). This is where MNIST's own images have it (their centres of mass are all
///    within 0.5 px of (14, 14)). The shift is the centre-of-mass offset rounded to whole
///    pixels, then clamped so that no part of the digit leaves the field.
///
/// The result is `fieldSize × fieldSize` floats in 0...255, row-major (NHWC with N = C = 1).
public struct MNISTPreprocessor: Sendable {
    /// The side of the output field in pixels (MNIST: 28).
    public var fieldSize: Int
    /// The side the larger dimension of the digit's bounding box is scaled to (MNIST: 20).
    public var digitSize: Int
    /// A pixel is ink, for the bounding box, when its contrast-stretched value exceeds
    /// `inkThreshold × 255`. Default 0.3: above JPEG and paper noise, below the edge of a stroke.
    public var inkThreshold: Float
    /// The least difference (in 0...255 levels) between the brightest pixel and the
    /// background for the image to count as holding ink. Default 32.
    public var minimumContrast: Float

    /// The largest accepted ``fieldSize``.
    public static let maximumFieldSize = 4096

    /// Creates a preprocessor; the defaults reproduce MNIST's 20-pixel digits in a 28-pixel field.
    public init(fieldSize: Int = 28, digitSize: Int = 20, inkThreshold: Float = 0.3, minimumContrast: Float = 32) {
        self.fieldSize = fieldSize
        self.digitSize = digitSize
        self.inkThreshold = inkThreshold
        self.minimumContrast = minimumContrast
    }

    /// Reads the image at `url` and preprocesses it; see ``preprocess(_:)``.
    ///
    /// - Throws: any error of ``Image/init(contentsOf:)`` or ``preprocess(_:)``.
    public func preprocess(contentsOf url: URL) throws -> [Float] {
        try preprocess(Image(contentsOf: url))
    }

    /// The `fieldSize × fieldSize` MNIST-style rendering of the digit in `image`:
    /// light ink on black, values in 0...255, row-major. Divide by 255 for networks
    /// trained on inputs in 0...1.
    ///
    /// - Throws: ``VisionError`` `.blankImage` (naming the image) if it holds no ink,
    ///   or `.invalidArgument` if the settings are inconsistent (`digitSize` not in
    ///   `1...fieldSize`, `fieldSize` above ``maximumFieldSize``, `inkThreshold` not in
    ///   `0..<1`, `minimumContrast` not positive).
    public func preprocess(_ image: Image) throws -> [Float] {
        guard digitSize >= 1, fieldSize >= digitSize, fieldSize <= MNISTPreprocessor.maximumFieldSize else {
            throw VisionError(.invalidArgument, source: "MNISTPreprocessor",
                              message: "digitSize \(digitSize) must be in 1...fieldSize and fieldSize \(fieldSize) at most \(MNISTPreprocessor.maximumFieldSize)")
        }
        guard inkThreshold >= 0, inkThreshold < 1, minimumContrast > 0 else {
            throw VisionError(.invalidArgument, source: "MNISTPreprocessor",
                              message: "inkThreshold \(inkThreshold) must be in 0..<1 and minimumContrast \(minimumContrast) positive")
        }

        // 1. Grayscale, compositing transparency over a background that contrasts with the ink.
        let gray = image.grayscale(background: Self.compositingBackground(for: image))
        let w = gray.width, h = gray.height
        var v = gray.pixels

        // 2. Polarity from the border's median.
        let border = Self.borderMedian(v, width: w, height: h)
        var background = border
        if border > 127.5 {
            for i in v.indices { v[i] = 255 - v[i] }
            background = 255 - border
        }

        // 3. Contrast stretch: background → 0, brightest ink → 255.
        let peak = v.max() ?? background
        guard peak - background >= minimumContrast else {
            let what = border > 127.5 ? "a light background" : "a dark background"
            throw VisionError(.blankImage, source: image.name,
                              message: "no digit found: the image is \(what) (level \(Int(border.rounded()))) without ink that differs from it by \(Int(minimumContrast)) levels or more")
        }
        let range = peak - background
        for i in v.indices { v[i] = min(max((v[i] - background) / range, 0), 1) * 255 }

        // 4. Tight bounding box of the ink.
        let threshold = inkThreshold * 255
        var minX = w, minY = h, maxX = -1, maxY = -1
        for y in 0..<h {
            for x in 0..<w where v[y * w + x] > threshold {
                minX = min(minX, x); maxX = max(maxX, x)
                minY = min(minY, y); maxY = max(maxY, y)
            }
        }
        // The peak pixel is 255 > threshold, so the box is never empty.
        let boxWidth = maxX - minX + 1, boxHeight = maxY - minY + 1
        var cropped = [Float](repeating: 0, count: boxWidth * boxHeight)
        for y in 0..<boxHeight {
            for x in 0..<boxWidth {
                cropped[y * boxWidth + x] = v[(minY + y) * w + minX + x]
            }
        }

        // 5. Larger side → digitSize, aspect ratio kept.
        let longer = Double(max(boxWidth, boxHeight))
        let scaledWidth = max(1, Int((Double(boxWidth) * Double(digitSize) / longer).rounded()))
        let scaledHeight = max(1, Int((Double(boxHeight) * Double(digitSize) / longer).rounded()))
        let digit = try Image(unchecked: boxWidth, height: boxHeight, channels: 1, pixels: cropped, name: image.name)
            .resized(width: scaledWidth, height: scaledHeight)

        // 6. Centre of mass → (fieldSize / 2, fieldSize / 2), whole-pixel shift, clamped.
        var mass: Double = 0, sumX: Double = 0, sumY: Double = 0
        for y in 0..<scaledHeight {
            for x in 0..<scaledWidth {
                let m = Double(max(digit.pixels[y * scaledWidth + x], 0))
                mass += m
                sumX += m * Double(x)
                sumY += m * Double(y)
            }
        }
        let centreX = mass > 0 ? sumX / mass : Double(scaledWidth - 1) / 2
        let centreY = mass > 0 ? sumY / mass : Double(scaledHeight - 1) / 2
        let target = Double(fieldSize / 2)
        let offsetX = min(max(Int((target - centreX).rounded()), 0), fieldSize - scaledWidth)
        let offsetY = min(max(Int((target - centreY).rounded()), 0), fieldSize - scaledHeight)

        var field = [Float](repeating: 0, count: fieldSize * fieldSize)
        for y in 0..<scaledHeight {
            for x in 0..<scaledWidth {
                field[(offsetY + y) * fieldSize + offsetX + x] = min(max(digit.pixels[y * scaledWidth + x], 0), 255)
            }
        }
        return field
    }

    /// The grey level to composite transparent pixels over: white (255) when the visible
    /// pixels are dark on average, black (0) when they are light; white for opaque images
    /// (where it has no effect).
    static func compositingBackground(for image: Image) -> Float {
        guard image.hasTransparency else { return 255 }
        let (wr, wg, wb) = Image.lumaWeights
        var weighted: Double = 0, total: Double = 0
        let p = image.pixels
        var i = 0
        while i + 3 < p.count {
            let a = Double(p[i + 3])
            weighted += a * Double(wr * p[i] + wg * p[i + 1] + wb * p[i + 2])
            total += a
            i += 4
        }
        guard total > 0 else { return 255 }
        return weighted / total < 127.5 ? 255 : 0
    }

    /// The median of the outermost ring of pixels of a one-channel image.
    static func borderMedian(_ v: [Float], width w: Int, height h: Int) -> Float {
        var ring: [Float] = []
        ring.reserveCapacity(2 * (w + h))
        for x in 0..<w {
            ring.append(v[x])
            if h > 1 { ring.append(v[(h - 1) * w + x]) }
        }
        if h > 2 {
            for y in 1..<(h - 1) {
                ring.append(v[y * w])
                if w > 1 { ring.append(v[y * w + w - 1]) }
            }
        }
        ring.sort()
        let n = ring.count
        return n % 2 == 1 ? ring[n / 2] : (ring[n / 2 - 1] + ring[n / 2]) / 2
    }
}
