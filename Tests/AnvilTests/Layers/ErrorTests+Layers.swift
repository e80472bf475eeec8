import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ErrorTests``: invalid layer options and shapes, wrong inputs, bad names.
extension ErrorTests {
    @Test("A kernel larger than the padded input")
    func kernelLargerThanInput() {
        Self.expectError(.invalidShape, mentioning: ["big", "(4, 4, 2)"], "conv valid") {
            _ = try Self.model(Convolution(kernel: (5, 5), channels: 3, padding: .valid, name: "big"), h: 4, w: 4, c: 2)
        }
        Self.expectError(.invalidShape, mentioning: ["big", "(4, 6, 2)"], "conv explicit") {
            _ = try Self.model(Convolution(kernel: (7, 3), channels: 3, padding: .explicit(1), name: "big"), h: 4, w: 6, c: 2)
        }
        Self.expectError(.invalidShape, mentioning: ["big", "(5, 5, 2)"], "conv dilated") {
            _ = try Self.model(Convolution(kernel: (3, 3), channels: 3, padding: .valid, dilation: (3, 1), name: "big"), h: 5, w: 5, c: 2)
        }
        Self.expectError(.invalidShape, mentioning: ["big", "(4, 4, 2)"], "depthwise") {
            _ = try Self.model(DepthwiseConvolution(kernel: (5, 1), padding: .valid, name: "big"), h: 4, w: 4, c: 2)
        }
        Self.expectError(.invalidShape, mentioning: ["big", "(3, 3, 2)"], "max pool") {
            _ = try Self.model(MaxPooling(kernel: (4, 4), name: "big"), h: 3, w: 3, c: 2)
        }
        Self.expectError(.invalidShape, mentioning: ["big", "(3, 3, 2)"], "average pool") {
            _ = try Self.model(AveragePooling(kernel: (2, 4), name: "big"), h: 3, w: 3, c: 2)
        }
        // The same kernel fits once SAME padding is applied.
        #expect(throws: Never.self) { _ = try Self.model(Convolution(kernel: (5, 5), channels: 3, name: "ok"), h: 4, w: 4, c: 2) }
    }

