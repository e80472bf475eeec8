import Foundation

/// Eight channels, the width the Winograd tile transforms work at.
typealias WinogradLanes = SIMD8<Float>

/// A Winograd minimal-filtering algorithm F(m×m, 3×3) (Lavin & Gray, "Fast Algorithms for
/// Convolutional Neural Networks", 2016): an m×m output tile is `Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A`
/// for an (m+2)×(m+2) input tile `d` and a 3×3 filter `g`, which takes (m+2)² products per
/// input/output channel pair instead of 9m².
///
/// The 1-D transforms read `α = m + 2` vectors of 8 channels at `source`, `source + sourceStride`,
/// … (byte strides, any alignment) and write their results the same way at `target`; a 2-D
/// transform is a pass along rows and then one along columns.
protocol WinogradAlgorithm {
    /// m: outputs per tile side.
    static var outputTile: Int { get }
    /// α = m + 2: inputs per tile side.
    static var inputTile: Int { get }
    /// G, α × 3, row-major: the filter transform.
    static var filterTransform: [Double] { get }
    /// Writes the α vectors `Bᵀ v`.
    static func transformInput(_ source: UnsafeRawPointer, _ sourceStride: Int,
                               _ target: UnsafeMutableRawPointer, _ targetStride: Int)
    /// Writes the m vectors `Aᵀ v`.
    static func transformOutput(_ source: UnsafeRawPointer, _ sourceStride: Int,
                                _ target: UnsafeMutableRawPointer, _ targetStride: Int)
}

extension UnsafeRawPointer {
    /// The vector `index` strides of `stride` bytes past `self`.
    @inline(__always)
    func loadLanes(_ index: Int, _ stride: Int) -> WinogradLanes {
        loadUnaligned(fromByteOffset: index * stride, as: WinogradLanes.self)
    }
}

extension UnsafeMutableRawPointer {
    /// Stores `value` `index` strides of `stride` bytes past `self`.
    @inline(__always)
    func storeLanes(_ value: WinogradLanes, _ index: Int, _ stride: Int) {
        storeBytes(of: value, toByteOffset: index * stride, as: WinogradLanes.self)
    }
}

extension WinogradAlgorithm {
    /// α²: the element-wise products per tile, one GEMM each.
    static var positions: Int { inputTile * inputTile }
}

/// F(2×2, 3×3): interpolation points 0, 1, −1, ∞; 16 products for 4 outputs (2.25× fewer).
enum WinogradF2: WinogradAlgorithm {
    static var outputTile: Int { 2 }
    static var inputTile: Int { 4 }

    static let filterTransform: [Double] = [
        1, 0, 0,
        0.5, 0.5, 0.5,
        0.5, -0.5, 0.5,
        0, 0, 1,
    ]

    // Bᵀ = [1 0 −1 0; 0 1 1 0; 0 −1 1 0; 0 1 0 −1]
    @inline(__always)
    static func transformInput(_ v: UnsafeRawPointer, _ s: Int, _ t: UnsafeMutableRawPointer, _ ts: Int) {
        let d0 = v.loadLanes(0, s), d1 = v.loadLanes(1, s), d2 = v.loadLanes(2, s), d3 = v.loadLanes(3, s)
        t.storeLanes(d0 - d2, 0, ts)
        t.storeLanes(d1 + d2, 1, ts)
        t.storeLanes(d2 - d1, 2, ts)
        t.storeLanes(d1 - d3, 3, ts)
    }

    // Aᵀ = [1 1 1 0; 0 1 −1 −1]
    @inline(__always)
    static func transformOutput(_ v: UnsafeRawPointer, _ s: Int, _ t: UnsafeMutableRawPointer, _ ts: Int) {
        let m0 = v.loadLanes(0, s), m1 = v.loadLanes(1, s), m2 = v.loadLanes(2, s), m3 = v.loadLanes(3, s)
        t.storeLanes(m0 + m1 + m2, 0, ts)
        t.storeLanes(m1 - m2 - m3, 1, ts)
    }
}

