import Foundation

/// A decoded image: `height × width × channels` float samples, interleaved (HWC),
/// row-major from the top-left corner, each in 0...255.
///
/// Decoding (``init(contentsOf:)``, ``init(data:name:)``) uses stb_image and accepts PNG,
/// JPEG, BMP, GIF (first frame), TGA, PSD (composited), PIC and PNM. ``channels`` is what
/// the file holds: 1 (gray), 3 (RGB) or 4 (RGBA); gray + alpha is expanded to RGBA
/// (gray replicated) so that 2 never occurs. 16-bit PNG samples keep their precision and
/// are scaled by 255 / 65535. No colour management: gamma and ICC chunks are ignored,
/// as Pillow does; EXIF orientation is not applied.
public struct Image: Equatable, Sendable {
    /// The width in pixels (at least 1).
    public let width: Int
    /// The height in pixels (at least 1).
    public let height: Int
    /// Samples per pixel: 1 (gray), 3 (RGB) or 4 (RGBA, straight alpha).
    public let channels: Int
    /// `height × width × channels` samples in 0...255, HWC order:
    /// sample `c` of pixel `(x, y)` is `pixels[(y * width + x) * channels + c]`.
    public var pixels: [Float]
    /// The file path, or the name given at creation; used in error messages.
    public var name: String

    /// The largest number of pixels (width × height) an image may have: 2²⁶ (8192 × 8192).
    /// Larger files are refused before decoding, so a tiny file claiming huge dimensions
    /// cannot exhaust memory.
    public static let maximumPixelCount = 1 << 26

    /// Creates an image from samples in HWC order.
    ///
    /// - Throws: ``VisionError`` `.invalidArgument` if a size is not positive, `channels`
    ///   is not 1, 3 or 4, `pixels.count` differs from `width × height × channels`, or a
    ///   sample is NaN or infinite; `.imageTooLarge` if it exceeds ``maximumPixelCount``.
    ///   Finite samples outside 0...255 are accepted.
    public init(width: Int, height: Int, channels: Int, pixels: [Float], name: String = "image") throws {
        guard width > 0, height > 0 else {
            throw VisionError(.invalidArgument, source: name, message: "image size \(width)×\(height) is not positive")
        }
        guard [1, 3, 4].contains(channels) else {
            throw VisionError(.invalidArgument, source: name, message: "\(channels) channels; an image has 1, 3 or 4")
        }
        guard width <= Image.maximumPixelCount / height else {
            throw VisionError(.imageTooLarge, source: name,
                              message: "image size \(width)×\(height) exceeds the limit of \(Image.maximumPixelCount) pixels")
        }
        guard pixels.count == width * height * channels else {
            throw VisionError(.invalidArgument, source: name,
                              message: "\(pixels.count) samples given, a \(width)×\(height) image with \(channels) channels needs \(width * height * channels)")
        }
        if let bad = pixels.firstIndex(where: { !$0.isFinite }) {
            throw VisionError(.invalidArgument, source: name, message: "sample \(bad) is \(pixels[bad]); samples must be finite")
        }
        self.init(unchecked: width, height: height, channels: channels, pixels: pixels, name: name)
    }

    /// Creates an image whose sizes the caller has already validated.
    init(unchecked width: Int, height: Int, channels: Int, pixels: [Float], name: String) {
        self.width = width
        self.height = height
        self.channels = channels
        self.pixels = pixels
        self.name = name
    }

    /// Sample `channel` of the pixel in column `x`, row `y`.
    ///
    /// - Precondition: the coordinates are inside the image, as for an array subscript.
    public func pixel(x: Int, y: Int, channel: Int = 0) -> Float {
        precondition(x >= 0 && x < width && y >= 0 && y < height && channel >= 0 && channel < channels,
                     "Image.pixel(x: \(x), y: \(y), channel: \(channel)) is outside \(width)×\(height)×\(channels)")
        return pixels[(y * width + x) * channels + channel]
    }
}
