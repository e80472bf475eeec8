import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Bad options, shapes and model-file entries of TransposedConvolution, Pad, Resize (nearest, cubic),
/// the normalisations, LRN and LpPooling: each an `AnvilError` naming the layer, its input
/// shape and the option or field.
@Suite("Failures of the spatial and normalization layers")
struct FailureSpatialAndNormalizationTests {
    /// One out-of-range option each (input 8×8×4), with a word of the message.
    static let badOptions: [(String, any Layer, String)] = [
        ("deconv channels 0", TransposedConvolution(kernel: (2, 2), channels: 0, name: "bad"), "channels"),
        ("deconv kernel 0", TransposedConvolution(kernel: (0, 2), channels: 2, name: "bad"), "kernel"),
        ("deconv stride 0", TransposedConvolution(kernel: (2, 2), channels: 2, stride: (1, 0), name: "bad"), "stride"),
        ("deconv dilation -1", TransposedConvolution(kernel: (2, 2), channels: 2, dilation: (-1, 1), name: "bad"), "dilation"),
        ("deconv groups 0", TransposedConvolution(kernel: (2, 2), channels: 2, groups: 0, name: "bad"), "groups"),
        ("deconv output padding = stride", TransposedConvolution(kernel: (2, 2), channels: 2, stride: (2, 2), outputPadding: (2, 0), name: "bad"), "outputPadding"),
        ("deconv output padding < 0", TransposedConvolution(kernel: (2, 2), channels: 2, outputPadding: (0, -1), name: "bad"), "outputPadding"),
        ("deconv negative pad", TransposedConvolution(kernel: (2, 2), channels: 2, padding: .explicit(top: -1, left: 0, bottom: 0, right: 0), name: "bad"), "padding"),
        ("pad negative", Pad(top: -1, name: "bad"), "pads"),
        ("pad value nan", Pad(top: 1, value: .nan, name: "bad"), "value"),
        ("group norm groups 0", GroupNormalization(groups: 0, name: "bad"), "groups"),
        ("group norm epsilon < 0", GroupNormalization(groups: 2, epsilon: -1, name: "bad"), "epsilon"),
        ("instance norm epsilon nan", InstanceNormalization(epsilon: .nan, name: "bad"), "epsilon"),
        ("layer norm epsilon infinite", LayerNormalization(epsilon: .infinity, name: "bad"), "epsilon"),
        ("layer norm axes 0", LayerNormalization(axes: 0, name: "bad"), "axes 0"),
        ("layer norm axes past the image", LayerNormalization(axes: 4, name: "bad"), "axes 4"),
        ("lrn size 0", LocalResponseNormalization(size: 0, name: "bad"), "size"),
        ("lrn alpha infinite", LocalResponseNormalization(size: 3, alpha: .infinity, name: "bad"), "alpha"),
        ("lp pool p 0", LpPooling(p: 0, kernel: (2, 2), name: "bad"), "p must be positive"),
        ("lp pool p nan", LpPooling(p: .nan, kernel: (2, 2), name: "bad"), "p must be positive"),
        ("lp pool kernel 0", LpPooling(kernel: (0, 2), name: "bad"), "kernel"),
        ("resize cubic coefficient nan", Resize(height: 4, width: 4, mode: .cubic, cubicCoefficient: .nan, name: "bad"), "cubicCoefficient"),
    ]

    @Test("Out-of-range options: invalidOption naming the layer, its input and the option")
    func badOptions() {
        for (context, layer, word) in Self.badOptions {
            Failure.expect(.invalidOption, mentioning: ["'bad'", "(8, 8, 4)", word], context) {
                let input = Input(width: 8, height: 8, channels: 4)
                _ = try Model(input: input, output: input --> layer)
            }
        }
    }

