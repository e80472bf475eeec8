import Anvil
import Foundation
import Testing

/// Helpers for the zoo-weights and `anvil classify` tests (AnvilModelsTests, AnvilCommandTests):
/// the photo and zoo fixtures, the built tool, temporary files, random parameters, a safetensors writer.
enum ClassifySupport {
    /// `Tests/AnvilVisionTests/Fixtures/photos/chelsea.jpg` (451 × 300, public domain).
    static var photo: URL {
        Fixtures.repository.appendingPathComponent("Tests/AnvilVisionTests/Fixtures/photos/chelsea.jpg")
    }

    /// `Tests/AnvilTestSupport/Fixtures/zoo/<network>/model.json` from the zoo's reference script.
    static func zooFixture(_ network: String) -> URL {
        Fixtures.shared.appendingPathComponent("zoo/\(network)/model.json")
    }

    /// Runs `anvil` in the repository root; standard output and error are returned separately.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        try AnvilTool.run(arguments)
    }

    /// The ranked lines `  1.  14.97%    79  class 79` of the output: (index, percent, label).
    static func rankedLines(_ output: String) -> [(index: Int, percent: Double, label: String)] {
        output.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: true)
            guard fields.count == 4, fields[0].hasSuffix("."), Int(fields[0].dropLast()) != nil,
                  fields[1].hasSuffix("%"), let percent = Double(fields[1].dropLast()), let index = Int(fields[2]) else { return nil }
            return (index, percent, fields[3].trimmingCharacters(in: .whitespaces))
        }
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> URL { try Fixtures.temporaryDirectory(prefix: "anvil-classify") }

    /// Every parameter tensor `model` asks for, from a deterministic ``RandomParameterSource``
    /// (weights rescaled to He-uniform bounds, variances positive), with its request.
    static func randomParameters(of model: Model, seed: UInt64 = 7) throws -> [(request: ParameterRequest, values: [Float])] {
        let source = RandomParameterSource(seed: seed)
        var result: [(ParameterRequest, [Float])] = []
        for layer in model.layers where !layer.sharesParameters {
            for spec in layer.parameters {
                let request = ParameterRequest(layer: layer.name, kind: spec.kind, count: spec.count)
                var values = try source.data(for: request).values
                switch spec.kind {
                case .weights:
                    // He-uniform: ±√(6 / fan-in), so activations neither vanish nor explode.
                    let fanIn = max(1, spec.count / max(1, layer.outputShape.channels))
                    let largest = max(values.map { abs($0) }.max() ?? 1, 1e-6)
                    values = values.map { $0 / largest * (6 / Float(fanIn)).squareRoot() }
                case .variance: values = values.map { abs($0) + 0.5 }
                default: break
                }
                result.append((request, values))
            }
        }
        return result
    }

    /// Writes a safetensors file of F32 tensors (flat shapes), as `safetensors.torch.save_file` lays it out.
    static func writeSafetensors(_ tensors: [(key: String, values: [Float])], to url: URL) throws {
        var header: [String: Any] = ["__metadata__": ["format": "pt"]]
        var offset = 0
        for (key, values) in tensors {
            header[key] = ["dtype": "F32", "shape": [values.count], "data_offsets": [offset, offset + 4 * values.count]]
            offset += 4 * values.count
        }
        var json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        while json.count % 8 != 0 { json.append(0x20) }  // pad with spaces so the data is aligned
        var file = Data()
        var length = UInt64(json.count).littleEndian
        withUnsafeBytes(of: &length) { file.append(contentsOf: $0) }
        file.append(json)
        for (_, values) in tensors {
            values.withUnsafeBufferPointer { file.append(Data(buffer: $0)) }
        }
        try file.write(to: url)
    }
}
