import Foundation
import Testing
@testable import AnvilVision

/// Locations of test inputs: the bundled fixtures and the optional data outside the repository.
enum TestPaths {
    /// `Fixtures/vision/` inside the test bundle.
    static var visionFixtures: URL {
        Bundle.module.url(forResource: "Fixtures", withExtension: nil)!.appendingPathComponent("vision")
    }

    /// The repository root, from this file's path (symlinks resolved, so a wrapper package
    /// that links the sources in still finds the real repository).
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent()  // AnvilVisionTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // repository root
    }

    /// `../shared/forge-mnist/` next to the repository (Forge's weights and test drawings).
    static var forgeMNIST: URL {
        repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/forge-mnist")
    }

    /// `Data/mnist/` in the repository (filled by Scripts/setup/fetch_mnist.sh).
    static var mnistData: URL { repositoryRoot.appendingPathComponent("Data/mnist") }

    static func exists(_ url: URL) -> Bool { FileManager.default.fileExists(atPath: url.path) }
}

/// Runs `body`, requires it to throw a ``VisionError`` and returns it (nil after recording a failure).
@discardableResult
func expectVisionError<T>(_ code: VisionError.Code, sourceLocation: SourceLocation = #_sourceLocation,
                          _ body: () throws -> T) -> VisionError? {
    do {
        let value = try body()
        Issue.record("expected VisionError.\(code), got a value: \(value)", sourceLocation: sourceLocation)
        return nil
    } catch let error as VisionError {
        #expect(error.code == code, "wrong code; message: \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected VisionError.\(code), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// Big-endian bytes of a 32-bit size, written out by hand for IDX headers.
func be32(_ v: UInt32) -> [UInt8] {
    [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
}

/// A fresh temporary directory, removed by the caller.
func makeTemporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("anvilvision-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Centre of mass (x, y) of a row-major one-channel image, pixel (x, y)'s centre at (x, y).
func centreOfMass(_ v: [Float], width: Int, height: Int) -> (x: Double, y: Double) {
    var m = 0.0, sx = 0.0, sy = 0.0
    for y in 0..<height {
        for x in 0..<width {
            let p = Double(v[y * width + x])
            m += p; sx += p * Double(x); sy += p * Double(y)
        }
    }
    return (sx / m, sy / m)
}

/// Tight bounding box (width, height) of the pixels above `threshold`.
func inkExtent(_ v: [Float], width: Int, height: Int, threshold: Float = 0) -> (width: Int, height: Int) {
    var minX = width, minY = height, maxX = -1, maxY = -1
    for y in 0..<height {
        for x in 0..<width where v[y * width + x] > threshold {
            minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
        }
    }
    return maxX < 0 ? (0, 0) : (maxX - minX + 1, maxY - minY + 1)
}
