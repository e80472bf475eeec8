import Foundation
import Testing
import Anvil
@testable import AnvilTestSupport

/// A user-written layer: duplicates every channel and scales the copy by a learned factor
/// per channel, so it has its own shape rule, parameters and kernel.
final class DuplicateChannels: Layer {
    let name: String?
    init(name: String? = nil) { self.name = name }

    var namePrefix: String { "dup" }

    func outputShape(for inputs: [Shape]) throws -> Shape {
        guard inputs[0].channels <= 1024 else {
            throw AnvilError(.invalidShape, "at most 1024 channels, got \(inputs[0].channels)")
        }
        return Shape(height: inputs[0].height, width: inputs[0].width, channels: 2 * inputs[0].channels)
    }

    func parameters(for inputs: [Shape]) -> [ParameterSpec] { [ParameterSpec(.weights, count: inputs[0].channels)] }

    func macs(for inputs: [Shape], output: Shape) -> Int { inputs[0].count }

    func makeKernel(_ context: KernelContext) throws -> any Kernel {
        DuplicateKernel(channels: context.inputShapes[0].channels, scale: try context.parameter(.weights).values)
    }
}

struct DuplicateKernel: Kernel {
    let channels: Int
    let scale: [Float]

    func run(_ io: KernelIO) {
        let input = io.input(0), output = io.outputBuffer
        for pixel in 0 ..< input.count / channels {
            for c in 0 ..< channels {
                output[pixel * 2 * channels + c] = input[pixel * channels + c]
                output[pixel * 2 * channels + channels + c] = input[pixel * channels + c] * scale[c]
            }
        }
    }
}

@Suite struct CustomLayerTests {
    @Test func customLayerTakesPartInEverything() throws {
        let input = Input(width: 3, height: 2, channels: 2)
        let output = input --> DuplicateChannels() --> Activation(.relu) --> DuplicateChannels(name: "again")
        let model = try Model(input: input, output: output)
        #expect(model.layers.map(\.name) == ["dup_1", "activation_1", "again"])
        #expect(model.outputShapes == [Shape(height: 2, width: 3, channels: 8)])
        #expect(model.parameterCount == 2 + 4)
        let summary = model.summary()
        #expect(summary.contains("dup_1 (DuplicateChannels)"))
        #expect(summary.contains("(2, 3, 8)"))

        var requested: [String] = []
        try model.compile { name, count, kind in
            requested.append("\(name):\(kind):\(count)")
            return ParameterData((0 ..< count).map { Float($0 + 2) })
        }
        #expect(requested == ["dup_1:weights:2", "again:weights:4"])

        let values: [Float] = (0 ..< 12).map { Float($0) - 5 }
        let result = try model.predict(Tensor(batch: 1, shape: input.shape, values: values))
        // Reference by hand: [a, b] -> [a, b, 2a, 3b] -> relu -> [x, 2x·(2,3,4,5)].
        var expected: [Float] = []
        for pixel in 0 ..< 6 {
            let a = values[2 * pixel], b = values[2 * pixel + 1]
            let first = [a, b, 2 * a, 3 * b].map { max($0, 0) }
            expected += first + zip(first, [2, 3, 4, 5] as [Float]).map { $0 * $1 }
        }
        #expect(result.values == expected)
    }

    @Test func customLayerShapeErrorNamesTheLayer() {
        let input = Input(width: 1, height: 1, channels: 2000)
        #expect {
            _ = try Model(input: input, output: input --> DuplicateChannels(name: "wide"))
        } throws: { error in
            let error = error as? AnvilError
            return error?.code == .invalidShape && error!.message.contains("'wide'") && error!.message.contains("2000")
        }
    }

    @Test func customLayerCannotBeWrittenToAModelFile() throws {
        let input = Input(width: 1, height: 1, channels: 1)
        let model = try Model(input: input, output: input --> DuplicateChannels())
        #expect(throws: AnvilError.self) { _ = try model.modelFileJSON() }
    }
}