    /// Layers with one out-of-range option each.
    static var badOptions: [(String, any Layer)] {
        [
            ("conv channels 0", Convolution(kernel: (3, 3), channels: 0, name: "bad")),
            ("conv channels -3", Convolution(kernel: (3, 3), channels: -3, name: "bad")),
            ("conv kernel 0", Convolution(kernel: (0, 3), channels: 2, name: "bad")),
            ("conv kernel -1", Convolution(kernel: (3, -1), channels: 2, name: "bad")),
            ("conv stride 0", Convolution(kernel: (3, 3), channels: 2, stride: (0, 1), name: "bad")),
            ("conv stride -2", Convolution(kernel: (3, 3), channels: 2, stride: (1, -2), name: "bad")),
            ("conv dilation 0", Convolution(kernel: (3, 3), channels: 2, dilation: (0, 1), name: "bad")),
            ("conv dilation -1", Convolution(kernel: (3, 3), channels: 2, dilation: (1, -1), name: "bad")),
            ("conv negative pad", Convolution(kernel: (3, 3), channels: 2, padding: .explicit(top: 0, left: -1, bottom: 0, right: 0), name: "bad")),
            ("depthwise multiplier 0", DepthwiseConvolution(kernel: (3, 3), multiplier: 0, name: "bad")),
            ("depthwise multiplier -1", DepthwiseConvolution(kernel: (3, 3), multiplier: -1, name: "bad")),
            ("depthwise kernel 0", DepthwiseConvolution(kernel: (3, 0), name: "bad")),
            ("depthwise stride 0", DepthwiseConvolution(kernel: (3, 3), stride: (0, 0), name: "bad")),
            ("depthwise dilation 0", DepthwiseConvolution(kernel: (3, 3), dilation: (1, 0), name: "bad")),
            ("pointwise channels 0", PointwiseConvolution(channels: 0, name: "bad")),
            ("pointwise channels -5", PointwiseConvolution(channels: -5, name: "bad")),
            ("max pool kernel 0", MaxPooling(kernel: (0, 2), name: "bad")),
            ("max pool stride 0", MaxPooling(kernel: (2, 2), stride: (0, 2), name: "bad")),
            ("max pool stride -1", MaxPooling(kernel: (2, 2), stride: (2, -1), name: "bad")),
            ("max pool dilation 0", MaxPooling(kernel: (2, 2), dilation: (0, 1), name: "bad")),
            ("max pool pad as large as the window", MaxPooling(kernel: (2, 2), padding: .explicit(2), name: "bad")),
            ("average pool kernel -2", AveragePooling(kernel: (-2, 2), name: "bad")),
            ("average pool stride 0", AveragePooling(kernel: (2, 2), stride: (0, 0), name: "bad")),
            ("average pool dilation -1", AveragePooling(kernel: (2, 2), dilation: (-1, 1), name: "bad")),
            ("average pool pad beyond the window", AveragePooling(kernel: (3, 1), padding: .explicit(top: 3, left: 0, bottom: 0, right: 0), name: "bad")),
            ("dense neurons 0", Dense(neurons: 0, name: "bad")),
            ("dense neurons -1", Dense(neurons: -1, name: "bad")),
            ("resize to height 0", Resize(height: 0, width: 4, name: "bad")),
            ("resize to width 0", Resize(height: 4, width: 0, name: "bad")),
            ("resize to negative", Resize(height: -4, width: 4, name: "bad")),
            ("resize scale 0", Resize(scaleHeight: 0, scaleWidth: 1, name: "bad")),
            ("resize scale -1", Resize(scaleHeight: 1, scaleWidth: -1, name: "bad")),
            ("resize scale nan", Resize(scaleHeight: .nan, scaleWidth: 1, name: "bad")),
            ("resize scale infinity", Resize(scaleHeight: 2, scaleWidth: .infinity, name: "bad")),
            ("resize antialias nearest", Resize(height: 2, width: 2, mode: .nearest, antialias: true, name: "bad")),
            ("resize region without tfCropAndResize",
             Resize(height: 2, width: 2, region: Resize.Region(top: 0.1, left: 0, bottom: 1, right: 1), name: "bad")),
            ("resize region nan", Resize(height: 2, width: 2, coordinates: .tfCropAndResize,
                                         region: Resize.Region(top: .nan, left: 0, bottom: 1, right: 1), name: "bad")),
            ("resize extrapolation infinity", Resize(height: 2, width: 2, coordinates: .tfCropAndResize,
                                                     extrapolationValue: .infinity, name: "bad")),
            ("resize size with scale 0", Resize(height: 2, width: 2, scaleHeight: 0, scaleWidth: 1, name: "bad")),
            ("batch norm epsilon < 0", BatchNormalization(epsilon: -1, name: "bad")),
            ("batch norm epsilon nan", BatchNormalization(epsilon: .nan, name: "bad")),
        ]
    }

    @Test("Zero or negative channels, kernels, strides, dilations, multipliers, sizes: invalidOption naming the layer")
    func badOptions() {
        for (context, layer) in Self.badOptions {
            Self.expectError(.invalidOption, mentioning: ["'bad'", "(8, 8, 4)"], context) { _ = try Self.model(layer) }
        }
    }

    @Test("Zero or negative groups: invalidOption")
    func badGroups() {
        for groups in [0, -2] {
            Self.expectError(.invalidOption, mentioning: ["'bad'", "(8, 8, 4)"], "groups \(groups)") {
                _ = try Self.model(Convolution(kernel: (3, 3), channels: 4, groups: groups, name: "bad"))
            }
        }
    }

    @Test("Groups not dividing the input or output channels: invalidShape naming the layer and shape")
    func groupsNotDividing() {
        Self.expectError(.invalidShape, mentioning: ["'g'", "(8, 8, 6)"], "input channels") {
            _ = try Self.model(Convolution(kernel: (3, 3), channels: 8, groups: 4, name: "g"), c: 6)
        }
        Self.expectError(.invalidShape, mentioning: ["'g'", "(8, 8, 4)"], "output channels") {
            _ = try Self.model(Convolution(kernel: (3, 3), channels: 5, groups: 2, name: "g"), c: 4)
        }
    }