    /// Options that do not fit the input shape.
    static let badShapes: [(String, any Layer, Shape, String)] = [
        ("group norm groups not dividing", GroupNormalization(groups: 3, name: "bad"), Shape(height: 4, width: 4, channels: 4), "divide"),
        ("reflect pad as large as the height", Pad(top: 3, mode: .reflect, name: "bad"), Shape(height: 3, width: 4, channels: 2), "reflect"),
        ("reflect pad of a single channel", Pad(front: 1, mode: .reflect, name: "bad"), Shape(height: 3, width: 4, channels: 1), "reflect"),
        ("deconv groups not dividing", TransposedConvolution(kernel: (2, 2), channels: 4, groups: 2, name: "bad"), Shape(height: 3, width: 3, channels: 3), "groups"),
        ("deconv pads crop everything", TransposedConvolution(kernel: (2, 2), channels: 4, padding: .explicit(2), name: "bad"), Shape(height: 1, width: 1, channels: 3), "no output"),
        ("lp pool window larger than input", LpPooling(kernel: (5, 5), name: "bad"), Shape(height: 3, width: 3, channels: 2), "bad"),
    ]

    @Test("Options that do not fit the input: invalidShape naming the layer and its input")
    func badShapes() {
        for (context, layer, shape, word) in Self.badShapes {
            Failure.expect(.invalidShape, mentioning: ["'bad'", "(\(shape.height), \(shape.width), \(shape.channels))", word], context) {
                let input = Input(width: shape.width, height: shape.height, channels: shape.channels)
                _ = try Model(input: input, output: input --> layer)
            }
        }
    }

