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
    func lanes(_ index: Int, _ stride: Int) -> WinogradLanes {
        loadUnaligned(fromByteOffset: index * stride, as: WinogradLanes.self)
    }
}

extension UnsafeMutableRawPointer {
    /// Stores `value` `index` strides of `stride` bytes past `self`.
    @inline(__always)
    func store(_ value: WinogradLanes, _ index: Int, _ stride: Int) {
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
        let d0 = v.lanes(0, s), d1 = v.lanes(1, s), d2 = v.lanes(2, s), d3 = v.lanes(3, s)
        t.store(d0 - d2, 0, ts)
        t.store(d1 + d2, 1, ts)
        t.store(d2 - d1, 2, ts)
        t.store(d1 - d3, 3, ts)
    }

    // Aᵀ = [1 1 1 0; 0 1 −1 −1]
    @inline(__always)
    static func transformOutput(_ v: UnsafeRawPointer, _ s: Int, _ t: UnsafeMutableRawPointer, _ ts: Int) {
        let m0 = v.lanes(0, s), m1 = v.lanes(1, s), m2 = v.lanes(2, s), m3 = v.lanes(3, s)
        t.store(m0 + m1 + m2, 0, ts)
        t.store(m1 - m2 - m3, 1, ts)
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
        let d0 = v.lanes(0, s), d1 = v.lanes(1, s), d2 = v.lanes(2, s)
        let d3 = v.lanes(3, s), d4 = v.lanes(4, s), d5 = v.lanes(5, s)
        let e = d4 - d2, f = d3 - d1
        t.store(d0 + (e - d2) + 1.5 * f, 0, ts)
        t.store((e + f) + 1.5 * (d2 + d3), 1, ts)
        t.store((e - f) - 1.5 * (d2 - d3), 2, ts)
        t.store(e + 2 * f, 3, ts)
        t.store(e - 0.5 * f, 4, ts)
        t.store(d5 + 1.5 * e - (f + d3), 5, ts)
    }

    // Aᵀ = [1 1 1 1 1 0; 0 1 −1 1/2 −2 0; 0 1 1 1/4 4 0; 0 1 −1 1/8 −8 1]
    @inline(__always)
    static func transformOutput(_ v: UnsafeRawPointer, _ s: Int, _ t: UnsafeMutableRawPointer, _ ts: Int) {
        let m0 = v.lanes(0, s), m1 = v.lanes(1, s), m2 = v.lanes(2, s)
        let m3 = v.lanes(3, s), m4 = v.lanes(4, s), m5 = v.lanes(5, s)
        let sum = m1 + m2, difference = m1 - m2
        t.store(m0 + sum + (m3 + m4), 0, ts)
        t.store(difference + (0.5 * m3 - 2 * m4), 1, ts)
        t.store(sum + (0.25 * m3 + 4 * m4), 2, ts)
        t.store(difference + (0.125 * m3 - 8 * m4) + m5, 3, ts)
    }
}

extension WinogradAlgorithm {
    /// Transforms every filter once: `U[p][i][o] = (G g Gᵀ)[p]` for the 3×3 filter `g` from
    /// input channel `i` to output channel `o`, computed in double precision. `weights` are
    /// Forge-layout `[outputs][3][3][inputs]`; the result is `positions` row-major
    /// `inputs × outputs` matrices, the B operands of the per-position GEMMs.
    ///
    /// Eight input channels are transformed at once (contiguous loads); the results of sixteen
    /// output channels are staged and written out as rows of sixteen, since writing them one
    /// by one would stride by `outputs` floats across 288 rows and thrash the L1 cache.
    static func transformFilters(_ weights: UnsafePointer<Float>, outputs: Int, inputs: Int) -> FloatBox {
        typealias Wide = SIMD8<Double>
        let alpha = inputTile, count = positions
        let chunk = 16
        let box = FloatBox(count: count * inputs * outputs)
        let u = box.pointer
        let g = filterTransform
        let groups = (inputs + 7) / 8
        g.withUnsafeBufferPointer { g in
            Compute.parallelFor(groups, costPerItem: outputs * 8 * 64 * count) { range in
                withUnsafeTemporaryAllocation(of: Wide.self, capacity: 9 + 3 * alpha) { scratch in
                    withUnsafeTemporaryAllocation(of: SIMD8<Float>.self, capacity: count * chunk) { stage in
                        let filter = scratch.baseAddress!, left = filter + 9  // left = G g, α × 3
                        let staged = stage.baseAddress!  // [p][o − o0] vectors over the input channels
                        for group in range {
                            let first = group * 8
                            let lanes = min(8, inputs - first)
                            var o0 = 0
                            while o0 < outputs {
                                let width = min(chunk, outputs - o0)
                                for local in 0 ..< width {
                                    let taps = weights + (o0 + local) * 9 * inputs + first
                                    for k in 0 ..< 9 {
                                        if lanes == 8 {
                                            filter[k] = Wide(UnsafeRawPointer(taps + k * inputs).loadUnaligned(as: SIMD8<Float>.self))
                                        } else {
                                            var value = Wide()
                                            for lane in 0 ..< lanes { value[lane] = Double(taps[k * inputs + lane]) }
                                            filter[k] = value
                                        }
                                    }
                                    for a in 0 ..< alpha {
                                        for c in 0 ..< 3 {
                                            left[a * 3 + c] = g[a * 3] * filter[c] + g[a * 3 + 1] * filter[3 + c] + g[a * 3 + 2] * filter[6 + c]
                                        }
                                    }
                                    for a in 0 ..< alpha {
                                        for b in 0 ..< alpha {
                                            let value = left[a * 3] * g[b * 3] + left[a * 3 + 1] * g[b * 3 + 1] + left[a * 3 + 2] * g[b * 3 + 2]
                                            staged[(a * alpha + b) * chunk + local] = SIMD8<Float>(value)
                                        }
                                    }
                                }
                                for p in 0 ..< count {
                                    for lane in 0 ..< lanes {
                                        let row = u + (p * inputs + first + lane) * outputs + o0
                                        for local in 0 ..< width { row[local] = staged[p * chunk + local][lane] }
                                    }
                                }
                                o0 += width
                            }
                        }
                    }
                }
            }
        }
        return box
    }
}
