import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ReferenceLayerTests``: pooling against the naive reference.
extension ReferenceLayerTests {
    @Test("Max and average pooling: random kernels, strides, pads, dilations, ceil mode, countIncludesPadding",
          arguments: 0 ..< 64)
    func pooling(seed: Int) throws {
        var rng = RefRandom(seed: seed + 9000)
        let isMax = seed % 2 == 0
        var expected: RefTensor?
        var x = RefTensor(zerosN: 1, h: 1, w: 1, c: 1)
        var kernel = (1, 1), stride = (1, 1), dilation = (1, 1), padding = Padding.valid
        var ceilMode = false, countsPadding = false
        repeat {
            kernel = (rng.int(1 ... 4), rng.int(1 ... 4))
            stride = (rng.int(1 ... 3), rng.int(1 ... 3))
            dilation = rng.int(0 ... 2) == 0 ? (rng.int(1 ... 3), rng.int(1 ... 3)) : (1, 1)
            let effective = ((kernel.0 - 1) * dilation.0 + 1, (kernel.1 - 1) * dilation.1 + 1)
            switch rng.int(0 ... 3) {
            case 0: padding = .valid
            case 1: padding = .same
            default:  // explicit pads must be smaller than the window
                padding = .explicit(top: rng.int(0 ... min(2, effective.0 - 1)), left: rng.int(0 ... min(2, effective.1 - 1)),
                                    bottom: rng.int(0 ... min(2, effective.0 - 1)), right: rng.int(0 ... min(2, effective.1 - 1)))
            }
            ceilMode = padding != .same && rng.bool()
            countsPadding = rng.bool()
            x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(1 ... 9), w: rng.int(1 ... 9), c: rng.int(1 ... 4))
            expected = isMax
                ? Naive.maxPool(x, kernel: kernel, stride: stride, padding: padding, dilation: dilation, ceilMode: ceilMode)
                : Naive.averagePool(x, kernel: kernel, stride: stride, padding: padding, dilation: dilation,
                                    ceilMode: ceilMode, countIncludesPadding: countsPadding)
        } while expected == nil
        let context = "\(isMax ? "max" : "average") pool seed \(seed): input \(x), kernel \(kernel), stride \(stride), " +
            "dilation \(dilation), padding \(padding), ceil \(ceilMode), countIncludesPadding \(countsPadding)"
        let y = try refRun(x) { input in
            isMax
                ? input --> MaxPooling(kernel: kernel, stride: stride, padding: padding, dilation: dilation, ceilMode: ceilMode)
                : input --> AveragePooling(kernel: kernel, stride: stride, padding: padding, dilation: dilation,
                                           ceilMode: ceilMode, countIncludesPadding: countsPadding)
        }
        refExpectClose(y, expected!, context)
    }

    @Test("Pooling stride defaults to the kernel size")
    func poolingDefaultStride() throws {
        var rng = RefRandom(seed: 77)
        let x = rng.tensor(n: 2, h: 7, w: 8, c: 3)
        let y1 = try refRun(x) { $0 --> MaxPooling(kernel: (2, 3)) }
        refExpectClose(y1, Naive.maxPool(x, kernel: (2, 3), stride: (2, 3))!, "max pool default stride")
        let y2 = try refRun(x) { $0 --> AveragePooling(kernel: (3, 2)) }
        refExpectClose(y2, Naive.averagePool(x, kernel: (3, 2), stride: (3, 2))!, "average pool default stride")
    }

    @Test("Global average and max pooling", arguments: 0 ..< 8)
    func globalPooling(seed: Int) throws {
        var rng = RefRandom(seed: seed + 11000)
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: rng.int(1 ... 7), w: rng.int(1 ... 7), c: rng.int(1 ... 5), -4, 4)
        refExpectClose(try refRun(x) { $0 --> GlobalAveragePooling() }, Naive.globalAveragePool(x), "GAP seed \(seed) \(x)")
        refExpectClose(try refRun(x) { $0 --> GlobalMaxPooling() }, Naive.globalMaxPool(x), "GMP seed \(seed) \(x)")
    }
}
