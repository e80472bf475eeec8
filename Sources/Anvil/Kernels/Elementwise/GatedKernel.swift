import CAnvilKernels

/// A squeeze-and-excitation gate applied by the kernel that computes the gate: `inner` (the
/// gate's producer, its epilogue complete) writes the small gate tensor — `1 × 1 × C` per image
/// — into scratch, then the feature map (the step's last input) is multiplied by it, broadcast,
/// straight into the step's output, and the multiply's activation applied. The gate never gets
/// a buffer or a step of its own.
struct GatedKernel: RangeKernel {
    let inner: any Kernel
    /// One image of the gate.
    let gateShape: Shape
    /// `map × gate` broadcast to the output (`anvil_binary`'s strides; the map is operand `a`).
    let shape: anvil_binary_shape
    let activation: ActivationFunction
    var instructionSet = InstructionSet.current

    init(inner: any Kernel, gate: Shape, map: Shape, activation: ActivationFunction) throws {
        self.inner = inner
        gateShape = gate
        shape = try ElementwiseKernel.shape(output: map, map, map.count, gate, gate.count)
        self.activation = activation
    }

    /// The gate's floats, rounded up to 16 so the inner kernel's scratch stays 64-byte aligned.
    private func gateFloats(batch: Int) -> Int { (batch * gateShape.count + 15) / 16 * 16 }

    func scratchCount(batch: Int) -> Int { gateFloats(batch: batch) + inner.scratchCount(batch: batch) }

    func run(_ io: KernelIO) {
        // The inner kernel reads only its own inputs (the first ones); `io.inputs` goes as it is,
        // as a shorter copy would allocate on every run.
        let gateFloats = gateFloats(batch: io.batch)
        inner.run(KernelIO(inputs: io.inputs, output: io.scratch, scratch: io.scratch + gateFloats, batch: io.batch,
                           inputShapes: io.inputShapes, outputShape: gateShape))
        Compute.parallelFor(io.batch * io.outputShape.count, costPerItem: activation == .none ? 1 : 5,
                            KernelRange(kernel: self, io: io))
    }

    /// Output elements `range` (flat over the batch): map × gate, then the activation.
    func run(_ range: Range<Int>, _ io: KernelIO) {
        var s = shape
        anvil_binary(instructionSet.cValue, ANVIL_BINARY_MULTIPLY, &s, io.inputs[io.inputs.count - 1], io.scratch,
                     io.output, range.lowerBound, range.upperBound)
        activation.apply(io.output + range.lowerBound, count: range.count, instructionSet: instructionSet)
    }
}
