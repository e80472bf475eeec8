/// The buffers one kernel run reads and writes; all are `batch × shape` channels-last.
public struct KernelIO {
    /// One pointer per input, in the order the layer was applied to its inputs.
    public let inputs: [UnsafePointer<Float>]
    /// The output buffer (`batch * outputShape.count` floats); it aliases no input but the
    /// kernel's ``Kernel/inPlaceInput``, and that one only when the buffer plan shares it.
    public let output: UnsafeMutablePointer<Float>
    /// Scratch memory of at least `scratchCount(batch:)` floats.
    public let scratch: UnsafeMutablePointer<Float>
    /// Images in the batch.
    public let batch: Int
    /// The shape of each input image.
    public let inputShapes: [Shape]
    /// The shape of each output image.
    public let outputShape: Shape

    /// Input `index` as a buffer of `batch * inputShapes[index].count` floats.
    public func input(_ index: Int) -> UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: inputs[index], count: batch * inputShapes[index].count)
    }

    /// The output as a buffer of `batch * outputShape.count` floats.
    public var outputBuffer: UnsafeMutableBufferPointer<Float> {
        UnsafeMutableBufferPointer(start: output, count: batch * outputShape.count)
    }
}
