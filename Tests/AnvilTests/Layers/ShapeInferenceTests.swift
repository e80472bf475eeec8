import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// Shape inference against the SAME / VALID / explicit / ceil-mode formulas (computed by the
/// naive reference's `Naive.window`), over many sizes, kernels, strides, dilations and pads.
@Suite("Shape inference")
struct ShapeInferenceTests {
    static let paddings: [Padding] = [
        .same, .valid, .explicit(1), .explicit(top: 0, left: 2, bottom: 1, right: 0),
        .explicit(top: 2, left: 1, bottom: 3, right: 2), .explicit(top: 3, left: 0, bottom: 0, right: 3),
    ]

    /// The shape a windowed layer must infer, or `nil` when it must throw.
    static func expected(_ input: Shape, kernel: (Int, Int), stride: (Int, Int), dilation: (Int, Int),
                         padding: Padding, ceilMode: Bool = false, channels: Int) -> Shape? {
        guard let win = Naive.window(h: input.height, w: input.width, kernel: kernel, stride: stride,
                                     dilation: dilation, padding: padding, ceilMode: ceilMode) else { return nil }
        return Shape(height: win.rows.output, width: win.columns.output, channels: channels)
    }

    /// Checks one layer's inferred shape (or its error) against `expected`.
    static func check(_ layer: any Layer, _ input: Shape, _ expected: Shape?, _ context: String,
                      sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            let shape = try layer.outputShape(for: [input])
            if let expected {
                #expect(shape == expected, "\(context): got \(shape)", sourceLocation: sourceLocation)
            } else {
                Issue.record("\(context): expected an error, got \(shape)", sourceLocation: sourceLocation)
            }
        } catch let error as AnvilError {
            if let expected {
                Issue.record("\(context): expected \(expected), got error \(error.code): \(error.message)", sourceLocation: sourceLocation)
            } else {
                #expect(error.code == .invalidShape, "\(context): \(error.message)", sourceLocation: sourceLocation)
            }
        } catch {
            Issue.record("\(context): unexpected error \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("Convolution and depthwise shapes over sizes 1-9, kernels 1-5, strides 1-3, dilations 1-3, six paddings",
          arguments: paddings)
    func convolution(padding: Padding) {
        for size in 1 ... 9 {
            for k in 1 ... 5 { for s in 1 ... 3 { for d in 1 ... 3 {
                // Height and width exercise different settings.
                let input = Shape(height: size, width: 10 - size, channels: 6)
                let kernel = (k, 6 - k), stride = (s, 4 - s), dilation = (d, 4 - d)
                let context = "input \(input) kernel \(kernel) stride \(stride) dilation \(dilation) padding \(padding)"
                Self.check(Convolution(kernel: kernel, channels: 4, stride: stride, padding: padding, dilation: dilation, groups: 2),
                           input, Self.expected(input, kernel: kernel, stride: stride, dilation: dilation, padding: padding, channels: 4),
                           "Convolution \(context)")
                Self.check(DepthwiseConvolution(kernel: kernel, multiplier: 3, stride: stride, padding: padding, dilation: dilation),
                           input, Self.expected(input, kernel: kernel, stride: stride, dilation: dilation, padding: padding, channels: 18),
                           "DepthwiseConvolution \(context)")
            } } }
        }
    }

    @Test("Pooling shapes, floor and ceil mode, explicit pads smaller than the window", arguments: [false, true])
    func pooling(ceilMode: Bool) {
        for size in 1 ... 10 {
            for k in 1 ... 4 { for s in 1 ... 4 { for d in 1 ... 2 {
                let effective = (k - 1) * d + 1
                var paddings: [Padding] = [.valid]
                if !ceilMode { paddings.append(.same) }
                for p in 0 ..< min(effective, 3) {
                    paddings.append(.explicit(top: p, left: 0, bottom: min(effective - 1, p + 1), right: p))
                }
                for padding in paddings {
                    let input = Shape(height: size, width: 11 - size, channels: 3)
                    let context = "input \(input) kernel \(k) stride \(s) dilation \(d) padding \(padding) ceil \(ceilMode)"
                    let expected = Self.expected(input, kernel: (k, k), stride: (s, s), dilation: (d, d), padding: padding,
                                                 ceilMode: ceilMode, channels: 3)
                    Self.check(MaxPooling(kernel: (k, k), stride: (s, s), padding: padding, dilation: (d, d), ceilMode: ceilMode),
                               input, expected, "MaxPooling \(context)")
                    Self.check(AveragePooling(kernel: (k, k), stride: (s, s), padding: padding, dilation: (d, d), ceilMode: ceilMode),
                               input, expected, "AveragePooling \(context)")
                }
            } } }
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var size: Int, kernel: Int, stride: Int, dilation: Int, before: Int, after: Int, ceil: Bool, output: Int
        var testDescription: String {
            "in \(size) k \(kernel) s \(stride) d \(dilation) pads \(before)/\(after)\(ceil ? " ceil" : "") -> \(output)"
        }
    }

    /// Hand-computed cases, so the reference formula is itself checked.
    static let handCases: [Case] = [
        Case(size: 28, kernel: 2, stride: 2, dilation: 1, before: 0, after: 0, ceil: false, output: 14),
        Case(size: 5, kernel: 2, stride: 2, dilation: 1, before: 0, after: 0, ceil: false, output: 2),
        Case(size: 5, kernel: 2, stride: 2, dilation: 1, before: 0, after: 0, ceil: true, output: 3),
        Case(size: 4, kernel: 3, stride: 2, dilation: 1, before: 0, after: 0, ceil: true, output: 2),  // ONNX maxpool_2d_ceil-like
        // The last ceil-mode window would start at or beyond in + padBefore: dropped (ONNX "reduce by one").
        Case(size: 2, kernel: 1, stride: 2, dilation: 1, before: 0, after: 0, ceil: true, output: 1),
        Case(size: 3, kernel: 2, stride: 2, dilation: 1, before: 1, after: 1, ceil: true, output: 2),
        Case(size: 7, kernel: 3, stride: 2, dilation: 2, before: 0, after: 0, ceil: false, output: 2),
        Case(size: 7, kernel: 3, stride: 1, dilation: 3, before: 0, after: 0, ceil: false, output: 1),
        Case(size: 5, kernel: 3, stride: 2, dilation: 1, before: 2, after: 1, ceil: false, output: 3),
        Case(size: 6, kernel: 3, stride: 3, dilation: 1, before: 1, after: 1, ceil: true, output: 3),
    ]

    @Test("Hand-computed window sizes", arguments: handCases)
    func handComputed(_ c: Case) throws {
        let axis = Naive.axis(size: c.size, kernel: c.kernel, stride: c.stride, dilation: c.dilation,
                              padBefore: c.before, padAfter: c.after, ceilMode: c.ceil)
        #expect(axis?.output == c.output, "reference formula")
        let input = Shape(height: c.size, width: 9, channels: 2)
        let pool = MaxPooling(kernel: (c.kernel, 1), stride: (c.stride, 1),
                              padding: .explicit(top: c.before, left: 0, bottom: c.after, right: 0),
                              dilation: (c.dilation, 1), ceilMode: c.ceil)
        #expect(try pool.outputShape(for: [input]) == Shape(height: c.output, width: 9, channels: 2))
    }

    @Test("SAME padding: out = ceil(in / stride), the smaller pad at the top/left")
    func samePads() throws {
        for size in 1 ... 12 { for k in 1 ... 6 { for s in 1 ... 4 { for d in 1 ... 2 {
            let axis = try #require(Naive.axis(size: size, kernel: k, stride: s, dilation: d, padBefore: nil, padAfter: nil,
                                                ceilMode: false))
            #expect(axis.output == (size + s - 1) / s)
            #expect(axis.before <= axis.after && axis.after - axis.before <= 1)
            // The engine's resolved geometry has the same pads.
            let g = try WindowGeometry(input: Shape(height: size, width: size, channels: 1), kernel: (k, k), stride: (s, s),
                                       dilation: (d, d), padding: .same)
            #expect(g.outputHeight == axis.output && g.padTop == axis.before && g.padBottom == axis.after,
                    "in \(size) k \(k) s \(s) d \(d): engine \(g.padTop)/\(g.padBottom), expected \(axis.before)/\(axis.after)")
        } } } }
    }

    @Test("Other layers: pointwise, dense, flatten, global pools, activations, softmax, BN, PReLU, add, concat")
    func otherLayers() throws {
        let s = Shape(height: 7, width: 5, channels: 3)
        #expect(try PointwiseConvolution(channels: 11).outputShape(for: [s]) == Shape(height: 7, width: 5, channels: 11))
        #expect(try Dense(neurons: 9).outputShape(for: [s]) == .vector(9))
        #expect(try Flatten().outputShape(for: [s]) == .vector(105))
        #expect(try Flatten(order: .channelsFirst).outputShape(for: [s]) == .vector(105))
        #expect(try GlobalAveragePooling().outputShape(for: [s]) == .vector(3))
        #expect(try GlobalMaxPooling().outputShape(for: [s]) == .vector(3))
        for layer: any Layer in [Activation(.relu), Softmax(), LogSoftmax(), BatchNormalization(), PReLU()] {
            #expect(try layer.outputShape(for: [s]) == s, "\(layer.typeName)")
        }
        #expect(try Add().outputShape(for: [s, s, s]) == s)
        let gate = Shape.vector(3), pixels = Shape(height: 7, width: 5, channels: 1), row = Shape(height: 1, width: 5, channels: 3)
        #expect(try Elementwise(.multiply).outputShape(for: [s, gate]) == s)
        #expect(try Elementwise(.multiply).outputShape(for: [gate, s]) == s)
        #expect(try Elementwise(.add).outputShape(for: [gate, pixels]) == s)
        #expect(try Elementwise(.maximum).outputShape(for: [Shape(height: 7, width: 1, channels: 1), row]) == s)
        #expect(try Elementwise(.mean).outputShape(for: [gate, gate, .vector(1)]) == gate)
        #expect(try Elementwise(.divide, constant: pixels).outputShape(for: [gate]) == s)
        #expect(try Elementwise(.subtract, constant: .vector(1), constantFirst: true).outputShape(for: [row]) == row)
        #expect(try Concatenate().outputShape(for: [s, Shape(height: 7, width: 5, channels: 4), s]) == Shape(height: 7, width: 5, channels: 10))
        #expect(try Resize(height: 3, width: 11).outputShape(for: [s]) == Shape(height: 3, width: 11, channels: 3))
        #expect(try Resize(scaleHeight: 1.5, scaleWidth: 0.5).outputShape(for: [s]) == Shape(height: 10, width: 2, channels: 3))
        #expect(try Resize(scaleHeight: 2, scaleWidth: 3).outputShape(for: [s]) == Shape(height: 14, width: 15, channels: 3))
        #expect(try Resize(scaleHeight: 0.6, scaleWidth: 1.7).outputShape(for: [Shape(height: 5, width: 3, channels: 1)])
            == Shape(height: 3, width: 5, channels: 1))
    }

    @Test("Shapes flow through a chain and reach Model.layers and outputShapes")
    func chain() throws {
        let input = Input(width: 31, height: 20, channels: 3)
        let output = input
            --> Convolution(kernel: (3, 3), channels: 8, stride: (2, 2))                       // (10, 16, 8)
            --> Convolution(kernel: (3, 5), channels: 8, padding: .valid, dilation: (1, 2))    // (8, 8, 8)
            --> MaxPooling(kernel: (3, 3), stride: (2, 2), ceilMode: true)                     // (4, 4, 8)
            --> AveragePooling(kernel: (2, 2), stride: (1, 1), padding: .explicit(top: 1, left: 0, bottom: 0, right: 1)) // (4, 4, 8)
            --> DepthwiseConvolution(kernel: (3, 3), multiplier: 2, stride: (2, 1), padding: .valid)  // (1, 2, 16)
        let model = try Model(input: input, output: output)
        #expect(model.layers.map(\.outputShape) == [
            Shape(height: 10, width: 16, channels: 8), Shape(height: 8, width: 8, channels: 8),
            Shape(height: 4, width: 4, channels: 8), Shape(height: 4, width: 4, channels: 8),
            Shape(height: 1, width: 2, channels: 16),
        ])
        #expect(model.outputShapes == [Shape(height: 1, width: 2, channels: 16)])
        #expect(model.inputShapes == [Shape(height: 20, width: 31, channels: 3)])
        #expect(model.layers[1].inputShapes == [Shape(height: 10, width: 16, channels: 8)])
    }
}
