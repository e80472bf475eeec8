/// A ``MaxUnpooling`` layer's kernel: the whole batch's output zeroed, then each value written
/// at its position, read as ONNX's flat NCHW index into the batch at the unpooled size and
/// placed in the (possibly larger) channels-last output. One thread, in input order: a position
/// may point into another item, and the later of two values at one position must win.
struct MaxUnpoolingKernel: Kernel {
    /// Values per item of the pooled input.
    let inputCount: Int
    let channels: Int
    let unpooledHeight: Int
    let unpooledWidth: Int
    let outputHeight: Int
    let outputWidth: Int

    func run(_ io: KernelIO) {
        let output = io.outputBuffer
        output.update(repeating: 0)
        let values = io.inputs[0], positions = io.inputs[1]
        let plane = unpooledHeight * unpooledWidth
        let total = Double(io.batch) * Double(channels * plane)
        // Channels-last order visits each channel's plane row by row, as ONNX's order does.
        for k in 0 ..< io.batch * inputCount {
            let position = Double(positions[k])
            guard position >= 0, position < total, position == position.rounded(.towardZero) else { continue }
            let flat = Int(position)
            let item = flat / (channels * plane), c = (flat / plane) % channels
            let y = (flat % plane) / unpooledWidth, x = flat % unpooledWidth
            output[((item * outputHeight + y) * outputWidth + x) * channels + c] = values[k]
        }
    }
}
