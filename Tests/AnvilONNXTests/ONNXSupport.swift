import Foundation
import Testing
@testable import AnvilONNX
@testable import AnvilTestSupport

/// Paths and helpers the ONNX importer tests share.
enum ONNXSupport {
    /// This target's fixtures (made by Scripts/fixtures/make_onnx_swift_fixtures.py).
    static var fixtures: URL { Bundle.module.resourceURL!.appendingPathComponent("Fixtures") }

    /// The node tests of the installed onnx package (`onnx/backend/test/data/node`), found with
    /// `python3` (Scripts/setup.sh installs onnx 1.22.0); `ANVIL_ONNX_NODE_TESTS` overrides.
    static let nodeTestDirectory: URL? = {
        if let given = ProcessInfo.processInfo.environment["ANVIL_ONNX_NODE_TESTS"] { return URL(fileURLWithPath: given) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import onnx, os; print(os.path.dirname(onnx.__file__))"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let path = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines) else { return nil }
        let url = URL(fileURLWithPath: path).appendingPathComponent("backend/test/data/node")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }()

    /// A TensorProto file (.pb) of a node test as (ONNX shape, float values).
    static func readTensor(_ url: URL) throws -> (shape: [Int], values: [Float]) {
        let proto = try Onnx_TensorProto(serializedBytes: try Data(contentsOf: url))
        let constant = try TensorDecoding(directory: nil).constant(proto, what: url.lastPathComponent)
        return (constant.shape, constant.floats)
    }

    /// Values of an ONNX-ordered tensor of `shape` in Anvil's channels-last order (NCHW → NHWC,
    /// NCL → NLC; other ranks unchanged), and Anvil's shape after the batch axis.
    static func channelsLast(_ values: [Float], shape: [Int]) throws -> (shape: [Int], values: [Float]) {
        let constant = ConstantTensor(shape: shape, floats: values)
        switch shape.count {
        case 4:
            let moved = try constant.transposed([0, 2, 3, 1])
            return (Array(moved.shape.dropFirst()), moved.floats)
        case 3:
            let moved = try constant.transposed([0, 2, 1])
            return (Array(moved.shape.dropFirst()), moved.floats)
        default:
            return (Array(shape.dropFirst()), values)
        }
    }

    /// The number of values farther than rtol 1e-3 (plus 1e-5 absolute) from `expected` (NaN matches
    /// NaN, an infinity itself), recording the first few.
    static func mismatches(_ got: [Float], _ expected: [Float], rtol: Float = 1e-3, atol: Float = 1e-5, label: String) -> Int {
        var count = 0
        for (i, (g, e)) in zip(got, expected).enumerated() where !(g == e || (g.isNaN && e.isNaN) || abs(g - e) <= rtol * abs(e) + atol) {
            count += 1
            if count <= 3 { Issue.record("\(label): value \(i) is \(g), expected \(e)") }
        }
        return count
    }
}
