import Foundation

/// What `/proc/cpuinfo` says about the CPU, for benchmark headers: figures mean little without
/// the machine they came from.
struct CPUInfo {
    /// The model name, or "unknown" where `/proc/cpuinfo` has none (not Linux, some ARM CPUs).
    var model = "unknown"
    /// Every flag of the first CPU listed.
    var flags: [String] = []

    /// The vector-unit flags that decide which kernel bodies can run and how fast, in
    /// `/proc/cpuinfo`'s spelling and order.
    var vectorFlags: [String] {
        let interesting: Set = ["avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512dq", "avx512bw", "avx512vl",
                                "avx512cd", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16",
                                "amx_int8", "asimd", "asimddp", "sve", "sve2"]
        return flags.filter(interesting.contains)
    }

    /// The machine's CPU, read from `/proc/cpuinfo` (its first processor).
    static var current: CPUInfo {
        var info = CPUInfo()
        guard let text = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return info }
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "model name" where info.model == "unknown": info.model = parts[1]
            case "flags", "Features": if info.flags.isEmpty { info.flags = parts[1].split(separator: " ").map(String.init) }
            default: break
            }
        }
        return info
    }
}
