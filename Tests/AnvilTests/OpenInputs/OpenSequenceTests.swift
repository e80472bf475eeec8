import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Open sizes with ranks: a sequence whose length is open (`Input(length: nil, channels:)`), run
/// at several lengths against the naive float64 reference (a sequence is a 1 × L image to it),
/// kept open through the model file (`[null, C]`), and checked against other ranks.
extension OpenInputTests {
    @Test("An open sequence length: one compile; 1-D convolution, pooling and Dense per position match the reference at two lengths")
    func openSequenceLengthConvPoolDense() throws {
        var rng = RefRandom(seed: 41)
        let (n, c) = (2, 3)
        let w = (0 ..< 4 * 3 * c).map { _ in rng.float() }, bias = (0 ..< 4).map { _ in rng.float() }
        let dw = (0 ..< 5 * 4).map { _ in rng.float() }, db = (0 ..< 5).map { _ in rng.float() }
        let input = Input(length: nil, channels: c, name: "signal")
        let model = try Model(input: input, output: input
            --> Convolution(kernel: 3, channels: 4, stride: 1, padding: .same, activation: .relu, name: "conv")
            --> MaxPooling(kernel: 2) --> Dense(neurons: 5, name: "fc"))
        #expect(model.hasOpenInputs)
        #expect(model.openInputShapes[0].rank == 3 && model.openInputShapes[0].description == "(?, 3)")
        #expect(model.openOutputShapes[0].rank == 3 && model.openOutputShapes[0].description == "(?, 5)")
        try model.compile(from: ArrayParameterSource(["conv_W": w, "conv_b": bias, "fc_W": dw, "fc_b": db]))
        for length in [9, 16] {
            let x = rng.tensor(n: n, h: 1, w: length, c: c)
            let y = try model.predict(Tensor(batch: n, shape: .sequence(length: length, channels: c), values: x.floats))
            var r = Naive.convolution(x, weights: w, bias: bias, outputChannels: 4, kernel: (1, 3), padding: .same,
                                      activation: .relu)
            r = Naive.maxPool(r, kernel: (1, 2), stride: (1, 2))!
            var expected = RefTensor(zerosN: n, h: 1, w: r.w, c: 5)
            expected.rank = 3
            for b in 0 ..< n { for p in 0 ..< r.w { for o in 0 ..< 5 {
                var sum = Double(db[o])
                for ch in 0 ..< 4 { sum += Double(dw[o * 4 + ch]) * r[b, 0, p, ch] }
                expected[b, 0, p, o] = sum
            } } }
            refExpectClose(y, expected, "open sequence of length \(length)")
            #expect(try model.outputShapes(forInputShapes: [.sequence(length: length, channels: c)])
                    == [.sequence(length: length / 2, channels: 5)])
        }
        #expect(model.cachedInputShapes.count == 2)
        // An image of one row is not a sequence: the rank is part of the input's shape.
        Failure.expect(.invalidInput, mentioning: ["signal", "(?, 3)", "(1, 9, 3)"]) {
            _ = try model.predict(Tensor(zeros: Shape(height: 1, width: 9, channels: 3)))
        }
        // The model file writes the open length as null and reads it back open.
        let json = try model.modelFileJSON()
        let file = try ModelFile(json: json, source: "test", directory: URL(fileURLWithPath: "/"))
        #expect(file.model.openInputShapes == model.openInputShapes)
        #expect(file.model.openOutputShapes == model.openOutputShapes)
    }

    @Test("Model-file input shapes of every rank with null: [null, C] is an open sequence, [C] a vector, a null channel count an error")
    func modelFileRanksWithNull() throws {
        func document(_ shape: String) throws -> JSONValue {
            try JSONValue.parse(Data(#"{"format": "anvil.model", "version": 1, "inputs": [{"name": "x", "shape": \#(shape)}], "layers": [{"name": "r", "type": "Activation", "inputs": ["x"], "function": "relu"}], "outputs": ["r"]}"#.utf8), source: "test")
        }
        let sequence = try ModelFile(json: try document("[null, 16]"), source: "test", directory: URL(fileURLWithPath: "/"))
        #expect(sequence.model.openInputShapes == [OpenShape.sequence(length: nil, channels: 16)])
        #expect(sequence.model.openOutputShapes[0].description == "(?, 16)")
        let image = try ModelFile(json: try document("[7, null, 2]"), source: "test", directory: URL(fileURLWithPath: "/"))
        #expect(image.model.openInputShapes == [OpenShape(height: 7, width: nil, channels: 2)])
        let vector = try ModelFile(json: try document("[5]"), source: "test", directory: URL(fileURLWithPath: "/"))
        #expect(!vector.model.hasOpenInputs && vector.model.inputShapes == [.vector(5)])
        for bad in ["[null]", "[4, null]", "[null, null, null]"] {
            Failure.expect(.invalidFile, mentioning: ["shape", "null"]) {
                _ = try ModelFile(json: try document(bad), source: "bad", directory: URL(fileURLWithPath: "/"))
            }
        }
    }
}
