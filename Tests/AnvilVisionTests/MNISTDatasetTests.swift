import Foundation
import Testing
@testable import AnvilVision

@Suite("MNISTDataset")
struct MNISTDatasetTests {
    /// Three 2 × 3 images with distinct pixel values, as an IDX file written by hand.
    static let imagePixels: [UInt8] = [0, 51, 102, 153, 204, 255,
                                       10, 20, 30, 40, 50, 60,
                                       255, 254, 253, 1, 2, 3]
    static let imagesFile: [UInt8] = [0, 0, 8, 3] + be32(3) + be32(2) + be32(3) + imagePixels
    static let labelsFile: [UInt8] = [0, 0, 8, 1] + be32(3) + [7, 0, 9]

    /// Writes `images` and `labels` into a new directory under the given names.
    func directory(images: [UInt8] = imagesFile, labels: [UInt8] = labelsFile,
                   imagesName: String = "t10k-images-idx3-ubyte", labelsName: String = "t10k-labels-idx1-ubyte") throws -> URL {
        let dir = try makeTemporaryDirectory()
        try Data(images).write(to: dir.appendingPathComponent(imagesName))
        try Data(labels).write(to: dir.appendingPathComponent(labelsName))
        return dir
    }

    @Test func loadsTestSplitFromDirectory() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let set = try MNISTDataset(directory: dir, split: .test)
        #expect(set.count == 3)
        #expect(set.imageHeight == 2)
        #expect(set.imageWidth == 3)
        #expect(set.imageSize == 6)
        #expect((0..<3).map(set.label(at:)) == [7, 0, 9])
        #expect(try set.labels(in: 1..<3) == [0, 9])
    }

    @Test func imagesAreScaledFloatsInOrder() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let set = try MNISTDataset(directory: dir, split: .test)
        #expect(try set.images(in: 1..<2, scale: 1) == [10, 20, 30, 40, 50, 60])
        let unit = try set.images(in: 0..<3, scale: 1.0 / 255)
        #expect(unit.count == 18)
        #expect(unit[0] == 0)
        #expect(abs(unit[1] - 0.2) < 1e-6)
        #expect(unit[5] == 1)
        #expect(abs(unit[17] - 3.0 / 255) < 1e-7)
        #expect(try set.images(in: 2..<2, scale: 1).isEmpty)
    }

    @Test func writesIntoCallerBuffer() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let set = try MNISTDataset(directory: dir, split: .test)
        var buffer = [Float](repeating: -1, count: 14)
        try buffer.withUnsafeMutableBufferPointer { try set.writeImages(in: 1..<3, scale: 2, into: $0) }
        #expect(Array(buffer[0..<12]) == [20, 40, 60, 80, 100, 120, 510, 508, 506, 2, 4, 6])
        #expect(buffer[12] == -1 && buffer[13] == -1)  // untouched past the batch

        var small = [Float](repeating: 0, count: 11)
        let error = expectVisionError(.invalidArgument) {
            try small.withUnsafeMutableBufferPointer { try set.writeImages(in: 1..<3, scale: 1, into: $0) }
        }
        #expect(error?.message.contains("12") == true)
    }

    @Test func imageAtIndexIsAnImage() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let set = try MNISTDataset(directory: dir, split: .test)
        let image = try set.image(at: 2)
        #expect(image.width == 3 && image.height == 2 && image.channels == 1)
        #expect(image.pixels == [255, 254, 253, 1, 2, 3])
        expectVisionError(.invalidArgument) { try set.image(at: 3) }
        expectVisionError(.invalidArgument) { try set.image(at: -1) }
    }

    @Test func outOfRangeBatchIsAnError() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let set = try MNISTDataset(directory: dir, split: .test)
        expectVisionError(.invalidArgument) { try set.images(in: 2..<4, scale: 1) }
        expectVisionError(.invalidArgument) { try set.labels(in: -1..<1) }
    }

    @Test func acceptsTrainingSplitAndDottedNames() throws {
        let dir = try directory(imagesName: "train-images.idx3-ubyte", labelsName: "train-labels.idx1-ubyte")
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(try MNISTDataset(directory: dir, split: .training).count == 3)
        let error = expectVisionError(.cannotRead) { try MNISTDataset(directory: dir, split: .test) }
        #expect(error?.message.contains("t10k-images-idx3-ubyte") == true)
        #expect(error?.source == dir.path)
    }

    @Test func countMismatch() throws {
        let dir = try directory(labels: [0, 0, 8, 1] + be32(2) + [1, 2])
        defer { try? FileManager.default.removeItem(at: dir) }
        let error = expectVisionError(.countMismatch) { try MNISTDataset(directory: dir, split: .test) }
        #expect(error?.message.contains("2 labels") == true)
        #expect(error?.message.contains("3 images") == true)
    }

    @Test func labelOutsideZeroToNine() throws {
        let dir = try directory(labels: [0, 0, 8, 1] + be32(3) + [1, 10, 2])
        defer { try? FileManager.default.removeItem(at: dir) }
        let error = expectVisionError(.invalidLabel) { try MNISTDataset(directory: dir, split: .test) }
        #expect(error?.message.contains("label 10 at index 1") == true)
        #expect(error?.source.hasSuffix("t10k-labels-idx1-ubyte") == true)
    }

    @Test func wrongRanks() throws {
        let flat: [UInt8] = [0, 0, 8, 1] + be32(6) + [1, 2, 3, 4, 5, 6]
        let labels = try IDXFile(data: Self.labelsFile, name: "labels")
        let images = try IDXFile(data: Self.imagesFile, name: "images")
        expectVisionError(.badDimensions) { try MNISTDataset(images: try IDXFile(data: flat, name: "flat"), labels: labels) }
        expectVisionError(.badDimensions) { try MNISTDataset(images: images, labels: images) }
        let empty: [UInt8] = [0, 0, 8, 3] + be32(3) + be32(0) + be32(28)
        expectVisionError(.badDimensions) { try MNISTDataset(images: try IDXFile(data: empty, name: "e"), labels: labels) }
    }

    @Test func corruptImagesFileIsReported() throws {
        let dir = try directory(images: Array(Self.imagesFile.dropLast()))
        defer { try? FileManager.default.removeItem(at: dir) }
        let error = expectVisionError(.fileTooShort) { try MNISTDataset(directory: dir, split: .test) }
        #expect(error?.source.hasSuffix("t10k-images-idx3-ubyte") == true)
    }

    @Test(.enabled(if: TestPaths.exists(TestPaths.mnistData.appendingPathComponent("t10k-labels-idx1-ubyte")),
                   "real MNIST not found in Data/mnist (run Scripts/setup/fetch_mnist.sh); skipping"))
    func realTestSet() throws {
        let set = try MNISTDataset(directory: TestPaths.mnistData, split: .test)
        #expect(set.count == 10_000)
        #expect(set.imageHeight == 28 && set.imageWidth == 28)
        // The first test digits are 7, 2, 1, 0, 4 (well known).
        #expect((0..<5).map(set.label(at:)) == [7, 2, 1, 0, 4])
        let counts = set.labels.reduce(into: [Int](repeating: 0, count: 10)) { $0[Int($1)] += 1 }
        #expect(counts == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009])
    }
}
