import Foundation
import Testing
@testable import AnvilVision
@testable import AnvilTestSupport

/// Locations of test inputs: the bundled fixtures and the optional data outside the repository.
enum TestPaths {
    /// `Fixtures/vision/` inside the test bundle.
    static var visionFixtures: URL {
        Bundle.module.url(forResource: "Fixtures", withExtension: nil)!.appendingPathComponent("vision")
    }

    /// The repository root (``Fixtures/repository``).
    static var repositoryRoot: URL { Fixtures.repository }

    /// `../shared/forge-mnist/` next to the repository (Forge's weights and test drawings).
    static var forgeMNIST: URL { Fixtures.forgeMNISTDirectory }

    /// `Data/mnist/` in the repository (filled by Scripts/setup/fetch_mnist.sh).
    static var mnistData: URL { Fixtures.mnistDataDirectory }

    static func exists(_ url: URL) -> Bool { Fixtures.exists(url) }
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
func makeTemporaryDirectory() throws -> URL { try Fixtures.temporaryDirectory(prefix: "anvilvision") }

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
