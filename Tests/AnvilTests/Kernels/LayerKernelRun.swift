@testable import Anvil

/// Runs `layer`'s kernel on `batch` items of each input (`values[i]` holds input i, of shape
/// `shapes[i]`) with `parameters` (in `layout`), and returns the output tensor (output and the
/// kernel's scratch NaN-filled before the run, so a value the kernel leaves unwritten shows).
func runLayerKernel(_ layer: any Layer, _ values: [[Float]], batch: Int, shapes: [Shape],
                    parameters: [ParameterKind: ParameterData] = [:], layout: WeightLayout = .forge) throws -> Tensor {
    let output = try layer.outputShape(for: shapes)
    let kernel = try layer.makeKernel(KernelContext(layerName: "k", inputShapes: shapes, outputShape: output,
                                                    layout: layout, parameters: parameters))
    let buffers = values.map { input in
        let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: max(1, input.count))
        _ = buffer.initialize(from: input)
        return buffer
    }
    defer { buffers.forEach { $0.deallocate() } }
    var result = [Float](repeating: .nan, count: batch * output.count)
    var scratch = [Float](repeating: .nan, count: max(1, kernel.scratchCount(batch: batch)))
    result.withUnsafeMutableBufferPointer { y in
        scratch.withUnsafeMutableBufferPointer { s in
            kernel.run(KernelIO(inputs: buffers.map { UnsafePointer($0.baseAddress!) }, output: y.baseAddress!, scratch: s.baseAddress!,
                                batch: batch, inputShapes: shapes, outputShape: output))
        }
    }
    return try Tensor(batch: batch, shape: output, values: result)
}
