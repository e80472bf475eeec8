import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Weights compiled from a memory-mapped file into a copy of the kernel's own (packed or
/// transformed) leave resident memory, and stay out of it while the model predicts.
@Suite struct MappedWeightReleaseTests {
    /// Three 3×3 256 → 256 convolutions, 2.25 MiB of weights each, with their biases between
    /// them in the file as every converter writes them. A kernel that read its bias from the
    /// mapping on every prediction mapped the pages around it back (64 kB of fault-around, or a
    /// whole 2 MiB folio where the kernel maps the file in large ones: VGG16 kept 18 MiB of
    /// released weights so).
    @Test("released weights stay released through compiling and predicting")
    func releasedWeightsStayReleased() throws {
        let shape = Shape(height: 6, width: 6, channels: 256)
        let input = Input(shape: shape)
        let output = input
            --> Convolution(kernel: (3, 3), channels: 256, activation: .relu, name: "c1")
            --> Convolution(kernel: (3, 3), channels: 256, activation: .relu, name: "c2")
            --> Convolution(kernel: (3, 3), channels: 256, name: "c3")
        let model = try Model(input: input, output: output)
        var random = RefRandom(seed: 41)
        let named = ["c1", "c2", "c3"].flatMap { layer in
            [(name: "\(layer)_W", values: random.floats(256 * 9 * 256, -0.05, 0.05)),
             (name: "\(layer)_b", values: random.floats(256, -0.05, 0.05))]
        }
        let tensors = Dictionary(uniqueKeysWithValues: named.map { ($0.name, $0.values) })
        let directory = try Fixtures.temporaryDirectory(prefix: "anvil-release")
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("weights.bin")
        let index = try Fixtures.writeBlob(named, to: url)
        let mappedKilobytes = named.reduce(0) { $0 + $1.values.count } * 4 / 1024
        let image = try Tensor(batch: 1, shape: shape, values: random.floats(shape.count, -1, 1))

        try model.compile(layout: .pytorch, from: ArrayParameterSource(tensors))
        let expected = try model.predict(image).values
        try model.compile(layout: .pytorch, from: try BlobParameterSource(url: url, index: index))
        var predicted: [Float] = []
        for _ in 0 ..< 2 { predicted = try model.predict(image).values }
        #expect(predicted == expected)
        #if os(Linux)
        // What may stay: the pages holding the three 1 kB biases, read once to copy them.
        if let resident = residentKilobytes(of: url.path) {
            #expect(resident <= 32, "\(resident) kB of the \(mappedKilobytes) kB mapped file still resident")
        }
        #endif
    }
}
