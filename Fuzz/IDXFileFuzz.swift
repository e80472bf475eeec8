import Foundation

/// libFuzzer target: the IDX reader. Any bytes either parse — and then re-encode to exactly
/// the same bytes — or throw a `VisionError`. Parsed files are also tried as an MNIST data set.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let file: IDXFile
    do {
        file = try IDXFile(data: bytes, name: "fuzz.idx")
    } catch let error as VisionError {
        fuzzLog("refused: \(error)")
        return 0
    } catch {
        fuzzFailure("IDXFile threw a non-Vision error: \(error)")
    }
    let count = file.dimensions.reduce(1, *)
    guard file.bytes.count == count else { fuzzFailure("\(file.bytes.count) bytes for dimensions \(file.dimensions)") }
    guard file.encoded() == bytes else { fuzzFailure("re-encoding differs from the input") }
    guard (try? IDXFile(data: Data(bytes), name: "fuzz.idx")) == file else { fuzzFailure("Data and [UInt8] parses differ") }
    fuzzLog("parsed: \(file.dimensions)")

    // As images, with generated labels; as labels, with generated images.
    do {
        if file.dimensions.count == 3, file.dimensions[0] <= 1 << 16 {
            let n = file.dimensions[0]
            let labels = try IDXFile(dimensions: [n], bytes: (0 ..< n).map { UInt8($0 % 10) })
            let set = try MNISTDataset(images: file, labels: labels)
            let range = 0 ..< min(set.count, 3)
            let floats = try set.images(in: range, scale: 1 / 255)
            guard floats.count == range.count * set.imageSize, floats.allSatisfy({ $0 >= 0 && $0 <= 1 }) else {
                fuzzFailure("images out of range")
            }
            if set.count > 0, set.imageSize <= 1 << 16 {
                let image = try set.image(at: 0)
                _ = try? MNISTPreprocessor().preprocess(image)
            }
            _ = try? set.images(in: set.count ..< set.count + 1, scale: 1)
        }
        if file.dimensions.count == 1, file.dimensions[0] <= 1 << 16 {
            let n = file.dimensions[0]
            let images = try IDXFile(dimensions: [n, 2, 2], bytes: [UInt8](repeating: 7, count: 4 * n))
            if let set = try? MNISTDataset(images: images, labels: file) {
                guard file.bytes.allSatisfy({ $0 < 10 }), try set.labels(in: 0 ..< n) == file.bytes.map(Int.init) else {
                    fuzzFailure("labels accepted wrongly")
                }
            } else if file.bytes.allSatisfy({ $0 < 10 }) {
                fuzzFailure("valid labels refused")
            }
        }
    } catch let error as VisionError {
        fuzzLog("data set refused: \(error)")
    } catch {
        fuzzFailure("non-Vision error: \(error)")
    }
    return 0
}
