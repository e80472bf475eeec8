import Foundation
import Testing
import Anvil

/// `Settings`: the `ANVIL_*` variables, read in one place.
@Suite struct SettingsTests {
    @Test func everyVariableIsRead() {
        let settings = Settings(environment: [
            "ANVIL_ISA": "avx2", "ANVIL_CONVOLUTION": "direct", "ANVIL_WINOGRAD_FILTERS": "taps",
            "ANVIL_WINOGRAD_MS_PER_MB": "0.5", "ANVIL_PASS_BUDGET_MB": "0", "ANVIL_WORKER_IDLE_MS": "12.5",
            "ANVIL_WEIGHT_CACHE": "off", "XDG_CACHE_HOME": "/c", "HOME": "/h",
        ])
        #expect(settings.instructionSet == "avx2")
        #expect(settings.convolution == "direct")
        #expect(settings.winogradFilters == "taps")
        #expect(settings.winogradMillisecondsPerMegabyte == 0.5)
        #expect(settings.passBudgetMegabytes == 0)
        #expect(settings.workerIdleMilliseconds == 12.5)
        #expect(settings.weightCache == "off")
        #expect(settings.cacheHome == "/c" && settings.home == "/h")
    }

    @Test("Empty values are unset; numbers that are negative or not numbers are unset")
    func unusableValuesAreUnset() {
        let empty = Settings(environment: ["ANVIL_ISA": "", "ANVIL_CONVOLUTION": "", "ANVIL_WEIGHT_CACHE": ""])
        #expect(empty == Settings(environment: [:]))
        for text in ["-1", "fast", "", "nan", "inf"] {
            let settings = Settings(environment: ["ANVIL_WINOGRAD_MS_PER_MB": text, "ANVIL_PASS_BUDGET_MB": text,
                                                  "ANVIL_WORKER_IDLE_MS": text])
            #expect(settings.winogradMillisecondsPerMegabyte == nil, "\(text)")
            #expect(settings.passBudgetMegabytes == nil, "\(text)")
            #expect(settings.workerIdleMilliseconds == nil, "\(text)")
        }
    }

    /// Only `Settings` reads Anvil's variables: every other file asks it.
    @Test func noOtherSourceReadsAnAnvilVariable() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var readers: [String] = []
        for case let url as URL in files where url.pathExtension == "swift" && url.lastPathComponent != "Settings.swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            if text.contains("environment[\"ANVIL_") { readers.append(url.lastPathComponent) }
        }
        #expect(readers.isEmpty, "read ANVIL_* themselves: \(readers)")
    }
}
