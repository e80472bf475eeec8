import Testing
@testable import Anvil

/// Every instruction set, for kernel tests that run each body: a test case per set, so the log
/// shows which bodies ran and which this CPU skipped.
let refInstructionSets = InstructionSet.allCases

/// Skips (cancels) the current test case when this CPU cannot run `isa`'s bodies, saying so in
/// the log, e.g. "skipped: CPU has no avx512 (avx2+fma+avx512f)".
func refRequireSupported(_ isa: InstructionSet) throws {
    guard !isa.isSupported else { return }
    let reason = "skipped: CPU has no \(isa) (\(isa.cpuFeatures.joined(separator: "+")))"
    print(reason)
    try Test.cancel(Comment(rawValue: reason))
}
