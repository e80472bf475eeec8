import COpenBLAS

/// Matrix products on OpenBLAS with the bias and activation fused in, parallelised by
/// Anvil's own worker pool: OpenBLAS itself runs single-threaded (its threaded GEMM
/// allocates on every call and its threads would compete with Anvil's for the same cores),
/// and each worker computes a band of rows — bias written first so the GEMM accumulates onto
/// it (`beta = 1` skips OpenBLAS's separate pass over C), activation applied while the band
/// is still in cache.
enum Gemm {
    /// `C[rows × outputs] = act(A[rows × depth] · B[outputs × depth]ᵀ + bias)`, row-major,
    /// with leading dimensions `lda`, `ldb`, `ldc`.
    static func multiply(rows: Int, outputs: Int, depth: Int, a: UnsafePointer<Float>, lda: Int,
                         b: UnsafePointer<Float>, ldb: Int, c: UnsafeMutablePointer<Float>, ldc: Int,
                         bias: UnsafePointer<Float>? = nil, activation: ActivationFunction = .none) {
        // Few rows (a 14×14 or 7×7 layer at batch 1): each thread takes a slice of the output
        // columns instead, as two bands of ~100 rows each ran 1.7× faster than one band, not 2×.
        if rows < Self.columnSplitRows && outputs >= 64 {
            let groups = outputs / 16
            Compute.parallelFor(groups, costPerItem: 16 * rows * depth,
                                Columns(rows: rows, groups: groups, outputs: outputs, depth: depth, a: a, lda: lda, b: b,
                                        ldb: ldb, c: c, ldc: ldc, bias: bias, activation: activation))
            return
        }
        // Bands of at least 16 rows keep each GEMM efficient.
        let bands = max(1, rows / 16)
        Compute.parallelFor(bands, costPerItem: 16 * outputs * depth,
                            Band(rows: rows, bands: bands, outputs: outputs, depth: depth, a: a, lda: lda, b: b, ldb: ldb,
                                 c: c, ldc: ldc, bias: bias, activation: activation))
    }

    /// Below this many rows, threads split a GEMM's output columns rather than its rows.
    static let columnSplitRows = 256

    /// Output columns of part `range` of `groups` equal column groups, as a parallel job.
    private struct Columns: ParallelJob {
        let rows: Int, groups: Int, outputs: Int, depth: Int
        let a: UnsafePointer<Float>, lda: Int
        let b: UnsafePointer<Float>, ldb: Int
        let c: UnsafeMutablePointer<Float>, ldc: Int
        let bias: UnsafePointer<Float>?
        let activation: ActivationFunction

        func run(_ range: Range<Int>) {
            let first = outputs * range.lowerBound / groups, last = outputs * range.upperBound / groups
            let count = last - first
            guard count > 0 else { return }
            if let bias {
                for row in 0 ..< rows { (c + row * ldc + first).update(from: bias + first, count: count) }
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(rows), Int32(count), Int32(depth), 1, a, Int32(lda),
                        b + first * ldb, Int32(ldb), bias == nil ? 0 : 1, c + first, Int32(ldc))
            if activation != .none {
                for row in 0 ..< rows { activation.apply(c + row * ldc + first, count: count) }
            }
        }
    }

    private struct Band: ParallelJob {
        let rows: Int, bands: Int, outputs: Int, depth: Int
        let a: UnsafePointer<Float>, lda: Int
        let b: UnsafePointer<Float>, ldb: Int
        let c: UnsafeMutablePointer<Float>, ldc: Int
        let bias: UnsafePointer<Float>?
        let activation: ActivationFunction

        func run(_ range: Range<Int>) {
            let first = rows * range.lowerBound / bands, last = rows * range.upperBound / bands
            // A thread's rows go through OpenBLAS in slices of about 512 KB of output, so the
            // bias written before and the activation applied after each slice's GEMM find its
            // output still in the L2 cache (over a whole 112×112×64 layer they were two more
            // passes through memory).
            let slice = max(16, min(256, (128 << 10) / max(outputs, 1)))
            var start = first
            while start < last {
                let end = min(last, start + slice)
                if let bias {
                    for row in start ..< end { (c + row * ldc).update(from: bias, count: outputs) }
                }
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(end - start), Int32(outputs), Int32(depth),
                            1, a + start * lda, Int32(lda), b, Int32(ldb), bias == nil ? 0 : 1, c + start * ldc, Int32(ldc))
                if activation != .none {
                    for row in start ..< end { activation.apply(c + row * ldc, count: outputs) }
                }
                start = end
            }
        }
    }
}
