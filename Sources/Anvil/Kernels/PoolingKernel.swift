import CAnvilKernels

/// Max or average pooling over NHWC windows, vectorised across channels and parallel over
/// output rows. Padded cells never win a max; for the average they count only when asked.
/// Max pooling runs Anvil's C kernel (`anvil_max_pool_lines`, maxima kept in registers).
struct PoolingKernel: RangeKernel {
    enum Mode: Sendable { case max, average(countsPadding: Bool) }

    let geometry: WindowGeometry
    let channels: Int
    let mode: Mode
    /// The body of max pooling's C kernel (``InstructionSet/current`` when built); tests force
    /// each one the CPU runs.
    var instructionSet = InstructionSet.current

    func run(_ io: KernelIO) {
        let g = geometry
        let lines = io.batch * g.outputHeight
        Compute.parallelFor(lines, costPerItem: g.outputWidth * channels * g.kernelHeight * g.kernelWidth, KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let g = geometry
        let input = io.inputs[0]
        if case .max = mode {
            var shape = g.poolShape(channels: channels)
            anvil_max_pool_lines(instructionSet.cValue, &shape, input, io.output, Int32(range.lowerBound), Int32(range.upperBound))
            return
        }
        guard case .average(let countsPadding) = mode else { return }
        for line in range {
            let image = line / g.outputHeight
            let oy = line - image * g.outputHeight
            let imageBase = input + image * g.inputHeight * g.inputWidth * channels
            let y0 = oy * g.strideHeight - g.padTop
            for ox in 0 ..< g.outputWidth {
                let x0 = ox * g.strideWidth - g.padLeft
                let out = io.output + (line * g.outputWidth + ox) * channels
                out.update(repeating: 0, count: channels)
                var cells = 0
                forEachCell(y0: y0, x0: x0) { cell in
                    let source = imageBase + cell * channels
                    for c in 0 ..< channels { out[c] += source[c] }
                    cells += 1
                }
                let divisor = countsPadding ? paddedCells(y0: y0, x0: x0) : cells
                let scale = 1 / Float(max(divisor, 1))
                for c in 0 ..< channels { out[c] *= scale }
            }
        }
    }

    /// Calls `body` with the pixel index (`y * width + x`) of each window cell inside the input.
    @inline(__always)
    private func forEachCell(y0: Int, x0: Int, _ body: (Int) -> Void) {
        let g = geometry
        for ky in 0 ..< g.kernelHeight {
            let y = y0 + ky * g.dilationHeight
            if y < 0 || y >= g.inputHeight { continue }
            for kx in 0 ..< g.kernelWidth {
                let x = x0 + kx * g.dilationWidth
                if x < 0 || x >= g.inputWidth { continue }
                body(y * g.inputWidth + x)
            }
        }
    }

    /// Window cells inside the padded input (ONNX `count_include_pad`): cells beyond the
    /// explicit pads, which only ceil mode reaches, do not count.
    private func paddedCells(y0: Int, x0: Int) -> Int {
        let g = geometry
        var rows = 0, columns = 0
        for ky in 0 ..< g.kernelHeight {
            let y = y0 + ky * g.dilationHeight
            if y >= -g.padTop && y < g.inputHeight + g.padBottom { rows += 1 }
        }
        for kx in 0 ..< g.kernelWidth {
            let x = x0 + kx * g.dilationWidth
            if x >= -g.padLeft && x < g.inputWidth + g.padRight { columns += 1 }
        }
        return rows * columns
    }
}

extension WindowGeometry {
    /// The window as the C pooling kernels take it (`anvil_max_pool_lines`, `anvil_lp_pool_lines`).
    func poolShape(channels: Int) -> anvil_pool_shape {
        anvil_pool_shape(
            input_height: Int32(inputHeight), input_width: Int32(inputWidth), channels: Int32(channels),
            kernel_height: Int32(kernelHeight), kernel_width: Int32(kernelWidth),
            stride_height: Int32(strideHeight), stride_width: Int32(strideWidth),
            dilation_height: Int32(dilationHeight), dilation_width: Int32(dilationWidth),
            pad_top: Int32(padTop), pad_left: Int32(padLeft),
            output_height: Int32(outputHeight), output_width: Int32(outputWidth))
    }
}
