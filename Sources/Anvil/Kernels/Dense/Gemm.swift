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
        let product = Product(rows: rows, outputs: outputs, depth: depth, a: a, lda: lda, b: b, ldb: ldb, c: c, ldc: ldc,
                              bias: bias, activation: activation, instructionSet: .current)
        // Few rows (a 14×14 or 7×7 layer at batch 1): each thread takes a slice of the output
        // columns instead, as bands of so few rows scale poorly across threads.
        if rows < Self.columnSplitRows && outputs >= 64 {
            let groups = outputs / 16
            Compute.parallelFor(groups, costPerItem: 16 * rows * depth, Columns(product: product, groups: groups))
            return
        }
        // Bands of at least 16 rows keep each GEMM efficient.
        let bands = max(1, rows / 16)
        Compute.parallelFor(bands, costPerItem: 16 * outputs * depth, Band(product: product, bands: bands))
    }

    /// Below this many rows, threads split a GEMM's output columns rather than its rows.
    static let columnSplitRows = 256

    /// The operands of one product and how to compute any block of it.
    private struct Product {
        let rows: Int, outputs: Int, depth: Int
        let a: UnsafePointer<Float>, lda: Int
        let b: UnsafePointer<Float>, ldb: Int
        let c: UnsafeMutablePointer<Float>, ldc: Int
        let bias: UnsafePointer<Float>?
        let activation: ActivationFunction
        /// The activation's C body.
        let instructionSet: InstructionSet

        /// Computes `C[rows][columns]`: bias written first so OpenBLAS accumulates onto it
        /// (`beta = 1`), activation applied right after, while the block is in cache.
        func block(rows r: Range<Int>, columns k: Range<Int>) {
            guard !r.isEmpty, !k.isEmpty else { return }
            if let bias {
                for row in r { (c + row * ldc + k.lowerBound).update(from: bias + k.lowerBound, count: k.count) }
            }
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int32(r.count), Int32(k.count), Int32(depth),
                        1, a + r.lowerBound * lda, Int32(lda), b + k.lowerBound * ldb, Int32(ldb), bias == nil ? 0 : 1,
                        c + r.lowerBound * ldc + k.lowerBound, Int32(ldc))
            if activation != .none {
                if k.count == ldc {
                    activation.apply(c + r.lowerBound * ldc, count: r.count * ldc, instructionSet: instructionSet)
                } else {
                    for row in r { activation.apply(c + row * ldc + k.lowerBound, count: k.count, instructionSet: instructionSet) }
                }
            }
        }
    }

    /// All rows of part `range` of `groups` equal groups of output columns, as a parallel job.
    private struct Columns: ParallelJob {
        let product: Product
        let groups: Int

        func run(_ range: Range<Int>) {
            let outputs = product.outputs
            product.block(rows: 0 ..< product.rows,
                          columns: outputs * range.lowerBound / groups ..< outputs * range.upperBound / groups)
        }
    }

    /// All columns of part `range` of `bands` equal bands of rows, as a parallel job.
    private struct Band: ParallelJob {
        let product: Product
        let bands: Int

        func run(_ range: Range<Int>) {
            let rows = product.rows, outputs = product.outputs
            let first = rows * range.lowerBound / bands, last = rows * range.upperBound / bands
            // A thread's rows go through OpenBLAS in slices of about 512 KB of output, so the
            // bias written before and the activation applied after each slice's GEMM find its
            // output still in the L2 cache (over a whole 112×112×64 layer they would be two
            // more passes through memory).
            let slice = max(16, min(256, (128 << 10) / max(outputs, 1)))
            for start in stride(from: first, to: last, by: slice) {
                product.block(rows: start ..< min(last, start + slice), columns: 0 ..< outputs)
            }
        }
    }
}
