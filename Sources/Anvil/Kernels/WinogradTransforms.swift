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
    /// G, α × 3, row-major: the filter transform, as a matrix (``transformFilter(_:_:_:_:)``
    /// applies it; the tests check one against the other).
    static var filterTransform: [Double] { get }
    /// Writes the α vectors `G v` of the 3 vectors `v` (one row or column of 3×3 filters).
    static func transformFilter(_ source: UnsafeRawPointer, _ sourceStride: Int,
                                _ target: UnsafeMutableRawPointer, _ targetStride: Int)
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

    @inline(__always)
    static func transformFilter(_ v: UnsafeRawPointer, _ s: Int, _ t: UnsafeMutableRawPointer, _ ts: Int) {
        let g0 = v.loadLanes(0, s), g1 = v.loadLanes(1, s), g2 = v.loadLanes(2, s)
        let outer = 0.5 * (g0 + g2), middle = 0.5 * g1
        t.storeLanes(g0, 0, ts)
        t.storeLanes(outer + middle, 1, ts)
        t.storeLanes(outer - middle, 2, ts)
        t.storeLanes(g2, 3, ts)
    }

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
/// fifteenths are all in `G`, applied once to the filters.
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

    @inline(__always)
    static func transformFilter(_ v: UnsafeRawPointer, _ s: Int, _ t: UnsafeMutableRawPointer, _ ts: Int) {
        let g0 = v.loadLanes(0, s), g1 = v.loadLanes(1, s), g2 = v.loadLanes(2, s)
        let outer = g0 + g2
        let third: Float = 1.0 / 3, fifteenth: Float = 1.0 / 15, fourFifteenths: Float = 4.0 / 15
        t.storeLanes(g0, 0, ts)
        t.storeLanes(third * (outer + g1), 1, ts)
        t.storeLanes(third * (g1 - outer), 2, ts)
        t.storeLanes(-fourFifteenths * (4 * g0 + 2 * g1 + g2), 3, ts)
        t.storeLanes(fifteenth * (g0 - 2 * g1 + 4 * g2), 4, ts)
        t.storeLanes(g2, 5, ts)
    }

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

