/// Eight channels, the width the Winograd tile transforms work at.
typealias WinogradLanes = SIMD8<Float>

/// A Winograd minimal-filtering algorithm F(m×m, 3×3) (Lavin & Gray, "Fast Algorithms for
/// Convolutional Neural Networks", 2016): an m×m output tile is `Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A`
/// for an (m+2)×(m+2) input tile `d` and a 3×3 filter `g`, which takes (m+2)² products per
/// input/output channel pair instead of 9m².
///
/// The 1-D transforms work in place on `α = m + 2` vectors `v[0], v[stride], …` of 8 channels;
/// a 2-D transform is a pass along rows (stride 1) and then along columns (stride α).
protocol WinogradAlgorithm {
    /// m: outputs per tile side.
    static var outputTile: Int { get }
    /// α = m + 2: inputs per tile side.
    static var inputTile: Int { get }
    /// G, α × 3, row-major: the filter transform.
    static var filterTransform: [Double] { get }
    /// Replaces the α vectors with `Bᵀ v`.
    static func transformInput(_ v: UnsafeMutablePointer<WinogradLanes>, stride: Int)
    /// Replaces the first m of the α vectors with `Aᵀ v`.
    static func transformOutput(_ v: UnsafeMutablePointer<WinogradLanes>, stride: Int)
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
    static func transformInput(_ v: UnsafeMutablePointer<WinogradLanes>, stride s: Int) {
        let d0 = v[0], d1 = v[s], d2 = v[2 * s], d3 = v[3 * s]
        v[0] = d0 - d2
        v[s] = d1 + d2
        v[2 * s] = d2 - d1
        v[3 * s] = d1 - d3
    }

    // Aᵀ = [1 1 1 0; 0 1 −1 −1]
    @inline(__always)
    static func transformOutput(_ v: UnsafeMutablePointer<WinogradLanes>, stride s: Int) {
        let m0 = v[0], m1 = v[s], m2 = v[2 * s], m3 = v[3 * s]
        v[0] = m0 + m1 + m2
        v[s] = m1 - m2 - m3
    }
}

/// F(4×4, 3×3): interpolation points 0, 1, −1, 2, −2, ∞; 36 products for 16 outputs (4× fewer).
enum WinogradF4: WinogradAlgorithm {
    static var outputTile: Int { 4 }
    static var inputTile: Int { 6 }

    static let filterTransform: [Double] = [
        1.0 / 4, 0, 0,
        -1.0 / 6, -1.0 / 6, -1.0 / 6,
        -1.0 / 6, 1.0 / 6, -1.0 / 6,
        1.0 / 24, 1.0 / 12, 1.0 / 6,
        1.0 / 24, -1.0 / 12, 1.0 / 6,
        0, 0, 1,
    ]

    // Bᵀ = [4 0 −5 0 1 0; 0 −4 −4 1 1 0; 0 4 −4 −1 1 0; 0 −2 −1 2 1 0; 0 2 −1 −2 1 0; 0 4 0 −5 0 1]
    @inline(__always)
    static func transformInput(_ v: UnsafeMutablePointer<WinogradLanes>, stride s: Int) {
        let d0 = v[0], d1 = v[s], d2 = v[2 * s], d3 = v[3 * s], d4 = v[4 * s], d5 = v[5 * s]
        let four: WinogradLanes = .init(repeating: 4), five: WinogradLanes = .init(repeating: 5)
        let evenA = d4 - four * d2, oddA = four * d1 - d3
        let evenB = d4 - d2, oddB = (d1 - d3) + (d1 - d3)
        v[0] = four * d0 - five * d2 + d4
        v[s] = evenA - oddA
        v[2 * s] = evenA + oddA
        v[3 * s] = evenB - oddB
        v[4 * s] = evenB + oddB
        v[5 * s] = four * d1 - five * d3 + d5
    }

    // Aᵀ = [1 1 1 1 1 0; 0 1 −1 2 −2 0; 0 1 1 4 4 0; 0 1 −1 8 −8 1]
    @inline(__always)
    static func transformOutput(_ v: UnsafeMutablePointer<WinogradLanes>, stride s: Int) {
        let m0 = v[0], m1 = v[s], m2 = v[2 * s], m3 = v[3 * s], m4 = v[4 * s], m5 = v[5 * s]
        let sum12 = m1 + m2, difference12 = m1 - m2
        let sum34 = m3 + m4, difference34 = m3 - m4
        v[0] = m0 + sum12 + sum34
        v[s] = difference12 + 2 * difference34
        v[2 * s] = sum12 + 4 * sum34
        v[3 * s] = difference12 + 8 * difference34 + m5
    }
}

extension WinogradAlgorithm {
    /// Transforms every filter once: `U[p][i][o] = (G g Gᵀ)[p]` for the 3×3 filter `g` from
    /// input channel `i` to output channel `o`, computed in double precision. `weights` are
    /// Forge-layout `[outputs][3][3][inputs]`; the result is `positions` row-major
    /// `inputs × outputs` matrices, the B operands of the per-position GEMMs.
    static func transformFilters(_ weights: UnsafePointer<Float>, outputs: Int, inputs: Int) -> FloatBox {
        let alpha = inputTile
        let box = FloatBox(count: positions * inputs * outputs)
        let u = box.pointer
        let g = filterTransform
        let matrixStride = inputs * outputs
        g.withUnsafeBufferPointer { g in
            Compute.parallelFor(inputs, costPerItem: outputs * 64 * positions) { range in
                withUnsafeTemporaryAllocation(of: Double.self, capacity: 9 + 3 * alpha) { scratch in
                    let filter = scratch.baseAddress!, left = filter + 9  // left = G g, α × 3
                    for i in range {
                        for o in 0 ..< outputs {
                            for k in 0 ..< 9 { filter[k] = Double(weights[(o * 9 + k) * inputs + i]) }
                            for a in 0 ..< alpha {
                                for c in 0 ..< 3 {
                                    left[a * 3 + c] = g[a * 3] * filter[c] + g[a * 3 + 1] * filter[3 + c] + g[a * 3 + 2] * filter[6 + c]
                                }
                            }
                            let destination = u + i * outputs + o
                            for a in 0 ..< alpha {
                                for b in 0 ..< alpha {
                                    let value = left[a * 3] * g[b * 3] + left[a * 3 + 1] * g[b * 3 + 1] + left[a * 3 + 2] * g[b * 3 + 2]
                                    destination[(a * alpha + b) * matrixStride] = Float(value)
                                }
                            }
                        }
                    }
                }
            }
        }
        return box
    }
}
