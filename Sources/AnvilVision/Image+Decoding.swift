import CStb
import Foundation

extension Image {
    /// Decodes the image file at `url` (PNG, JPEG, BMP, GIF, TGA, PSD, PIC, PNM).
    ///
    /// - Throws: ``VisionError`` naming the path: `.cannotRead`, `.emptyFile`,
    ///   `.imageTooLarge`, or `.decodeFailed` with stb_image's reason for corrupt,
    ///   truncated and unsupported files.
    public init(contentsOf url: URL) throws {
        let data = try FileReading.data(of: url)
        try self.init(data: data, name: url.path)
    }

    /// Decodes an encoded image held in memory; `name` is used in error messages.
    ///
    /// - Throws: ``VisionError`` as ``init(contentsOf:)``.
    public init(data: Data, name: String) throws {
        self = try data.withUnsafeBytes { try Image.decode($0, name: name) }
    }

    /// Decodes an encoded image held in memory; `name` is used in error messages.
    ///
    /// - Throws: ``VisionError`` as ``init(contentsOf:)``.
    public init(data: [UInt8], name: String) throws {
        self = try data.withUnsafeBytes { try Image.decode($0, name: name) }
    }

    private static func decode(_ raw: UnsafeRawBufferPointer, name: String) throws -> Image {
        guard let base = raw.baseAddress, raw.count > 0 else {
            throw VisionError(.emptyFile, source: name, message: "file is empty (0 bytes)")
        }
        guard let length = Int32(exactly: raw.count) else {
            throw VisionError(.imageTooLarge, source: name, message: "file is \(raw.count) bytes; the decoder reads at most \(Int32.max)")
        }
        let bytes = base.assumingMemoryBound(to: UInt8.self)

        var width: Int32 = 0, height: Int32 = 0, components: Int32 = 0
        guard stbi_info_from_memory(bytes, length, &width, &height, &components) != 0 else {
            // stbi_info tries every format, so its reason is always "unknown image type";
            // a load attempt fails on the same header but gives the real format's reason.
            if let unexpected = stbi_load_from_memory(bytes, length, &width, &height, &components, 0) {
                stbi_image_free(unexpected)
            }
            throw failure(name, "cannot decode image")
        }
        guard width > 0, height > 0 else {
            throw VisionError(.decodeFailed, source: name, message: "image declares an empty size \(width)×\(height)")
        }
        guard Int(width) <= maximumPixelCount / Int(height) else {
            throw VisionError(.imageTooLarge, source: name,
                              message: "image is \(width)×\(height) pixels, more than the limit of \(maximumPixelCount)")
        }
        if let problem = ContainerCheck.problem(in: raw) {
            throw VisionError(.decodeFailed, source: name, message: "cannot decode image: \(problem)")
        }

        var samples: [Float]
        let is16Bit = stbi_is_16_bit_from_memory(bytes, length) != 0
        if is16Bit {
            guard let decoded = stbi_load_16_from_memory(bytes, length, &width, &height, &components, 0) else {
                throw failure(name, "cannot decode image")
            }
            defer { stbi_image_free(decoded) }
            let n = Int(width) * Int(height) * Int(components)
            let scale = Float(255) / Float(65535)
            samples = (0..<n).map { Float(decoded[$0]) * scale }
        } else {
            guard let decoded = stbi_load_from_memory(bytes, length, &width, &height, &components, 0) else {
                throw failure(name, "cannot decode image")
            }
            defer { stbi_image_free(decoded) }
            let n = Int(width) * Int(height) * Int(components)
            samples = (0..<n).map { Float(decoded[$0]) }
        }

        var channels = Int(components)
        if channels == 2 {
            samples = expandGrayAlpha(samples)
            channels = 4
        }
        guard [1, 3, 4].contains(channels) else {
            throw VisionError(.decodeFailed, source: name, message: "decoder returned \(channels) channels; expected 1 to 4")
        }
        return Image(unchecked: Int(width), height: Int(height), channels: channels, pixels: samples, name: name)
    }

    /// A `.decodeFailed` error carrying stb_image's reason (thread-local in stb_image 2.27).
    private static func failure(_ name: String, _ what: String) -> VisionError {
        let reason = stbi_failure_reason().map { String(cString: $0) } ?? "unknown reason"
        return VisionError(.decodeFailed, source: name, message: "\(what): \(reason) (corrupt, truncated or unsupported file)")
    }

    /// Gray + alpha pairs → RGBA quadruples.
    private static func expandGrayAlpha(_ ga: [Float]) -> [Float] {
        var rgba = [Float](repeating: 0, count: ga.count * 2)
        for p in 0..<(ga.count / 2) {
            let g = ga[2 * p], a = ga[2 * p + 1]
            rgba[4 * p] = g
            rgba[4 * p + 1] = g
            rgba[4 * p + 2] = g
            rgba[4 * p + 3] = a
        }
        return rgba
    }
}