    @Test("Elementwise: shapes that do not broadcast, a bad constant, the wrong operand count")
    func elementwiseShapes() {
        Self.expectError(.invalidShape, mentioning: ["mul", "(4, 4, 3)", "(4, 4, 2)", "broadcast"], "channels") {
            let a = Input(width: 4, height: 4, channels: 2)
            _ = try Model(input: a, output: [a --> PointwiseConvolution(channels: 3), a] --> Elementwise(.multiply, name: "mul"))
        }
        Self.expectError(.invalidShape, mentioning: ["mul", "(4, 4, 2)", "(2, 2, 2)"], "spatial") {
            let a = Input(width: 4, height: 4, channels: 2)
            _ = try Model(input: a, output: [a, a --> MaxPooling(kernel: (2, 2))] --> Elementwise(.maximum, name: "mul"))
        }
        Self.expectError(.invalidShape, mentioning: ["k", "(8, 8, 4)", "(3)"], "constant") {
            _ = try Self.model(Elementwise(.add, constant: .vector(3), name: "k"))
        }
        Self.expectError(.invalidOption, mentioning: ["k", "constant shape (0, 1, 4)"], "empty constant") {
            _ = try Self.model(Elementwise(.add, constant: Shape(height: 0, width: 1, channels: 4), name: "k"))
        }
        Self.expectError(.invalidOption, mentioning: ["k", "constantFirst"], "constantFirst alone") {
            let a = Input(width: 4, height: 4, channels: 2)
            _ = try Model(input: a, output: [a, a] --> Elementwise(.subtract, constantFirst: true, name: "k"))
        }
        Self.expectError(.invalidGraph, mentioning: ["k"], "three operands of a subtraction") {
            let a = Input(width: 4, height: 4, channels: 2)
            _ = try Model(input: a, output: [a, a, a] --> Elementwise(.subtract, name: "k"))
        }
        Self.expectError(.invalidGraph, mentioning: ["k"], "a constant and two inputs to a division") {
            let a = Input(width: 4, height: 4, channels: 2)
            _ = try Model(input: a, output: [a, a] --> Elementwise(.divide, constant: .vector(1), name: "k"))
        }
        Self.expectError(.invalidGraph, mentioning: ["k"], "one operand") {
            _ = try Self.model(Elementwise(.multiply, name: "k"))
        }
    }

    @Test("Add of different shapes, Concatenate of different spatial sizes")
    func mergeShapes() {
        Self.expectError(.invalidShape, mentioning: ["sum", "(4, 4, 3)", "(4, 4, 2)"], "add channels") {
            let a = Input(width: 4, height: 4, channels: 2)
            _ = try Model(input: a, output: [a --> PointwiseConvolution(channels: 3), a] --> Add(name: "sum"))
        }
        Self.expectError(.invalidShape, mentioning: ["sum", "(4, 4, 2)", "(2, 2, 2)"], "add spatial") {
            let a = Input(width: 4, height: 4, channels: 2)
            _ = try Model(input: a, output: [a, a, a --> MaxPooling(kernel: (2, 2))] --> Add(name: "sum"))
        }
        Self.expectError(.invalidShape, mentioning: ["cat", "(4, 4, 2)", "(3, 3, 2)"], "concat") {
            let a = Input(width: 4, height: 4, channels: 2)
            _ = try Model(input: a, output: [a, a --> MaxPooling(kernel: (2, 2), stride: (1, 1))] --> Concatenate(name: "cat"))
        }
        Self.expectError(.invalidShape, mentioning: ["cat", "(4, 4, 2)", "(4, 5, 2)"], "concat inputs") {
            let a = Input(width: 4, height: 4, channels: 2), b = Input(width: 5, height: 4, channels: 2)
            _ = try Model(inputs: [a, b], outputs: [[a, b] --> Concatenate(name: "cat")])
        }
    }

