import Foundation

/// Where the 3×3 filters lie in a convolution's weights, in floats: tap (y, x) from input
/// channel `i` to output channel `o` is at `o * output + i * input + y * row + x * column`.
/// The filter transform gathers the taps through these strides, so weights in any
/// ``WeightLayout`` are read where they lie, without a reordered copy.
struct FilterStrides: Sendable, Equatable {
    let output: Int, input: Int, row: Int, column: Int

    /// The strides of `layout` for `inputs` input and `outputs` output channels.
    init(layout: WeightLayout, inputs: Int, outputs: Int) {
        switch layout {
        case .forge: (output, row, column, input) = (9 * inputs, 3 * inputs, inputs, 1)  // [o][y][x][i]
        case .pytorch: (output, input, row, column) = (9 * inputs, 9, 3, 1)  // [o][i][y][x]
        case .tensorflow: (row, column, input, output) = (3 * inputs * outputs, inputs * outputs, outputs, 1)  // [y][x][i][o]
        }
    }
}

/// The transformed filters of a Winograd kernel, `U[i][p][o]`: for each input channel `i`, the
/// α² rows (one per position `p`) of its transformed filters to every output channel `o`. The
/// GEMM of position `p` reads its B operand (`inputs × outputs`) at `p · outputs` with a row
/// stride of α² · outputs. Input-channel-major, the transform writes each thread's share of the
/// memory from start to end: each 2 MB page is zeroed by the kernel and then filled while still
/// in cache, and no two threads fault the same page. (Position-major, each thread wrote a row of
/// each of the α² matrices in turn, and the kernel's zeroing and the transform's writes went
/// to memory and back.) One allocation, 2 MB aligned and (on Linux) advised for transparent
/// huge pages.
///
/// They take 16/9 (F(2×2)) or 4 (F(4×4)) times the memory of the weights, and fresh memory is
/// dear: the kernel zeroes every page on first touch, and on the reference VM faulting 235 MB in
/// 4 KB pages took 170–240 ms against 40 ms or more in 2 MB pages.
/// Huge pages also spare the GEMMs TLB misses when they stream the filters.
final class WinogradFilters: @unchecked Sendable {
    // @unchecked Sendable: `pointer` and `count` are `let`s; the filters are written by the
    // compile step's transform before the kernel holding them is published, and only read after.

    let pointer: UnsafeMutablePointer<Float>
    let count: Int

    static let hugePage = 2 << 20

    /// Uninitialised memory for `count` floats. Only the whole 2 MB pages are advised: a last
    /// partial one would become a whole huge page once touched (VGG16's filters would take 5 MB
    /// more), so the tail stays in 4 KB pages.
    init(count: Int) {
        let hugePage = Self.hugePage
        let bytes = max(count, 1) * MemoryLayout<Float>.stride
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, bytes >= hugePage ? hugePage : 64, bytes) == 0, let raw else {
            fatalError("cannot allocate \(bytes) bytes of Winograd filters")
        }
        #if os(Linux)
        if bytes >= hugePage { _ = madvise(raw, bytes / hugePage * hugePage, MADV_HUGEPAGE) }
        #endif
        self.pointer = raw.bindMemory(to: Float.self, capacity: max(count, 1))
        self.count = count
    }

    deinit { free(pointer) }
}

extension WinogradVariant {
    /// Transforms every filter once: `U[i][p][o] = (G g Gᵀ)[p]` for the 3×3 filter `g` from
    /// input channel `i` to output channel `o`, times `scale[o]` when given (a folded
    /// BatchNormalization). `weights` are read through `strides` (any ``WeightLayout``).
    ///
    /// In Float, eight output channels per vector, the input channels split among the threads.
    func transformFilters(_ weights: UnsafePointer<Float>, strides: FilterStrides, scale: UnsafePointer<Float>?,
                          outputs: Int, inputs: Int) -> WinogradFilters {
        let filters = WinogradFilters(count: positions * inputs * outputs)
        Compute.parallelFor(inputs, costPerItem: outputs * 8 * positions,
                            FilterTransform(variant: self, weights: weights, strides: strides, scale: scale,
                                            u: filters.pointer, inputs: inputs, outputs: outputs))
        return filters
    }
}