/// F(4×4, 3×3): 36 products for 16 outputs (4× fewer). Interpolation points 0, 1, −1, ½, −2, ∞
/// rather than Lavin & Gray's 0, ±1, ±2, ∞: on VGG-like layers the float32 error is about 3.5×
/// smaller (Barabasz et al., "Error analysis and improving the accuracy of Winograd convolution
/// for deep neural networks", 2020). `Bᵀ` and `Aᵀ` keep dyadic entries; the thirds and
/// fifteenths are all in `G`, applied once in double precision to the filters.
enum WinogradF4: WinogradAlgorithm {
    static var outputTile: Int { 4 }
    static var inputTile: Int { 6 }

    static let filterTransform: [Double] = [
        1, 0, 0,
        1.0 / 3, 1.0 / 3, 1.0 / 3,
        -1.0 / 3, 1.0 / 3, -1.0 / 3,
        -16.0 / 15, -8.0 / 15, -4.0 / 15,
        1.0 / 15, -2.0 / 15, 4.0 / 15,
        0, 0, 1,
    ]

    // Bᵀ = [1 −3/2 −2 3/2 1 0; 0 −1 1/2 5/2 1 0; 0 1 −5/2 1/2 1 0;
    //       0 −2 −1 2 1 0; 0 1/2 −1 −1/2 1 0; 0 1 −3/2 −2 3/2 1]
    @inline(__always)
    static func transformInput(_ v: UnsafeRawPointer, _ s: Int, _ t: UnsafeMutableRawPointer, _ ts: Int) {
        let d0 = v.loadLanes(0, s), d1 = v.loadLanes(1, s), d2 = v.loadLanes(2, s)
        let d3 = v.loadLanes(3, s), d4 = v.loadLanes(4, s), d5 = v.loadLanes(5, s)
        let e = d4 - d2, f = d3 - d1
        t.storeLanes(d0 + (e - d2) + 1.5 * f, 0, ts)
        t.storeLanes((e + f) + 1.5 * (d2 + d3), 1, ts)
        t.storeLanes((e - f) - 1.5 * (d2 - d3), 2, ts)
        t.storeLanes(e + 2 * f, 3, ts)
        t.storeLanes(e - 0.5 * f, 4, ts)
        t.storeLanes(d5 + 1.5 * e - (f + d3), 5, ts)
    }

    // Aᵀ = [1 1 1 1 1 0; 0 1 −1 1/2 −2 0; 0 1 1 1/4 4 0; 0 1 −1 1/8 −8 1]
    @inline(__always)
    static func transformOutput(_ v: UnsafeRawPointer, _ s: Int, _ t: UnsafeMutableRawPointer, _ ts: Int) {
        let m0 = v.loadLanes(0, s), m1 = v.loadLanes(1, s), m2 = v.loadLanes(2, s)
        let m3 = v.loadLanes(3, s), m4 = v.loadLanes(4, s), m5 = v.loadLanes(5, s)
        let sum = m1 + m2, difference = m1 - m2
        t.storeLanes(m0 + sum + (m3 + m4), 0, ts)
        t.storeLanes(difference + (0.5 * m3 - 2 * m4), 1, ts)
        t.storeLanes(sum + (0.25 * m3 + 4 * m4), 2, ts)
        t.storeLanes(difference + (0.125 * m3 - 8 * m4) + m5, 3, ts)
    }
}

