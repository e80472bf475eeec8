import Foundation

/// A ``Reduce`` layer's kernel. Each item's axes are merged into alternating runs of kept and
/// reduced axes; an output value gathers its reduced values through the runs' strides. When the
/// innermost run is reduced, each output value reduces one contiguous span at a time; when it is
/// kept, each reduced position folds a contiguous row into a row of outputs. Accumulates in
/// float32, split over the worker pool by rows of outputs.
struct ReduceKernel: RangeKernel {
    let operation: ReduceOperation
    /// Extents of the merged runs, outermost first, and whether each is reduced.
    let extents: [Int]
    let isReduced: [Bool]
    /// Input strides of the runs.
    let strides: [Int]
    /// Values per item in and out.
    let inputCount: Int
    let outputCount: Int
    /// The values each output reduces.
    let reducedCount: Int
    /// The contiguous inner run (the last): its extent, and whether it is reduced.
    let innerExtent: Int
    let innerReduced: Bool
    /// The start of each reduced position's values relative to a row's first input (row-major
    /// over the reduced runs; a reduced inner run is the span each one starts).
    let offsets: [Int]

    init(operation: ReduceOperation, dimensions: [Int], reduced: Set<Int>) {
        self.operation = operation
        var runs: [(extent: Int, reduced: Bool)] = []
        for (index, extent) in dimensions.enumerated() where extent > 1 {
            let isReduced = reduced.contains(index + 1)
            if let last = runs.last, last.reduced == isReduced {
                runs[runs.count - 1].extent *= extent
            } else {
                runs.append((extent, isReduced))
            }
        }
        if runs.isEmpty { runs = [(1, false)] }
        extents = runs.map(\.extent)
        isReduced = runs.map(\.reduced)
        var stride = 1
        var strides = [Int](repeating: 0, count: runs.count)
        for k in runs.indices.reversed() {
            strides[k] = stride
            stride *= runs[k].extent
        }
        self.strides = strides
        inputCount = dimensions.reduce(1, *)
        reducedCount = zip(dimensions.indices, dimensions).filter { reduced.contains($0.0 + 1) }.reduce(1) { $0 * $1.1 }
        outputCount = inputCount / reducedCount
        innerExtent = runs[runs.count - 1].extent
        innerReduced = runs[runs.count - 1].reduced
        var offsets = [0]
        for k in runs.indices where runs[k].reduced && !(innerReduced && k == runs.count - 1) {
            offsets = offsets.flatMap { base in (0 ..< runs[k].extent).map { base + $0 * strides[k] } }
        }
        self.offsets = offsets
    }

    /// Output rows: single values when the inner run is reduced, rows of `innerExtent` otherwise.
    var rowsPerItem: Int { innerReduced ? outputCount : outputCount / innerExtent }

    func run(_ io: KernelIO) {
        Compute.parallelFor(io.batch * rowsPerItem, costPerItem: max(1, reducedCount * (innerReduced ? 1 : innerExtent)),
                            KernelRange(kernel: self, io: io))
    }

    /// Where output row `row` of an item starts in the item's input.
    private func rowStart(_ row: Int) -> Int {
        var rest = row, start = 0
        let last = extents.count - 1
        for k in extents.indices.reversed() where !isReduced[k] && !(k == last && !innerReduced) {
            start += (rest % extents[k]) * strides[k]
            rest /= extents[k]
        }
        return start
    }

    func run(_ range: Range<Int>, _ io: KernelIO) {
        let perItem = rowsPerItem
        for global in range {
            let item = global / perItem, row = global % perItem
            let input = io.inputs[0] + item * inputCount + rowStart(row)
            if innerReduced {
                let span = innerExtent
                var peak: Float = 0
                if operation == .logSumExp {
                    peak = -.infinity
                    for offset in offsets { for i in 0 ..< span { peak = max(peak, input[offset + i]) } }
                }
                var acc = start
                for offset in offsets {
                    let p = input + offset
                    for i in 0 ..< span { acc = combine(acc, p[i], peak) }
                }
                io.output[item * outputCount + row] = finish(acc, peak)
            } else if operation == .logSumExp {
                let out = io.output + item * outputCount + row * innerExtent
                for i in 0 ..< innerExtent {
                    var peak = -Float.infinity
                    for offset in offsets { peak = max(peak, input[offset + i]) }
                    var acc: Float = 0
                    for offset in offsets { acc = combine(acc, input[offset + i], peak) }
                    out[i] = finish(acc, peak)
                }
            } else {
                let width = innerExtent
                let out = io.output + item * outputCount + row * width
                for i in 0 ..< width { out[i] = start }
                for offset in offsets {
                    let p = input + offset
                    for i in 0 ..< width { out[i] = combine(out[i], p[i], 0) }
                }
                for i in 0 ..< width { out[i] = finish(out[i], 0) }
            }
        }
    }

    /// The accumulator's first value.
    private var start: Float {
        switch operation {
        case .maximum: -.infinity
        case .minimum: .infinity
        case .product: 1
        default: 0
        }
    }

    /// The accumulator after value `x` (`peak`: the largest value, for logSumExp).
    @inline(__always)
    private func combine(_ acc: Float, _ x: Float, _ peak: Float) -> Float {
        switch operation {
        case .sum, .mean: acc + x
        case .maximum: x > acc || x.isNaN ? x : acc
        case .minimum: x < acc || x.isNaN ? x : acc
        case .product: acc * x
        case .l1: acc + abs(x)
        case .l2, .sumSquare: acc + x * x
        case .logSumExp: acc + Foundation.exp(x - peak)
        }
    }

    /// The output from the accumulator.
    @inline(__always)
    private func finish(_ acc: Float, _ peak: Float) -> Float {
        switch operation {
        case .mean: acc / Float(reducedCount)
        case .l2: acc.squareRoot()
        case .logSumExp: peak + Foundation.log(acc)
        default: acc
        }
    }
}
