import CAnvilKernels
import Foundation
import Synchronization

/// An instruction set Anvil's C kernels have bodies for (`Sources/CAnvilKernels/<isa>/`).
///
/// Kernels run ``current`` unless told otherwise: the best set the CPU runs (``detected``),
/// or the one the `ANVIL_ISA` environment variable names. Tests and benchmarks can force any
/// set the CPU supports, per kernel or process-wide.
public enum InstructionSet: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Plain C built for the baseline target: runs on any CPU.
    case scalar
    /// x86-64 AVX2 with FMA (Haswell, Zen 1 and later).
    case avx2
    /// x86-64 AVX-512F on top of AVX2 + FMA (Skylake-SP, Zen 4 and later). Ops without an
    /// AVX-512 body of their own (the direct, depthwise and Winograd 3×3 convolutions, dense
    /// layers, max pooling and the activations have one) run their AVX2 one.
    case avx512

    /// The CPU features this set needs, as `/proc/cpuinfo` names them (for messages).
    public var cpuFeatures: [String] {
        switch self {
        case .scalar: return []
        case .avx2: return ["avx2", "fma"]
        case .avx512: return ["avx2", "fma", "avx512f"]
        }
    }

    /// Whether this CPU, and its OS, can run the set (the OS must save its registers too).
    public var isSupported: Bool { anvil_isa_supported(cValue) != 0 }

    /// The best set this CPU runs: what kernels use when nothing overrides it.
    public static var detected: InstructionSet { InstructionSet(anvil_isa_detected()) }

    /// Every set this CPU runs, scalar first.
    public static var supported: [InstructionSet] { allCases.filter(\.isSupported) }

    /// The same sets, spelled as `ANVIL_ISA` and `anvil bench --isa` take them.
    public var description: String { rawValue }

    /// `ANVIL_ISA` (`scalar`, `avx2` or `avx512`), read once, the first time a kernel or this
    /// property asks; nil when unset or empty. A value that names no set, or a set this CPU
    /// lacks, stops the process with a message saying so: a benchmark or test that asked for
    /// one body must not silently measure another.
    public static let override: InstructionSet? = {
        guard let value = Settings.current.instructionSet else { return nil }
        do {
            return try parse(value, source: "ANVIL_ISA")
        } catch {
            fatalError("\(error)")
        }
    }()

    /// The set named `value`, if this CPU runs it; otherwise an error naming `source` (the
    /// variable or option the name came from), the missing features and the sets that work.
    public static func parse(_ value: String, source: String) throws(AnvilError) -> InstructionSet {
        let choices = allCases.map(\.rawValue).joined(separator: ", ")
        guard let set = InstructionSet(rawValue: value.lowercased()) else {
            throw AnvilError(.invalidOption, "\(source)=\(value) names no instruction set (choices: \(choices))")
        }
        guard set.isSupported else {
            let runs = supported.map(\.rawValue).joined(separator: ", ")
            throw AnvilError(.invalidOption, "\(source)=\(value): this CPU lacks \(set) (it needs "
                             + "\(set.cpuFeatures.joined(separator: "+")), enabled by the OS); it runs \(runs)")
        }
        return set
    }

    /// The set chosen so far (nil until ``current`` is first read or set).
    private static let chosen = TracedMutex<InstructionSet?>(nil)

    /// The set kernels built from now on run: ``override`` when `ANVIL_ISA` is set, else
    /// ``detected``, unless set here (as `anvil bench --isa` does before compiling its model).
    /// Kernels keep the set they were built with. Setting a set the CPU lacks is a
    /// programming error (check ``isSupported`` first).
    public static var current: InstructionSet {
        get {
            chosen.withLock { value in
                if let value { return value }
                let initial = override ?? detected
                value = initial
                return initial
            }
        }
        set {
            precondition(newValue.isSupported, "this CPU cannot run \(newValue) kernels")
            chosen.withLock { $0 = newValue }
        }
    }

    /// The C value of the set.
    var cValue: anvil_isa {
        switch self {
        case .scalar: return ANVIL_ISA_SCALAR
        case .avx2: return ANVIL_ISA_AVX2
        case .avx512: return ANVIL_ISA_AVX512
        }
    }

    /// The set of a C value.
    init(_ value: anvil_isa) {
        switch value {
        case ANVIL_ISA_AVX512: self = .avx512
        case ANVIL_ISA_AVX2: self = .avx2
        default: self = .scalar
        }
    }
}
