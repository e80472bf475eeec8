import Foundation

/// An MNIST-style data set: *N* grayscale images of *H* × *W* bytes and *N* labels 0...9,
/// read from a pair of IDX files.
///
/// ```swift
/// let test = try MNISTDataset(directory: URL(fileURLWithPath: "Data/mnist"), split: .test)
/// let batch = try test.images(in: 0..<64, scale: 1.0 / 255)   // 64 × 28 × 28 × 1, NHWC
/// let first = test.label(at: 0)                               // 7
/// ```
///
/// Images are handed out as `Float`, NHWC with one channel, multiplied by a `scale`:
/// `1.0 / 255` for networks trained on inputs in 0...1, `1` for networks (such as Forge's
/// MNIST example) that take the raw 0...255 pixel values.
public struct MNISTDataset: Sendable {
    /// The number of images (and labels).
    public let count: Int
    /// The height of every image in pixels (28 for MNIST).
    public let imageHeight: Int
    /// The width of every image in pixels (28 for MNIST).
    public let imageWidth: Int
    /// All pixels, image after image, row-major, 0 = background, 255 = full ink.
    public let pixels: [UInt8]
    /// All labels, one per image, each in 0...9.
    public let labels: [UInt8]

    /// The number of classes; every label is below this.
    public static let classCount = 10

    /// Loads `split` from `directory`, which holds the files under their standard names
    /// (see ``Split/imageFileNames`` and ``Split/labelFileNames``).
    ///
    /// - Throws: ``VisionError`` `.cannotRead` naming the directory and the expected file
    ///   names if a file is missing, or any error of ``init(images:labels:)``.
    public init(directory: URL, split: Split) throws {
        func locate(_ names: [String]) throws -> URL {
            for name in names {
                let url = directory.appendingPathComponent(name)
                if FileManager.default.fileExists(atPath: url.path) { return url }
            }
            throw VisionError(.cannotRead, source: directory.path,
                              message: "MNIST \(split.rawValue) file not found: expected \(names.joined(separator: " or ")) in this directory")
        }
        try self.init(imagesFile: try locate(split.imageFileNames), labelsFile: try locate(split.labelFileNames))
    }

    /// Loads an images IDX file (*N* × *H* × *W*) and a labels IDX file (*N*).
    ///
    /// - Throws: ``VisionError`` if either file is not valid IDX, or for any mismatch
    ///   checked by ``init(images:labels:)``.
    public init(imagesFile: URL, labelsFile: URL) throws {
        try self.init(images: try IDXFile(contentsOf: imagesFile), labels: try IDXFile(contentsOf: labelsFile))
    }

    /// Builds the data set from parsed IDX files, checking that the images are
    /// *N* × *H* × *W* with *H*, *W* > 0, the labels are *N* long, and every label is in 0...9.
    ///
    /// - Throws: ``VisionError`` `.badDimensions`, `.countMismatch` or `.invalidLabel`,
    ///   naming the offending file.
    public init(images: IDXFile, labels: IDXFile) throws {
        guard images.dimensions.count == 3 else {
            throw VisionError(.badDimensions, source: images.name,
                              message: "an images file must have 3 dimensions (count × height × width), this one has \(images.dimensions.count): \(IDXFile.format(images.dimensions))")
        }
        guard images.dimensions[1] > 0, images.dimensions[2] > 0 else {
            throw VisionError(.badDimensions, source: images.name,
                              message: "images must be at least 1×1 pixels, the header says \(images.dimensions[1])×\(images.dimensions[2])")
        }
        guard !images.dimensions[1].multipliedReportingOverflow(by: images.dimensions[2]).overflow else {
            // Possible only with 0 images: otherwise the file's size bounds the product.
            throw VisionError(.sizeOverflow, source: images.name,
                              message: "images of \(images.dimensions[1])×\(images.dimensions[2]) pixels overflow: their size does not fit in Int")
        }
        guard labels.dimensions.count == 1 else {
            throw VisionError(.badDimensions, source: labels.name,
                              message: "a labels file must have 1 dimension, this one has \(labels.dimensions.count): \(IDXFile.format(labels.dimensions))")
        }
        guard images.dimensions[0] == labels.dimensions[0] else {
            throw VisionError(.countMismatch, source: labels.name,
                              message: "holds \(labels.dimensions[0]) labels but \(images.name) holds \(images.dimensions[0]) images")
        }
        if let index = labels.bytes.firstIndex(where: { Int($0) >= MNISTDataset.classCount }) {
            throw VisionError(.invalidLabel, source: labels.name,
                              message: "label \(labels.bytes[index]) at index \(index) is outside 0...\(MNISTDataset.classCount - 1)")
        }
        self.count = images.dimensions[0]
        self.imageHeight = images.dimensions[1]
        self.imageWidth = images.dimensions[2]
        self.pixels = images.bytes
        self.labels = labels.bytes
    }

