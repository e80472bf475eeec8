import Foundation
import Testing
import Anvil
import AnvilModels
import AnvilVision
@testable import AnvilTestSupport

/// Forge's own trained MNIST weights, loaded unchanged through the directory loader, must
/// classify the real MNIST test set at Forge's published 99.21% (9,921 / 10,000).
@Suite struct ForgeMNISTTests {
    @Test func forgeWeightsReachPublishedAccuracy() throws {
        guard let weights = Fixtures.forgeMNIST else {
            print("skipped: ../shared/forge-mnist is absent")
            return
        }
        guard let data = Fixtures.mnistData else {
            print("skipped: MNIST test set not fetched (run Scripts/setup/fetch_mnist.sh)")
            return
        }
        let model = try MNISTNetwork.forge(probabilities: false)
        try model.compile(from: try DirectoryParameterSource(directory: weights, loading: .copied))
        let test = try MNISTDataset(directory: data, split: .test)
        var correct = 0
        let batch = 500
        for start in stride(from: 0, to: test.count, by: batch) {
            let range = start ..< min(start + batch, test.count)
            let images = try test.images(in: range, scale: 1)
            let output = try model.predict(Tensor(batch: range.count, shape: model.inputShapes[0], values: images))
            for (offset, predicted) in output.argmax().enumerated() where predicted == test.label(at: start + offset) {
                correct += 1
            }
        }
        #expect(test.count == 10_000)
        #expect(correct == 9_921)
    }
}
