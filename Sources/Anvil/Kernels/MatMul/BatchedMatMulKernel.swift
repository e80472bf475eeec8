import COpenBLAS

/// The product of two computed tensors, matrix by matrix: for each batch item and each index
/// of the leading axes (broadcast as NumPy does), one GEMM of the last two axes through
/// OpenBLAS. The matrices, and bands of rows within a large one, are spread over the threads.
struct BatchedMatMulKernel: Kernel {
    /// Rows, columns and depth of each product.
    let rows: Int, columns: Int, depth: Int
    /// Whether the stored A is [depth, rows] (read transposed), and B [columns, depth].
    let transposeA: Bool, transposeB: Bool
    /// Element offsets into one item of A, B and the output, per product (row-major over the
    /// output's leading axes; a broadcast axis steps 0 through its input).
    let aOffsets: [Int], bOffsets: [Int]
    /// Elements per item of A and B.
    let aCount: Int, bCount: Int

    /// A kernel for A of axes `a` and B of `b` (after the batch axis; the last two are the
    /// matrices) whose leading axes broadcast to `leading`.
    init(a: [Int], b: [Int], leading: [Int], transposeA: Bool, transposeB: Bool) {
        rows = transposeA ? a[a.count - 1] : a[a.count - 2]
        depth = transposeA ? a[a.count - 2] : a[a.count - 1]
        columns = transposeB ? b[b.count - 2] : b[b.count - 1]
        self.transposeA = transposeA
        self.transposeB = transposeB
        aCount = a.reduce(1, *)
        bCount = b.reduce(1, *)
        func offsets(_ dims: [Int]) -> [Int] {
            Elementwise.broadcastPositions(Array(dims.dropLast(2)), to: leading).map { $0 * dims.suffix(2).reduce(1, *) }
        }
        aOffsets = offsets(a)
        bOffsets = offsets(b)
    }

    func run(_ io: KernelIO) {
        let products = io.batch * aOffsets.count
        // Bands of at least 64 rows: a product too small to split stays whole.
        let bands = max(1, min(rows / 64, 8))
        let job = Products(kernel: self, a: io.inputs[0], b: io.inputs[1], c: io.output, bands: bands)
        Compute.parallelFor(products * bands, costPerItem: max(1, rows / bands) * columns * depth, job)
    }

    private struct Products: ParallelJob {
        let kernel: BatchedMatMulKernel
        let a: UnsafePointer<Float>, b: UnsafePointer<Float>, c: UnsafeMutablePointer<Float>
        let bands: Int

        func run(_ range: Range<Int>) {
            let k = kernel
            let perItem = k.aOffsets.count
            for item in range {
                let product = item / bands, band = item % bands
                let n = product / perItem, p = product % perItem
                let first = k.rows * band / bands, last = k.rows * (band + 1) / bands
                guard last > first else { continue }
                let aBase = a + n * k.aCount + k.aOffsets[p] + (k.transposeA ? first : first * k.depth)
                let bBase = b + n * k.bCount + k.bOffsets[p]
                let cBase = c + (product * k.rows + first) * k.columns
                cblas_sgemm(CblasRowMajor, k.transposeA ? CblasTrans : CblasNoTrans, k.transposeB ? CblasTrans : CblasNoTrans,
                            Int32(last - first), Int32(k.columns), Int32(k.depth), 1,
                            aBase, Int32(k.transposeA ? k.rows : k.depth),
                            bBase, Int32(k.transposeB ? k.depth : k.columns), 0, cBase, Int32(k.columns))
            }
        }
    }
}