/// ``WinogradVariant/transformFilters(_:strides:scale:outputs:inputs:)`` for a range of input
/// channels, as a parallel job. Not generic over the algorithm: workers call a job through its
/// protocol witness, which for a generic job is the unspecialised code.
private struct FilterTransform: ParallelJob {
    let variant: WinogradVariant
    let weights: UnsafePointer<Float>
    let strides: FilterStrides
    let scale: UnsafePointer<Float>?
    let u: UnsafeMutablePointer<Float>
    let inputs: Int
    let outputs: Int

    func run(_ range: Range<Int>) {
        switch variant {
        case .f2x2: run(WinogradF2.self, range)
        case .f4x4: run(WinogradF4.self, range)
        }
    }

    /// Blocks of ``blockInputs`` input channels, each taken eight output channels at a time:
    /// the eight rows of weights a block reads stay in L1, and the α² half cache lines it
    /// writes per input channel are completed by the next eight channels while still in cache.
    /// (With the input channel in the outer loop, PyTorch's `[o][i][3][3]`, which puts the next
    /// output channel 9 · inputs floats on, had 512 such rows fall into a few cache sets: every
    /// read missed, and the transform of VGG16 took 1.6× as long.)
    private func run<A: WinogradAlgorithm>(_: A.Type, _ range: Range<Int>) {
        let alpha = A.inputTile
        let vector = MemoryLayout<WinogradLanes>.stride
        let positionBytes = outputs * MemoryLayout<Float>.stride
        withUnsafeTemporaryAllocation(of: WinogradLanes.self, capacity: 9 + 3 * alpha + A.positions) { buffer in
            // `taps`: the 3×3 filters of eight output channels; `rows`: G along each row (3 × α);
            // `partial`: the α × α result of a group of fewer than eight channels.
            let taps = UnsafeMutableRawPointer(buffer.baseAddress!)
            let rows = taps + 9 * vector
            let partial = rows + 3 * alpha * vector
            for blockStart in stride(from: range.lowerBound, to: range.upperBound, by: Self.blockInputs) {
                let block = blockStart ..< min(blockStart + Self.blockInputs, range.upperBound)
                for first in stride(from: 0, to: outputs, by: 8) {
                    let lanes = min(8, outputs - first)
                    let factor = scale.map { Self.gather($0 + first, stride: 1, lanes: lanes) } ?? WinogradLanes(repeating: 1)
                    for i in block {
                        let origin = weights + first * strides.output + i * strides.input
                        for y in 0 ..< 3 {
                            for x in 0 ..< 3 {
                                let tap = Self.gather(origin + y * strides.row + x * strides.column, stride: strides.output, lanes: lanes)
                                taps.storeLanes(scale == nil ? tap : tap * factor, y * 3 + x, vector)
                            }
                        }
                        for y in 0 ..< 3 {
                            A.transformFilter(taps + 3 * y * vector, vector, rows + y * alpha * vector, vector)
                        }
                        // Column b of `rows` gives U[a][b] for every a: position a·α + b.
                        let row = u + i * A.positions * outputs
                        if lanes == 8 {
                            let target = UnsafeMutableRawPointer(row + first)
                            for b in 0 ..< alpha {
                                A.transformFilter(rows + b * vector, alpha * vector, target + b * positionBytes, alpha * positionBytes)
                            }
                        } else {
                            for b in 0 ..< alpha {
                                A.transformFilter(rows + b * vector, alpha * vector, partial + b * vector, alpha * vector)
                            }
                            for p in 0 ..< A.positions {
                                let value = UnsafeRawPointer(partial).loadLanes(p, vector)
                                for lane in 0 ..< lanes { row[p * outputs + first + lane] = value[lane] }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Input channels per block of ``run(_:_:)``: 16 PyTorch-layout filters are 9 cache lines.
    static let blockInputs = 16

    /// `lanes` floats `stride` apart (zeros past them).
    @inline(__always)
    private static func gather(_ p: UnsafePointer<Float>, stride s: Int, lanes: Int) -> WinogradLanes {
        if lanes == 8 {
            if s == 1 { return UnsafeRawPointer(p).loadUnaligned(as: WinogradLanes.self) }
            return WinogradLanes(p[0], p[s], p[2 * s], p[3 * s], p[4 * s], p[5 * s], p[6 * s], p[7 * s])
        }
        var value = WinogradLanes()
        for lane in 0 ..< lanes { value[lane] = p[lane * s] }
        return value
    }
}
