import Foundation
import Testing
@testable import AnvilVision

/// `Fixtures/preprocessing/expected.json`, written by `Fixtures/preprocessing/generate.py`
/// from Pillow, numpy and torchvision (independently of the Swift code).
struct PreprocessingFixtures: Decodable {
    struct Resize: Decodable, CustomTestStringConvertible {
        let width: Int
        let height: Int
        let outWidth: Int
        let outHeight: Int
        let pixels: [Float]
        let expected: [Float]
        var testDescription: String { "\(width)×\(height) → \(outWidth)×\(outHeight)" }
    }

    /// A pipeline computed in numpy + Pillow "F" resizes on one of the small PNGs.
    struct Pipeline: Decodable, CustomTestStringConvertible {
        let file: String
        let preset: String
        let width: Int
        let height: Int
        let resize: String
        let resizeWidth: Int
        let resizeHeight: Int
        let filter: String
        let alpha: AlphaSetting
        let order: String
        let scale: Double
        let mean: [Float]
        let std: [Float]
        let note: String
        let expected: [Float]
        var testDescription: String { "\(file) \(preset) \(width)×\(height): \(note)" }

        /// The same settings as an ``ImagePreprocessing``, spelled out field by field.
        var preprocessing: ImagePreprocessing {
            let resizing: ImagePreprocessing.Resize
            switch resize {
            case "shorterSide": resizing = .shorterSide(resizeWidth)
            case "exact": resizing = .exact(width: resizeWidth, height: resizeHeight)
            default: resizing = .none
            }
            return ImagePreprocessing(resize: resizing, width: width, height: height,
                                      filter: ResamplingFilter(rawValue: filter)!, alpha: alpha.handling,
                                      channelOrder: order == "bgr" ? .bgr : .rgb, scale: Float(scale),
                                      mean: mean, standardDeviation: std)
        }
    }

    /// `"drop"` or a background level.
    enum AlphaSetting: Decodable {
        case drop
        case background(Float)
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let level = try? container.decode(Float.self) { self = .background(level) } else { self = .drop }
        }
        var handling: AlphaHandling {
            switch self {
            case .drop: return .drop
            case .background(let level): return .composite(background: level)
            }
        }
    }

    /// Pillow/torchvision pipelines on the photo, sampled every `stride` values.
    struct Photo: Decodable, CustomTestStringConvertible {
        let name: String
        let preset: String
        let size: Int
        let resizeShorterSide: Int
        let stride: Int
        let samples: [Float]
        let channelMeans: [Double]
        let count: Int
        let tolerance: Float
        let meanTolerance: Float
        let note: String
        var testDescription: String { name }
    }

    let lanczos: [Resize]
    let pipelines: [Pipeline]
    let photo: [Photo]

    static var directory: URL {
        Bundle.module.url(forResource: "Fixtures", withExtension: nil)!.appendingPathComponent("preprocessing")
    }

    /// `Fixtures/photos/chelsea.jpg`: 451 × 300, public domain (see the README beside it).
    static var photoURL: URL {
        Bundle.module.url(forResource: "Fixtures", withExtension: nil)!.appendingPathComponent("photos/chelsea.jpg")
    }

    static let shared: PreprocessingFixtures = {
        let data = try! Data(contentsOf: directory.appendingPathComponent("expected.json"))
        return try! JSONDecoder().decode(PreprocessingFixtures.self, from: data)
    }()
}

/// The largest absolute difference and where it is.
func largestDifference(_ a: [Float], _ b: [Float]) -> (value: Float, index: Int) {
    var worst: Float = 0, index = -1
    for i in 0 ..< min(a.count, b.count) {
        let d = abs(a[i] - b[i])
        if d > worst || d.isNaN { worst = d; index = i }
    }
    return (worst, index)
}