    /// The number of floats in one image: ``imageHeight`` × ``imageWidth`` (one channel).
    public var imageSize: Int { imageHeight * imageWidth }

    /// The label (0...9) of image `index`.
    ///
    /// - Precondition: `0 <= index < count`, as for an array subscript.
    public func label(at index: Int) -> Int {
        precondition(index >= 0 && index < count, "MNISTDataset.label(at: \(index)): index out of range 0..<\(count)")
        return Int(labels[index])
    }

    /// The labels of the images in `range`.
    ///
    /// - Throws: ``VisionError`` `.invalidArgument` if `range` is not within `0..<count`.
    public func labels(in range: Range<Int>) throws -> [Int] {
        try check(range)
        return labels[range].map(Int.init)
    }

    /// The images in `range` as floats, NHWC with C = 1, each pixel multiplied by `scale`.
    ///
    /// - Parameters:
    ///   - range: which images, within `0..<count`.
    ///   - scale: `1.0 / 255` for inputs in 0...1, `1` for raw 0...255 values.
    /// - Returns: `range.count × imageHeight × imageWidth` floats.
    /// - Throws: ``VisionError`` `.invalidArgument` if `range` is out of bounds.
    public func images(in range: Range<Int>, scale: Float) throws -> [Float] {
        try check(range)
        return [Float](unsafeUninitializedCapacity: range.count * imageSize) { buffer, initialized in
            convert(range, scale: scale, into: buffer)
            initialized = range.count * imageSize
        }
    }

    /// Writes the images in `range` into `buffer` as floats (NHWC, C = 1, times `scale`),
    /// starting at `buffer[0]`; elements after `range.count × imageSize` are left alone.
    ///
    /// - Throws: ``VisionError`` `.invalidArgument` if `range` is out of bounds or `buffer`
    ///   holds fewer than `range.count × imageHeight × imageWidth` floats.
    public func writeImages(in range: Range<Int>, scale: Float, into buffer: UnsafeMutableBufferPointer<Float>) throws {
        try check(range)
        let needed = range.count * imageSize
        guard buffer.count >= needed else {
            throw VisionError(.invalidArgument, source: "MNISTDataset",
                              message: "buffer holds \(buffer.count) floats, \(range.count) images of \(imageHeight)×\(imageWidth) need \(needed)")
        }
        convert(range, scale: scale, into: buffer)
    }

    /// Image `index` as a one-channel ``Image`` with values 0...255 (for previews and tests).
    ///
    /// - Throws: ``VisionError`` `.invalidArgument` if `index` is out of range.
    public func image(at index: Int) throws -> Image {
        guard index >= 0, index < count else {
            throw VisionError(.invalidArgument, source: "MNISTDataset",
                              message: "image index \(index) is outside 0..<\(count)")
        }
        let pixels = try images(in: index..<(index + 1), scale: 1)
        return try Image(width: imageWidth, height: imageHeight, channels: 1, pixels: pixels, name: "MNIST image \(index)")
    }

    private func check(_ range: Range<Int>) throws {
        guard range.lowerBound >= 0, range.upperBound <= count else {
            throw VisionError(.invalidArgument, source: "MNISTDataset",
                              message: "image range \(range.lowerBound)..<\(range.upperBound) is outside 0..<\(count)")
        }
    }

    private func convert(_ range: Range<Int>, scale: Float, into buffer: UnsafeMutableBufferPointer<Float>) {
        let start = range.lowerBound * imageSize
        let n = range.count * imageSize
        pixels.withUnsafeBufferPointer { source in
            for i in 0..<n {
                buffer[i] = Float(source[start + i]) * scale
            }
        }
    }
}
