/// A ``FloatRounding`` layer's kernel: each element rounded to the format.
struct FloatRoundingKernel: ElementMapKernel {
    /// The format rounded to.
    let format: FloatFormat
    /// Elements per item.
    let count: Int

    /// Rounds `count` elements.
    func map(_ input: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int) {
        // One loop per format, so the compiler sees a constant format inside each.
        switch format {
        case .float16: for i in 0 ..< count { output[i] = FloatFormat.float16.rounding(input[i]) }
        case .bfloat16: for i in 0 ..< count { output[i] = FloatFormat.bfloat16.rounding(input[i]) }
        }
    }
}