/// The transformed filters of a Winograd kernel: one allocation, 2 MB aligned and (on Linux)
/// advised for transparent huge pages. The filters are 16/9 (F(2×2)) or 4 (F(4×4)) times the
/// size of the weights — 235 MB for VGG16 in F(4×4) — and on the reference VM faulting them in
/// 4 KB pages took 3× as long as computing them; huge pages also spare the GEMMs TLB misses
/// when they stream the filters.
final class WinogradFilters: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<Float>
    let count: Int

    /// Uninitialised memory for `count` floats.
    init(count: Int) {
        let hugePage = 2 << 20
        let bytes = max(count, 1) * MemoryLayout<Float>.stride
        let rounded = bytes >= hugePage ? (bytes + hugePage - 1) / hugePage * hugePage : bytes
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, bytes >= hugePage ? hugePage : 64, rounded) == 0, let raw else {
            fatalError("cannot allocate \(rounded) bytes of Winograd filters")
        }
        #if os(Linux)
        if bytes >= hugePage { _ = madvise(raw, rounded, MADV_HUGEPAGE) }
        #endif
        self.pointer = raw.bindMemory(to: Float.self, capacity: max(count, 1))
        self.count = count
    }

    deinit { free(pointer) }
}

extension WinogradAlgorithm {
    /// Transforms every filter once: `U[p][i][o] = (G g Gᵀ)[p]` for the 3×3 filter `g` from
    /// input channel `i` to output channel `o`, in double precision. `weights` are Forge-layout
    /// `[outputs][3][3][inputs]`; the result is `positions` row-major `inputs × outputs`
    /// matrices, the B operands of the per-position GEMMs.
    ///
    /// Eight output channels at a time, so each of the α² matrices is written row after row,
    /// eight floats at a time (the weights are gathered instead, from a few cached lines).
    static func transformFilters(_ weights: UnsafePointer<Float>, outputs: Int, inputs: Int) -> WinogradFilters {
        let filters = WinogradFilters(count: positions * inputs * outputs)
        Compute.parallelFor(inputs, costPerItem: outputs * 8 * positions,
                            FilterTransform<Self>(weights: weights, u: filters.pointer, inputs: inputs, outputs: outputs))
        return filters
    }
}

/// ``WinogradAlgorithm/transformFilters(_:outputs:inputs:)`` for a range of input channels, as a parallel job.
private struct FilterTransform<A: WinogradAlgorithm>: ParallelJob {
    let weights: UnsafePointer<Float>
    let u: UnsafeMutablePointer<Float>
    let inputs: Int
    let outputs: Int

    func run(_ range: Range<Int>) {
        typealias Wide = SIMD8<Double>
        let alpha = A.inputTile
        let matrixStride = inputs * outputs
        let groups = (outputs + 7) / 8
        A.filterTransform.withUnsafeBufferPointer { g in
            withUnsafeTemporaryAllocation(of: Wide.self, capacity: 9 + 3 * alpha) { scratch in
                let filter = scratch.baseAddress!, left = filter + 9  // left = G g, α × 3
                for i in range {
                    for group in 0 ..< groups {
                        let first = group * 8
                        let lanes = min(8, outputs - first)
                        // Tap k of output channel first + lane is at taps[(lane * 9 + k) * inputs].
                        let taps = weights + first * 9 * inputs + i
                        for k in 0 ..< 9 {
                            var value = Wide()
                            for lane in 0 ..< lanes { value[lane] = Double(taps[(lane * 9 + k) * inputs]) }
                            filter[k] = value
                        }
                        for a in 0 ..< alpha {
                            for c in 0 ..< 3 {
                                left[a * 3 + c] = g[a * 3] * filter[c] + g[a * 3 + 1] * filter[3 + c] + g[a * 3 + 2] * filter[6 + c]
                            }
                        }
                        let destination = u + i * outputs + first
                        for a in 0 ..< alpha {
                            for b in 0 ..< alpha {
                                let value = SIMD8<Float>(left[a * 3] * g[b * 3] + left[a * 3 + 1] * g[b * 3 + 1] + left[a * 3 + 2] * g[b * 3 + 2])
                                let target = destination + (a * alpha + b) * matrixStride
                                if lanes == 8 {
                                    UnsafeMutableRawPointer(target).storeBytes(of: value, as: SIMD8<Float>.self)
                                } else {
                                    for lane in 0 ..< lanes { target[lane] = value[lane] }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
