import CAnvilKernels

extension WinogradFilters {
    /// The taps of `weights` (read through `strides`, any ``WeightLayout``) for the
    /// ``WinogradFilterForm/taps`` form, laid out as ``WinogradFilterLayout/tapOffset(input:tap:output:)``
    /// says, each output channel's times `scale[o]`
    /// when given (the same product the transform makes of them), outputs padded with zeros to
    /// whole blocks of 16. The input channels are split among the threads.
    static func taps(_ weights: UnsafePointer<Float>, strides: FilterStrides, scale: UnsafePointer<Float>?,
                     outputs: Int, inputs: Int) -> WinogradFilters {
        let taps = WinogradFilters(layout: WinogradFilterLayout(inputs: inputs, outputs: outputs), form: .taps, positions: 0)
        Compute.parallelFor(inputs, costPerItem: outputs * 9,
                            TapPacking(weights: weights, strides: strides, scale: scale, taps: taps.writablePointer,
                                       layout: taps.layout))
        return taps
    }

    /// Whether these taps hold, bit for bit, what ``taps(_:strides:scale:outputs:inputs:)`` makes
    /// of input channel `input` (the sample a ``WeightCache`` entry is checked by before it is used).
    func tapsMatch(input: Int, weights: UnsafePointer<Float>, strides: FilterStrides, scale: UnsafePointer<Float>?) -> Bool {
        precondition(form == .taps)
        for tap in 0 ..< 9 {
            for output in 0 ..< layout.outputs {
                let expected = TapPacking.tap(weights, strides: strides, scale: scale, input: input, tap: tap, output: output)
                guard expected.bitPattern == pointer[layout.tapOffset(input: input, tap: tap, output: output)].bitPattern else {
                    return false
                }
            }
        }
        return true
    }
}

/// The packing of a range of input channels' taps, as a parallel job.
private struct TapPacking: ParallelJob {
    let weights: UnsafePointer<Float>
    let strides: FilterStrides
    let scale: UnsafePointer<Float>?
    let taps: UnsafeMutablePointer<Float>
    let layout: WinogradFilterLayout

    /// Tap `tap` (`3y + x`) from `input` to `output`, scaled.
    @inline(__always)
    static func tap(_ weights: UnsafePointer<Float>, strides s: FilterStrides, scale: UnsafePointer<Float>?, input: Int,
                    tap: Int, output: Int) -> Float {
        let value = weights[output * s.output + input * s.input + tap / 3 * s.row + tap % 3 * s.column]
        return scale.map { value * $0[output] } ?? value
    }

    func run(_ range: Range<Int>) {
        for input in range {
            for tap in 0 ..< 9 {
                for output in 0 ..< layout.outputs {
                    taps[layout.tapOffset(input: input, tap: tap, output: output)] =
                        Self.tap(weights, strides: strides, scale: scale, input: input, tap: tap, output: output)
                }
            }
        }
    }
}