    @Test("Output shapes: transposed convolution (valid, same, explicit + output padding), pad, LpPooling")
    func shapes() throws {
        let input = Shape(height: 5, width: 7, channels: 6)
        #expect(try TransposedConvolution(kernel: (3, 4), channels: 2, stride: (2, 3)).outputShape(for: [input])
                == Shape(height: 11, width: 22, channels: 2))
        #expect(try TransposedConvolution(kernel: (3, 4), channels: 2, stride: (2, 3), padding: .same).outputShape(for: [input])
                == Shape(height: 10, width: 21, channels: 2))
        #expect(try TransposedConvolution(kernel: (4, 4), channels: 2, stride: (2, 2), padding: .explicit(top: 1, left: 2, bottom: 0, right: 1),
                                          outputPadding: (1, 0), dilation: (1, 2), groups: 2).outputShape(for: [input])
                == Shape(height: 12, width: 16, channels: 2))
        #expect(try Pad(top: 1, left: 2, bottom: 3, right: 4, front: 1, back: 2).outputShape(for: [input])
                == Shape(height: 9, width: 13, channels: 9))
        #expect(try LpPooling(kernel: (2, 3)).outputShape(for: [input]) == Shape(height: 2, width: 2, channels: 6))
        // A sequence runs as a height-1 image and stays a sequence; a window that grows its height is an error.
        let sequence = Shape.sequence(length: 5, channels: 4)
        #expect(try TransposedConvolution(kernel: (1, 3), channels: 2, stride: (1, 2)).outputShape(for: [sequence])
                == .sequence(length: 11, channels: 2))
        #expect(try Pad(left: 1, right: 2, mode: .reflect).outputShape(for: [sequence]) == .sequence(length: 8, channels: 4))
        #expect(throws: AnvilError.self) { try TransposedConvolution(kernel: (2, 3), channels: 2).outputShape(for: [sequence]) }
        #expect(throws: AnvilError.self) { try Pad(top: 1).outputShape(for: [sequence]) }
    }

    @Test("LayerNormalization: gamma / beta of the wrong size name the layer and the tensor; axes past a sequence's")
    func layerNormalizationParameters() throws {
        let input = Input(width: 4, height: 3, channels: 2)
        let model = try Model(input: input, output: input --> LayerNormalization(axes: 2, name: "ln"))
        // Over the last 2 axes: 4 × 2 = 8 values each; 2 (the channels) is the wrong size.
        Failure.expect(.invalidParameter, mentioning: ["ln_gamma", "2", "8"], "gamma per channel") {
            try model.compile(from: ArrayParameterSource(["ln_gamma": [1, 1], "ln_beta": [Float](repeating: 0, count: 8)]))
        }
        Failure.expect(.invalidParameter, mentioning: ["ln_beta", "24"], "beta per image") {
            try model.compile(from: ArrayParameterSource(["ln_gamma": [Float](repeating: 1, count: 8),
                                                          "ln_beta": [Float](repeating: 0, count: 24)]))
        }
        #expect(!model.isCompiled)
        let sequence = Input(length: 5, channels: 3)
        Failure.expect(.invalidOption, mentioning: ["'seq'", "axes 3", "between 1 and 2"], "axes 3 of a sequence") {
            _ = try Model(input: sequence, output: sequence --> LayerNormalization(axes: 3, name: "seq"))
        }
    }

    static let modelFiles: [(String, String, AnvilError.Code, [String])] = [
        ("Pad without pads", #"{"name": "out", "type": "Pad", "inputs": ["x"]}"#, .invalidFile, ["missing field 'pads'"]),
        ("Pad with 3 pads", #"{"name": "out", "type": "Pad", "inputs": ["x"], "pads": [1, 1, 1]}"#, .invalidFile, ["'pads' must be an array of 4 integers"]),
        ("Pad with an unknown mode", #"{"name": "out", "type": "Pad", "inputs": ["x"], "pads": [1, 1, 1, 1], "mode": "wrap"}"#,
         .invalidFile, ["unknown mode 'wrap'"]),
        ("Resize with an unknown mode", #"{"name": "out", "type": "Resize", "inputs": ["x"], "size": [2, 2], "mode": "area"}"#,
         .invalidFile, ["unknown mode 'area'"]),
        ("Resize with an unknown rounding", #"{"name": "out", "type": "Resize", "inputs": ["x"], "size": [2, 2], "nearestRounding": "up"}"#,
         .invalidFile, ["unknown nearestRounding 'up'"]),
        ("TransposedConvolution with outputPadding as a string",
         #"{"name": "out", "type": "TransposedConvolution", "inputs": ["x"], "kernel": [2, 2], "channels": 2, "outputPadding": "1"}"#,
         .invalidFile, ["'outputPadding' must be an array"]),
        ("TransposedConvolution without channels", #"{"name": "out", "type": "TransposedConvolution", "inputs": ["x"], "kernel": [2, 2]}"#,
         .invalidFile, ["missing field 'channels'"]),
        ("GroupNormalization without groups", #"{"name": "out", "type": "GroupNormalization", "inputs": ["x"]}"#,
         .invalidFile, ["missing field 'groups'"]),
        ("InstanceNormalization with affine as a string", #"{"name": "out", "type": "InstanceNormalization", "inputs": ["x"], "affine": "yes"}"#,
         .invalidFile, ["'affine' must be true or false"]),
        ("LayerNormalization with axes as a string", #"{"name": "out", "type": "LayerNormalization", "inputs": ["x"], "axes": "3"}"#,
         .invalidFile, ["'axes' must be an integer"]),
        ("LocalResponseNormalization without size", #"{"name": "out", "type": "LocalResponseNormalization", "inputs": ["x"]}"#,
         .invalidFile, ["missing field 'size'"]),
        ("LpPooling with p as a string", #"{"name": "out", "type": "LpPooling", "inputs": ["x"], "p": "2", "kernel": [2, 2]}"#,
         .invalidFile, ["'p' must be a number"]),
    ]

    @Test("Malformed model-file entries of these layers name the layer and the field")
    func modelFiles() {
        for (context, layers, code, words) in Self.modelFiles {
            Failure.expect(code, mentioning: ["'out'"] + words, context) {
                _ = try FailureModelFileTests.load(FailureModelFileTests.document(layers: layers))
            }
        }
    }
}
