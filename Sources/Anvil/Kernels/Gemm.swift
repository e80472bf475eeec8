import COpenBLAS

/// Matrix products on OpenBLAS, parallelised by Anvil's own worker pool: OpenBLAS itself runs
/// single-threaded (its threaded GEMM allocates on every call and its threads would compete
/// with Anvil's for the same cores), and each worker multiplies a band of rows.
enum Gemm {
    /// `C[rows × outputs] = A[rows × depth] · B[outputs × depth]ᵀ`, row-major, with leading
    /// dimensions `lda`, `ldb`, `ldc`.
    static func multiply(rows: Int, outputs: Int, depth: Int, a: UnsafePointer<Float>, lda: Int,
                         b: UnsafePointer<Float>, ldb: Int, c: UnsafeMutablePointer<Float>, ldc: Int) {
        // Bands of at least 16 rows keep each GEMM efficient.
        let bands = max(1, rows / 16)
        Compute.parallelFor(bands, costPerItem: 16 * outputs * depth,
                            Band(rows: rows, bands: bands, outputs: outputs, depth: depth, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc))
    }

    /// `y[outputs] = W[outputs × depth] · x[depth]`, split over output rows.
    static func multiply(outputs: Int, depth: Int, w: UnsafePointer<Float>, x: UnsafePointer<Float>, y: UnsafeMutablePointer<Float>) {
        Compute.parallelFor(outputs, costPerItem: depth, MatrixVector(depth: depth, w: w, x: x, y: y))
    }

    private struct Band: ParallelJob {
        let rows: Int, bands: Int, outputs: Int, depth: Int
        let a: UnsafePointer<Float>, lda: Int
        let b: UnsafePointer<Float>, ldb: Int
        let c: UnsafeMutablePointer<Float>, ldc: Int

        func run(_ range: Range<Int>) {
            let first = rows * range.lowerBound / bands, last = rows * range.upperBound / bands
            guard last > first else { return }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(last - first), Int32(outputs), Int32(depth),
                        1, a + first * lda, Int32(lda), b, Int32(ldb), 0, c + first * ldc, Int32(ldc))
        }
    }

    private struct MatrixVector: ParallelJob {
        let depth: Int
        let w: UnsafePointer<Float>, x: UnsafePointer<Float>
        let y: UnsafeMutablePointer<Float>

        func run(_ range: Range<Int>) {
            cblas_sgemv(CblasRowMajor, CblasNoTrans, Int32(range.count), Int32(depth), 1, w + range.lowerBound * depth,
                        Int32(depth), x, 1, 0, y + range.lowerBound, 1)
        }
    }
}