    @Test("Layout layers and ranks: every bad option or shape names the layer, the option and the shapes")
    func layoutErrors() {
        let cases: [(AnvilError.Code, [String], String, (Input, Input) -> SymbolicTensor)] = [
            (.invalidOption, ["'l'", "groups must be positive, got 0"], "shuffle groups 0", { i, _ in i --> ChannelShuffle(groups: 0, name: "l") }),
            (.invalidShape, ["'l'", "groups 3 must divide channels 8"], "shuffle groups 3", { i, _ in i --> ChannelShuffle(groups: 3, name: "l") }),
            (.invalidOption, ["'l'", "[0, 1, 1, 2]", "not a permutation"], "transpose repeat", { i, _ in i --> Transpose(permutation: [0, 1, 1, 2], name: "l") }),
            (.invalidOption, ["'l'", "[0, 2, 1]", "rank-4"], "transpose rank", { i, _ in i --> Transpose(permutation: [0, 2, 1], name: "l") }),
            (.invalidOption, ["'l'", "batch axis"], "transpose batch", { i, _ in i --> Transpose(permutation: [1, 0, 2, 3], name: "l") }),
            (.invalidShape, ["'l'", "(3, 4, 8)", "[5, -1]"], "reshape count", { i, _ in i --> Reshape([5, -1], name: "l") }),
            (.invalidOption, ["'l'", "more than one -1"], "reshape two -1", { i, _ in i --> Reshape([-1, -1], name: "l") }),
            (.invalidOption, ["'l'", "at most 7"], "reshape rank 9", { i, _ in i --> Reshape([1, 1, 1, 1, 1, 1, 1, 96], name: "l") }),
            (.invalidOption, ["'l'", "step must not be 0"], "slice step 0", { i, _ in i --> Slice(axis: 1, step: 0, name: "l") }),
            (.invalidShape, ["'l'", "is empty"], "slice empty", { i, _ in i --> Slice(axis: 2, start: 3, end: 1, name: "l") }),
            (.invalidOption, ["'l'", "axis 0", "batch axis"], "slice batch", { i, _ in i --> Slice(axis: 0, end: 1, name: "l") }),
            (.invalidOption, ["'l'", "axis 4", "rank-4"], "slice axis 4", { i, _ in i --> Slice(axis: 4, end: 1, name: "l") }),
            (.invalidShape, ["'l'", "(3, 4, 8)", "(6, 4)"], "concat ranks", { i, s in [i, s] --> Concatenate(name: "l") }),
            (.invalidShape, ["'l'", "axis 2", "extent 4"], "squeeze", { i, _ in i --> Squeeze(axes: [2], name: "l") }),
            (.invalidOption, ["'l'", "rank 9"], "unsqueeze", { i, _ in i --> Unsqueeze(axes: [1, 2, 3, 4, 5], name: "l") }),
            (.invalidOption, ["'l'", "\"chw\"", "axis 2"], "flatten chw", { i, _ in i --> Flatten(axis: 2, order: .channelsFirst, name: "l") }),
            (.invalidShape, ["'l'", "blockSize² 9", "8"], "depth to space", { i, _ in i --> DepthToSpace(blockSize: 3, name: "l") }),
            (.invalidShape, ["'l'", "blockSize 2", "height 3"], "space to depth", { i, _ in i --> SpaceToDepth(blockSize: 2, name: "l") }),
            (.invalidShape, ["'l'", "rank 4"], "depth to space on a sequence", { _, s in s --> DepthToSpace(blockSize: 2, name: "l") }),
            (.invalidShape, ["'l'", "sequence", "height 1", "(6, 4)"], "2-D kernel on a sequence",
             { _, s in s --> Convolution(kernel: (3, 3), channels: 2, padding: .explicit(top: 1, left: 1, bottom: 2, right: 1), name: "l") }),
            (.invalidShape, ["'l'", "rank 2 to 4"], "pooling at rank 1",
             { _, s in s --> Reshape([24], name: "r") --> Dense(neurons: 1) --> Squeeze() --> MaxPooling(kernel: 1, name: "l") }),
        ]
        for (code, fragments, label, build) in cases {
            Self.expectError(code, mentioning: fragments, label) {
                let a = Input(width: 4, height: 3, channels: 8), b = Input(shape: .sequence(length: 6, channels: 4))
                _ = try Model(inputs: [a, b], outputs: [build(a, b), b --> Activation(.relu), a --> Activation(.relu)])
            }
        }
    }

