import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Every instruction set, for kernel tests that run each body: a test case per set, so the log
/// shows which bodies ran and which this CPU skipped.
let refInstructionSets = InstructionSet.allCases

/// How many values of `a` and `b` differ in their bits (NaN patterns included; all of them when
/// the counts differ): for bodies that must agree bit for bit.
func refBitDifferences(_ a: [Float], _ b: [Float]) -> Int {
    guard a.count == b.count else { return max(a.count, b.count) }
    return zip(a, b).filter { $0.bitPattern != $1.bitPattern }.count
}

/// Skips (cancels) the current test case when this CPU cannot run `isa`'s bodies, saying so in
/// the log, e.g. "skipped: CPU has no avx512 (avx2+fma+avx512f)".
func refRequireSupported(_ isa: InstructionSet) throws {
    guard !isa.isSupported else { return }
    let reason = "skipped: CPU has no \(isa) (\(isa.cpuFeatures.joined(separator: "+")))"
    print(reason)
    try Test.cancel(Comment(rawValue: reason))
}

/// Runs one kernel directly on `input` (`batch` images of `inputShape`, NHWC): NaN-filled
/// output and scratch, so anything the kernel fails to write shows.
func refRunKernel(_ kernel: any Kernel, input: [Float], batch: Int, inputShape: Shape, outputShape: Shape) -> [Float] {
    var output = [Float](repeating: .nan, count: batch * outputShape.count)
    var scratch = [Float](repeating: .nan, count: max(1, kernel.scratchCount(batch: batch)))
    input.withUnsafeBufferPointer { x in
        output.withUnsafeMutableBufferPointer { y in
            scratch.withUnsafeMutableBufferPointer { s in
                kernel.run(KernelIO(inputs: [x.baseAddress!], output: y.baseAddress!, scratch: s.baseAddress!, batch: batch,
                                    inputShapes: [inputShape], outputShape: outputShape))
            }
        }
    }
    return output
}

/// The kernel `layer` builds for one input of `input`'s shape, weights in Forge layout (all
/// 0.01): what `compile` would choose for it.
func refChosenKernel(_ layer: any Layer, input: Shape) throws -> any Kernel {
    var parameters: [ParameterKind: ParameterData] = [:]
    for spec in layer.parameters(for: [input]) {
        parameters[spec.kind] = ParameterData([Float](repeating: 0.01, count: spec.count))
    }
    return try layer.makeKernel(KernelContext(layerName: "probe", inputShapes: [input],
                                              outputShape: try layer.outputShape(for: [input]), layout: .forge,
                                              parameters: parameters))
}
