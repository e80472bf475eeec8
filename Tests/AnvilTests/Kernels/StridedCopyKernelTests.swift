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

    /// ShuffleNet's shuffle interleaves g streams of k channels per pixel, copied by runs (two
    /// streams 8 pairs at a time with AVX2): every g up to 8 and past it (the per-row path), runs
    /// that do not fill a vector, and row ranges that start and stop inside a run, as the
    /// parallel split cuts them.
    @Test("Channel shuffles (interleaves) of every group count, split anywhere", arguments: refInstructionSets)
    func interleavesMatchReference(isa: InstructionSet) throws {
        try refRequireSupported(isa)
        var rng = RefRandom(seed: 78)
        for groups in [2, 3, 4, 8, 9] {
            for k in [1, 5, 8, 13, 58] {
                let pixels = rng.int(1 ... 7), c = groups * k
                let input = (0 ..< pixels * c).map { _ in rng.float() }
                var expected = [Float](repeating: 0, count: input.count)
                for p in 0 ..< pixels {
                    for i in 0 ..< k {
                        for j in 0 ..< groups { expected[p * c + i * groups + j] = input[p * c + j * k + i] }
                    }
                }
                let copy = StridedCopy(input: 0, dims: [pixels, k, groups], inputStrides: [c, 1, k], outputStrides: [c, groups, 1])
                let kernel = StridedCopyKernel(copies: [copy], inputCounts: [input.count], outputCount: input.count)
                let plan = try #require(kernel.plans.first)
                var shape = plan.shape
                shape.dims.0 = 1
                let rows = plan.rowsPerImage
                for cuts in [[0, rows], [0, rows / 3, rows / 2 + 1, rows]] {
                    var output = [Float](repeating: .nan, count: input.count)
                    input.withUnsafeBufferPointer { source in
                        output.withUnsafeMutableBufferPointer { target in
                            let job = StridedCopyKernel.Rows(shape: shape, input: source.baseAddress!, output: target.baseAddress!,
                                                             isa: isa.cValue)
                            for (begin, end) in zip(cuts, cuts.dropFirst()) { job.run(begin ..< end) }
                        }
                    }
                    #expect(output == expected, "\(isa) \(pixels) pixels, \(groups) groups of \(k), cut at \(cuts)")
                }
            }
        }
    }
}
