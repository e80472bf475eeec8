import Foundation
import Testing
import Anvil
import AnvilModels
import AnvilVision
@testable import AnvilTestSupport

/// The shipped Deep MNIST weights (`Weights/mnist/`, trained by `Scripts/fixtures/train_mnist.py`).
@Suite struct MNISTTests {
    static var weights: URL { Fixtures.repository.appendingPathComponent("Weights/mnist") }

    static func logitsModel() throws -> Model {
        let model = try MNISTNetwork.deep(probabilities: false)
        try model.compile(from: try DirectoryParameterSource(directory: weights))
        return model
    }

    /// Anvil's logits equal PyTorch's (`Scripts/fixtures/mnist_reference_logits.py`) on the first 256 test images.
    @Test func logitsMatchPyTorch() throws {
        let fixtures = Fixtures.shared.appendingPathComponent("mnist")
        let pixels = try Fixtures.bytes(fixtures.appendingPathComponent("images_first256.u8"))
        let reference = try Fixtures.floats(fixtures.appendingPathComponent("logits_first256.f32"))
        #expect(pixels.count == 256 * 784)
        #expect(reference.count == 256 * 10)
        let model = try Self.logitsModel()
        let input = try Tensor(batch: 256, shape: model.inputShapes[0], values: pixels.map { Float($0) / 255 })
        let logits = try model.predict(input)
        let worst = zip(logits.values, reference).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst <= 1e-4, "max |Anvil − PyTorch| = \(worst)")
        var referenceTensor = logits
        referenceTensor.values = reference
        #expect(logits.argmax() == referenceTensor.argmax())
    }

    /// Batch size does not change the answer (batch-1 Dense uses sgemv, batches sgemm).
    @Test func batchOfOneMatchesBatch() throws {
        let fixtures = Fixtures.shared.appendingPathComponent("mnist")
        let pixels = try Fixtures.bytes(fixtures.appendingPathComponent("images_first256.u8")).prefix(4 * 784).map { Float($0) / 255 }
        let model = try Self.logitsModel()
        let together = try model.predict(Tensor(batch: 4, shape: model.inputShapes[0], values: Array(pixels)))
        for image in 0 ..< 4 {
            let alone = try model.predict(Tensor(batch: 1, shape: model.inputShapes[0], values: Array(pixels[image * 784 ..< (image + 1) * 784])))
            let difference = zip(alone.values, together.image(image)).map { abs($0 - $1) }.max()!
            #expect(difference <= 1e-4)
        }
    }

    /// The model file next to the weights describes the same network and loads them.
    @Test func modelFileMatchesDefinition() throws {
        let file = try ModelFile(contentsOf: Self.weights.appendingPathComponent("model.json"))
        let model = try file.compiledModel()
        let definition = try MNISTNetwork.deep()
        #expect(model.parameterCount == 3_274_634)
        #expect(model.layers.map(\.outputShape) == definition.layers.map(\.outputShape))
        #expect(model.layers.map(\.name) == definition.layers.map(\.name))
    }

    /// The main job: the shipped weights classify the real test set at >= 99.2%.
    @Test func shippedWeightsReachAccuracy() throws {
        guard let data = Fixtures.mnistData else {
            print("skipped: MNIST test set not fetched (run Scripts/setup/fetch_mnist.sh)")
            return
        }
        let model = try Self.logitsModel()
        let test = try MNISTDataset(directory: data, split: .test)
        var correct = 0
        for start in stride(from: 0, to: test.count, by: 500) {
            let range = start ..< min(start + 500, test.count)
            let output = try model.predict(Tensor(batch: range.count, shape: model.inputShapes[0],
                                                  values: test.images(in: range, scale: 1 / 255)))
            for (offset, predicted) in output.argmax().enumerated() where predicted == test.label(at: start + offset) {
                correct += 1
            }
        }
        #expect(correct >= 9_920, "accuracy \(Double(correct) / 100)%")
    }

    /// Forge's hand-drawn digits come out as 5 and 3 after MNIST-style preprocessing.
    @Test(arguments: [("five.png", 5), ("three.png", 3)])
    func forgeDrawings(file: String, digit: Int) throws {
        guard let forge = Fixtures.forgeMNIST else {
            print("skipped: ../shared/forge-mnist is absent")
            return
        }
        let pixels = try MNISTPreprocessor().preprocess(contentsOf: forge.appendingPathComponent(file))
        let model = try Self.logitsModel()
        let output = try model.predict(Tensor(batch: 1, shape: model.inputShapes[0], values: pixels.map { $0 / 255 }))
        #expect(output.argmax() == [digit])
        let forgeModel = try MNISTNetwork.forge(probabilities: false)
        try forgeModel.compile(from: try DirectoryParameterSource(directory: forge))
        #expect(try forgeModel.predict(Tensor(batch: 1, shape: forgeModel.inputShapes[0], values: pixels)).argmax() == [digit])
    }
}
