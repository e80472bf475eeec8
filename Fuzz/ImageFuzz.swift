import Foundation

/// libFuzzer target: the image decoder wrapper. Any bytes either decode into a well-formed
/// image (1, 3 or 4 channels, every sample finite and in 0...255) or throw a `VisionError`.
/// Decoded images go through grayscale, resize and the MNIST preprocessor.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let image: Image
    do {
        image = try Image(data: bytes, name: "fuzz.img")
    } catch let error as VisionError {
        fuzzLog("refused: \(error)")
        return 0
    } catch {
        fuzzFailure("Image threw a non-Vision error: \(error)")
    }
    guard image.width > 0, image.height > 0, [1, 3, 4].contains(image.channels),
          image.pixels.count == image.width * image.height * image.channels,
          image.width * image.height <= Image.maximumPixelCount else {
        fuzzFailure("malformed image \(image.width)x\(image.height)x\(image.channels), \(image.pixels.count) samples")
    }
    guard image.pixels.allSatisfy({ $0 >= 0 && $0 <= 255 }) else { fuzzFailure("samples outside 0...255") }
    fuzzLog("decoded: \(image.width)x\(image.height)x\(image.channels)")
    guard image.width * image.height <= 1 << 16 else { return 0 }
    let gray = image.grayscale()
    guard gray.channels == 1, gray.pixels.allSatisfy({ $0 >= 0 && $0 <= 255 }) else { fuzzFailure("bad grayscale") }
    do {
        let small = try image.resized(width: 1 + size % 9, height: 1 + size % 7)
        guard small.pixels.allSatisfy({ $0.isFinite && $0 >= -1e-3 && $0 <= 255.001 }) else { fuzzFailure("resize out of range") }
        let digit = try MNISTPreprocessor().preprocess(image)
        guard digit.count == 28 * 28, digit.allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= 255 }) else {
            fuzzFailure("preprocessed digit malformed")
        }
    } catch let error as VisionError {
        fuzzLog("preprocess refused: \(error)")
    } catch {
        fuzzFailure("non-Vision error: \(error)")
    }
    return 0
}
