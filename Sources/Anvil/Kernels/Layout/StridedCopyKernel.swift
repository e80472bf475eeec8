import CAnvilKernels

/// One strided copy of a layout layer, for one image: axes (outermost first) with their steps
/// in the input and in the output, and where the copy starts in each. Offsets and steps are in
/// floats within one image; the kernel adds the batch axis.
struct StridedCopy: Sendable {
    /// Which input of the layer it reads.
    var input: Int
    /// The extent of each axis.
    var dims: [Int]
    /// The input step per index of each axis.
    var inputStrides: [Int]
    /// The output step per index of each axis.
    var outputStrides: [Int]
    /// The first input element.
    var inputOffset = 0
    /// The first output element.
    var outputOffset = 0

    /// Row-major steps of `dims` (the last axis contiguous).
    static func contiguousStrides(_ dims: [Int]) -> [Int] {
        var strides = [Int](repeating: 1, count: dims.count)
        for k in stride(from: dims.count - 2, through: 0, by: -1) { strides[k] = strides[k + 1] * dims[k + 1] }
        return strides
    }

    /// The same copy on fewer axes: axes of extent 1 dropped, neighbours that are contiguous in
    /// both the input and the output merged (a copy of contiguous data becomes one axis).
    func simplified() -> StridedCopy {
        var d: [Int] = [], i: [Int] = [], o: [Int] = []
        for k in dims.indices where dims[k] != 1 {
            if let last = d.indices.last, i[last] == inputStrides[k] * dims[k], o[last] == outputStrides[k] * dims[k] {
                d[last] *= dims[k]
                i[last] = inputStrides[k]
                o[last] = outputStrides[k]
            } else {
                d.append(dims[k]); i.append(inputStrides[k]); o.append(outputStrides[k])
            }
        }
        if d.isEmpty { d = [1]; i = [1]; o = [1] }
        return StridedCopy(input: input, dims: d, inputStrides: i, outputStrides: o,
                           inputOffset: inputOffset, outputOffset: outputOffset)
    }
}

/// The data movement of a layout layer: one or more strided copies per image, run by
/// Anvil's C kernel (`anvil_strided_copy`: contiguous runs copied with vector loads, strided
/// reads gathered), parallel over rows of the innermost axis.
struct StridedCopyKernel: Kernel {
    /// A copy as the C kernel takes it, axis 0 the batch (its extent set per run).
    struct Plan: @unchecked Sendable {
        var shape: anvil_copy_shape
        let input: Int
        let inputOffset: Int
        let outputOffset: Int
        /// Rows per image (every axis but the batch and the innermost).
        let rowsPerImage: Int
        let rowLength: Int
    }

    let plans: [Plan]
    /// The body of the C kernel (``InstructionSet/current`` when built); tests force each one.
    var instructionSet = InstructionSet.current

    /// A kernel running `copies` (each within one image) for inputs of `inputCounts` floats per
    /// image into an output of `outputCount` floats per image.
    init(copies: [StridedCopy], inputCounts: [Int], outputCount: Int) {
        plans = copies.flatMap { Self.withinAxisLimit($0.simplified()) }.map { copy in
            var shape = anvil_copy_shape()
            shape.rank = Int32(copy.dims.count + 1)
            withUnsafeMutableBytes(of: &shape.dims) { raw in
                let dims = raw.bindMemory(to: Int.self)
                dims[0] = 1
                for (k, d) in copy.dims.enumerated() { dims[k + 1] = d }
            }
            withUnsafeMutableBytes(of: &shape.in_strides) { raw in
                let s = raw.bindMemory(to: Int.self)
                s[0] = inputCounts[copy.input]
                for (k, d) in copy.inputStrides.enumerated() { s[k + 1] = d }
            }
            withUnsafeMutableBytes(of: &shape.out_strides) { raw in
                let s = raw.bindMemory(to: Int.self)
                s[0] = outputCount
                for (k, d) in copy.outputStrides.enumerated() { s[k + 1] = d }
            }
            return Plan(shape: shape, input: copy.input, inputOffset: copy.inputOffset, outputOffset: copy.outputOffset,
                        rowsPerImage: copy.dims.dropLast().reduce(1, *), rowLength: copy.dims.last ?? 1)
        }
    }

    /// `copy` as copies of at most `ANVIL_COPY_MAX_AXES - 1` axes each (the C kernel's limit
    /// beside the batch axis): the outermost axes are unrolled into one copy per index.
    static func withinAxisLimit(_ copy: StridedCopy) -> [StridedCopy] {
        let limit = Int(ANVIL_COPY_MAX_AXES) - 1
        guard copy.dims.count > limit else { return [copy] }
        var inner = copy
        inner.dims.removeFirst()
        inner.inputStrides.removeFirst()
        inner.outputStrides.removeFirst()
        return (0 ..< copy.dims[0]).flatMap { index -> [StridedCopy] in
            var part = inner
            part.inputOffset += index * copy.inputStrides[0]
            part.outputOffset += index * copy.outputStrides[0]
            return withinAxisLimit(part)
        }
    }

    func run(_ io: KernelIO) {
        for plan in plans {
            var shape = plan.shape
            shape.dims.0 = io.batch
            let job = Rows(shape: shape, input: io.inputs[plan.input] + plan.inputOffset,
                           output: io.output + plan.outputOffset, isa: instructionSet.cValue)
            Compute.parallelFor(io.batch * plan.rowsPerImage, costPerItem: plan.rowLength, job)
        }
    }

    /// Rows of one copy as a parallel job.
    struct Rows: ParallelJob {
        let shape: anvil_copy_shape
        let input: UnsafePointer<Float>
        let output: UnsafeMutablePointer<Float>
        let isa: anvil_isa

        func run(_ range: Range<Int>) {
            withUnsafePointer(to: shape) { shape in
                anvil_strided_copy(isa, shape, input, output, range.lowerBound, range.upperBound)
            }
        }
    }
}
