import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// The instruction-set value: what the CPU runs, what the kernels use, how names are checked.
@Suite("Instruction sets")
struct InstructionSetTests {
    @Test("The detected set is supported, is the best supported one, and scalar always runs")
    func detection() {
        #expect(InstructionSet.scalar.isSupported)
        #expect(InstructionSet.detected.isSupported)
        #expect(InstructionSet.supported.first == .scalar)
        #expect(InstructionSet.supported.last == InstructionSet.detected)
        // AVX-512 bodies fall back to AVX2 ones, so a CPU that runs AVX-512 must run AVX2.
        if InstructionSet.avx512.isSupported { #expect(InstructionSet.avx2.isSupported) }
        #expect(InstructionSet.current.isSupported)
        if InstructionSet.override == nil { #expect(InstructionSet.current == InstructionSet.detected) }
    }

    @Test("Names parse when the CPU runs them; unknown or unsupported ones are errors that say why")
    func parsing() throws {
        for isa in InstructionSet.supported {
            #expect(try InstructionSet.parse(isa.rawValue.uppercased(), source: "ANVIL_ISA") == isa)
        }
        #expect(throws: AnvilError.self) { try InstructionSet.parse("sse9", source: "--isa") }
        for isa in InstructionSet.allCases where !isa.isSupported {
            do {
                _ = try InstructionSet.parse(isa.rawValue, source: "--isa")
                Issue.record("\(isa) parsed on a CPU without it")
            } catch {
                #expect(error.message.contains("lacks \(isa) (it needs \(isa.cpuFeatures.joined(separator: "+"))"), "\(error)")
            }
        }
    }
}
