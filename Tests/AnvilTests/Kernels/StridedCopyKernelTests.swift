import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// The strided copy behind the layout layers, every body the CPU runs (scalar, AVX2, AVX-512),
/// against the naive permutation: contiguous runs, gathers of every step, odd lengths.
@Suite("Strided copy kernel")
struct StridedCopyKernelTests {
    @Test("Random transposes of up to five axes per image, batch 1 to 3", arguments: refInstructionSets)
    func transposesMatchReference(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 77)
        for _ in 0 ..< 40 {
            let axes = rng.int(1 ... 5)
            let dims = [rng.int(1 ... 3)] + (0 ..< axes).map { _ in rng.pick([1, 2, 3, 5, 8, 9, 17, 33]) }
            guard dims.reduce(1, *) < 40_000 else { continue }
            var perm = Array(1 ... axes)
            for i in stride(from: perm.count - 1, to: 0, by: -1) { perm.swapAt(i, rng.int(0 ... i)) }
            perm = [0] + perm
            let x = RefArray(dims: dims, v: (0 ..< dims.reduce(1, *)).map { _ in Double(rng.float()) })
            let expected = Naive.transpose(x, perm)
            let inner = Array(dims.dropFirst()), strides = StridedCopy.contiguousStrides(inner)
            let outDims = perm.dropFirst().map { inner[$0 - 1] }
            let copy = StridedCopy(input: 0, dims: outDims, inputStrides: perm.dropFirst().map { strides[$0 - 1] },
                                   outputStrides: StridedCopy.contiguousStrides(outDims))
            let count = inner.reduce(1, *)
            var kernel = StridedCopyKernel(copies: [copy], inputCounts: [count], outputCount: count)
            kernel.instructionSet = isa
            let shape = Shape(height: 1, width: 1, channels: count)
            let actual = refRunKernel(kernel, input: x.v.map(Float.init), batch: dims[0], inputShape: shape, outputShape: shape)
            #expect(actual == expected.v.map(Float.init), "\(isa) \(dims) by \(perm)")
        }
    }
}
