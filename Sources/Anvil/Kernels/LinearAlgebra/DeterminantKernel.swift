/// A ``Determinant`` layer's kernel: per matrix, Gaussian elimination with partial pivoting (LU)
/// in float64 on a copy in scratch, the determinant the product of the pivots with the sign of
/// the row swaps; matrices split over the worker pool.
struct DeterminantKernel: Kernel {
    /// M, the matrices' order.
    let order: Int
    /// Matrices per item.
    let matrices: Int

    /// Float64 scratch per participant, in floats (two per double).
    private var scratchPerThread: Int { 2 * order * order }

    func scratchCount(batch: Int) -> Int { scratchPerThread * Compute.maximumThreadCount }

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch * matrices, costPerItem: max(1, order * order * order / 3),
                            Job(kernel: self, io: io))
    }

    /// Matrices `range` (flat over the batch), in participant `participant`'s scratch.
    func run(_ range: Range<Int>, _ io: KernelIO, participant: Int) {
        let m = order, size = order * order
        let raw = UnsafeMutableRawPointer(io.scratch + participant * scratchPerThread)
        let lu = raw.bindMemory(to: Double.self, capacity: max(size, 1))
        for index in range {
            let input = io.inputs[0] + index * size
            for k in 0 ..< size { lu[k] = Double(input[k]) }
            var determinant = 1.0
            for column in 0 ..< m {
                // The largest magnitude at or below the diagonal keeps the elimination stable.
                var pivot = column, largest = abs(lu[column * m + column])
                for row in column + 1 ..< m where abs(lu[row * m + column]) > largest {
                    pivot = row
                    largest = abs(lu[row * m + column])
                }
                if largest == 0 {
                    determinant = 0
                    break
                }
                if pivot != column {
                    for k in 0 ..< m { (lu[pivot * m + k], lu[column * m + k]) = (lu[column * m + k], lu[pivot * m + k]) }
                    determinant = -determinant
                }
                let diagonal = lu[column * m + column]
                determinant *= diagonal
                for row in column + 1 ..< m {
                    let factor = lu[row * m + column] / diagonal
                    if factor == 0 { continue }
                    for k in column + 1 ..< m { lu[row * m + k] -= factor * lu[column * m + k] }
                }
            }
            io.output[index] = Float(determinant)
        }
    }

    /// The matrices as a parallel job, each participant in its own scratch.
    struct Job: ParallelJob {
        /// Matrices cost the same in ranges of any size.
        static var balancesParts: Bool { true }

        let kernel: DeterminantKernel
        let io: KernelIO

        func run(_ range: Range<Int>) { kernel.run(range, io, participant: 0) }

        func run(_ range: Range<Int>, participant: Int) { kernel.run(range, io, participant: participant) }
    }
}