    @Test("Wrong number of inputs to a layer")
    func wrongInputCount() {
        let a = Input(width: 4, height: 4, channels: 2), b = Input(width: 4, height: 4, channels: 2)
        Self.expectError(.invalidGraph, mentioning: ["'c'", "(4, 4, 2)", "2"], "two inputs to a convolution") {
            _ = try Model(inputs: [a, b], outputs: [[a, b] --> Convolution(kernel: (3, 3), channels: 2, name: "c")])
        }
        Self.expectError(.invalidGraph, mentioning: ["'s'", "(4, 4, 2)"], "one input to Add") {
            _ = try Model(input: a, output: [a] --> Add(name: "s"))
        }
        Self.expectError(.invalidGraph, mentioning: ["'j'"], "no input to Concatenate") {
            _ = try Model(input: a, output: [a --> Activation(.relu), [SymbolicTensor]() --> Concatenate(name: "j")] --> Add())
        }
        Self.expectError(.invalidGraph, mentioning: ["'s'"], "no input to Add") {
            _ = try Model(input: a, output: [a --> Activation(.relu), [SymbolicTensor]() --> Add(name: "s")] --> Add())
        }
    }

    @Test("Duplicate layer names, a layer named like an input, an empty name")
    func duplicateNames() {
        let a = Input(width: 4, height: 4, channels: 2)
        Self.expectError(.invalidGraph, mentioning: ["same"], "two layers") {
            _ = try Model(input: a, output: a --> Convolution(kernel: (3, 3), channels: 2, name: "same")
                --> Convolution(kernel: (3, 3), channels: 2, name: "same"))
        }
        Self.expectError(.invalidGraph, mentioning: ["same"], "different types") {
            _ = try Model(input: a, output: [a --> Activation(.relu, name: "same"), a --> PReLU(name: "same")] --> Add())
        }
        Self.expectError(.invalidGraph, mentioning: ["input"], "named like the input") {
            _ = try Model(input: a, output: a --> Activation(.relu, name: "input"))
        }
        Self.expectError(.invalidGraph, mentioning: ["Activation"], "empty name") {
            _ = try Model(input: a, output: a --> Activation(.relu, name: ""))
        }
        Self.expectError(.invalidGraph, mentioning: ["'x'"], "two inputs with one name") {
            let p = Input(width: 4, height: 4, channels: 2, name: "x"), q = Input(width: 4, height: 4, channels: 2, name: "x")
            _ = try Model(inputs: [p, q], outputs: [[p, q] --> Add()])
        }
    }

    @Test("Undeclared input, duplicate input, invalid input shape")
    func inputErrors() {
        let a = Input(width: 4, height: 4, channels: 2, name: "declared")
        let ghost = Input(width: 4, height: 4, channels: 2, name: "ghost")
        Self.expectError(.invalidGraph, mentioning: ["ghost", "(4, 4, 2)"], "undeclared input") {
            _ = try Model(input: a, output: [a, ghost --> Activation(.relu)] --> Add())
        }
        Self.expectError(.invalidGraph, mentioning: ["2"], "duplicate input") {
            _ = try Model(inputs: [a, a], outputs: [a --> Activation(.relu)])
        }
        Self.expectError(.invalidGraph, mentioning: [], "no outputs") { _ = try Model(inputs: [a], outputs: []) }
        Self.expectError(.invalidGraph, mentioning: [], "no inputs") { _ = try Model(inputs: [], outputs: [a]) }
        for (w, h, c) in [(0, 4, 1), (4, -1, 1), (4, 4, 0)] {
            Self.expectError(.invalidShape, mentioning: ["bad"], "input \(w)x\(h)x\(c)") {
                let bad = Input(width: w, height: h, channels: c, name: "bad")
                _ = try Model(input: bad, output: bad --> Activation(.relu))
            }
        }
    }

    @Test("A shared layer applied to inputs needing different parameters")
    func sharedLayerShapeConflict() {
        Self.expectError(.invalidShape, mentioning: ["shared"]) {
            let a = Input(width: 4, height: 4, channels: 2), b = Input(width: 4, height: 4, channels: 3)
            let conv = Convolution(kernel: (3, 3), channels: 2, name: "shared")
            let model = try Model(inputs: [a, b], outputs: [[a --> conv, b --> conv] --> Add()])
            try model.compile { _, count, _ in ParameterData([Float](repeating: 0, count: count)) }
        }
    }
}
