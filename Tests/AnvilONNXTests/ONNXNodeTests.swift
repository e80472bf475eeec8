import Foundation
import Testing
@testable import AnvilONNX
@testable import AnvilTestSupport

/// The ONNX operator conformance tests (`onnx/backend/test/data/node/*`, onnx 1.22.0) through the
/// importer, each as ``NodeTestCase`` runs it: every test in scope (``NodeTestScope``) converts and
/// reproduces ONNX's stored outputs, except those `Fixtures/node-tests-pending.tsv` lists with what
/// stops them — and a listed test that passes fails this suite until it is taken off the list.
///
/// `ANVIL_NODE_TEST_UPDATE=1` rewrites the list from this run (with the reason of each);
/// `ANVIL_NODE_TEST_ONLY=test_a,test_b` runs only those tests.
@Suite struct ONNXNodeTests {
    /// The pending list, read from the source tree (so that `ANVIL_NODE_TEST_UPDATE` rewrites it).
    static var pendingURL: URL { URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/node-tests-pending.tsv") }

    /// The pending list: test name → what stopped it when the list was written.
    static func pending() throws -> [String: String] {
        let text = try String(contentsOf: pendingURL, encoding: .utf8)
        var result: [String: String] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
            result[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return result
    }

    @Test func nodeTestsInScopeConvertAndMatchONNX() throws {
        guard let root = ONNXSupport.nodeTestDirectory else {
            Issue.record("the onnx package's node tests are missing: pip install onnx==1.22.0 (Scripts/setup.sh), or set ANVIL_ONNX_NODE_TESTS")
            return
        }
        let environment = ProcessInfo.processInfo.environment
        let only = environment["ANVIL_NODE_TEST_ONLY"].map { Set($0.split(separator: ",").map(String.init)) }
        let pending = try Self.pending()
        var excluded: [String: Int] = [:], passed = 0, stillPending: [(String, String)] = []
        var seen = Set<String>()
        for name in try FileManager.default.contentsOfDirectory(atPath: root.path).sorted() where only?.contains(name) ?? true {
            let directory = root.appendingPathComponent(name)
            let modelURL = directory.appendingPathComponent("model.onnx")
            guard FileManager.default.fileExists(atPath: modelURL.path) else { continue }
            seen.insert(name)
            let model = try Onnx_ModelProto(serializedBytes: try Data(contentsOf: modelURL))
            if let reason = NodeTestScope.exclusion(name: name, model: model) {
                excluded[reason, default: 0] += 1
                #expect(pending[name] == nil, "\(name) is out of scope (\(reason)); take it off node-tests-pending.tsv")
                continue
            }
            let outcome: NodeTestCase.Outcome
            do { outcome = try NodeTestCase(name: name, directory: directory).run() } catch { outcome = .failed("harness: \(error)") }
            if outcome == .passed {
                passed += 1
                #expect(pending[name] == nil, "\(name) passes now: take it off node-tests-pending.tsv")
            } else {
                // A wrong answer is never pending: only a refusal or an error may be.
                if case .mismatch(let why) = outcome { Issue.record("\(name) gives a wrong answer: \(why)") }
                stillPending.append((name, outcome.summary.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "\t", with: " ")))
                #expect(pending[name] != nil, "\(name): \(outcome.summary)")
            }
        }
        if only == nil {
            for name in pending.keys where !seen.contains(name) { Issue.record("node-tests-pending.tsv lists \(name), which onnx's node tests do not have") }
        }
        if environment["ANVIL_NODE_TEST_UPDATE"] == "1", only == nil {
            let header = "# ONNX node tests in scope that do not pass yet, with what stops each (written by ONNXNodeTests with ANVIL_NODE_TEST_UPDATE=1).\n"
            try (header + stillPending.map { "\($0.0)\t\($0.1)" }.joined(separator: "\n") + "\n").write(to: Self.pendingURL, atomically: true, encoding: .utf8)
        }
        let summary = excluded.sorted { $0.value > $1.value }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
        print("ONNX node tests: \(passed) pass, \(stillPending.count) pending, \(excluded.values.reduce(0, +)) out of scope (\(summary))")
    }
}
