import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// The built-in layers' model-file names are declared, listed once, unique, the documented
/// ones, and every layer's options survive a write and a read.
@Suite("Layer registry")
struct LayerRegistryTests {
    /// The layer types `docs/model-format.md` documents, written out here independently of the code.
    static let documentedTypeNames: Set<String> = [
        "Convolution", "DepthwiseConvolution", "PointwiseConvolution", "MaxPooling", "AveragePooling",
        "GlobalAveragePooling", "GlobalMaxPooling", "Dense", "Flatten", "Activation", "PReLU", "Softmax",
        "LogSoftmax", "BatchNormalization", "Add", "Elementwise", "Concatenate", "Resize",
        "TransposedConvolution", "Pad", "InstanceNormalization", "LayerNormalization", "GroupNormalization",
        "LocalResponseNormalization", "LpPooling", "Reduce", "ArgReduce", "Cumulative", "TopK", "Take", "Embedding", "GridSample", "Select",
        "RoiAlign", "DeformableConvolution", "Col2Im", "MaxPoolingIndices", "MaxUnpooling", "ChannelShuffle", "Transpose", "Reshape",
        "Squeeze", "Unsqueeze", "Slice", "DepthToSpace", "SpaceToDepth",
        "Constant", "ShapeOf", "Gather", "Range", "ConstantOfShape", "Cast", "Expand", "MatMul", "Determinant", "FloatRounding",
    ]

    /// The names in the first column of the layer table of `docs/model-format.md`.
    static func typeNamesInFormatDocument() throws -> Set<String> {
        let url = Fixtures.repository.appendingPathComponent("docs/model-format.md")
        let text = try String(contentsOf: url, encoding: .utf8)
        let lines = text.components(separatedBy: "\n")
        let start = try #require(lines.firstIndex { $0.hasPrefix("| type | inputs |") })
        var names: Set<String> = []
        for line in lines[(start + 2)...] {
            guard line.hasPrefix("|") else { break }
            let firstCell = line.split(separator: "|", omittingEmptySubsequences: true).first.map(String.init) ?? ""
            // Each name is in backticks; a cell may list several (`GlobalAveragePooling`, `GlobalMaxPooling`).
            let parts = firstCell.split(separator: "`", omittingEmptySubsequences: false)
            for (i, part) in parts.enumerated() where i % 2 == 1 { names.insert(String(part)) }
        }
        return names
    }

    /// One instance of every built-in layer, each with options other than its defaults.
    static let layersWithOptions: [any Layer] = [
        Convolution(kernel: (2, 3), channels: 6, stride: (2, 1), padding: .explicit(top: 1, left: 0, bottom: 2, right: 1),
                    dilation: (1, 2), groups: 2, useBias: false, activation: .clip(min: -1, max: 2)),
        DepthwiseConvolution(kernel: (5, 3), multiplier: 2, stride: (1, 2), padding: .valid, dilation: (2, 2),
                             useBias: false, activation: .leakyRelu(alpha: 0.2)),
        PointwiseConvolution(channels: 7, useBias: false, activation: .elu(alpha: 0.5)),
        MaxPooling(kernel: (3, 2), stride: (1, 2), padding: .same, dilation: (2, 1), ceilMode: true),
        AveragePooling(kernel: (2, 4), stride: (3, 3), padding: .explicit(1), dilation: (1, 1), ceilMode: true,
                       countIncludesPadding: true),
        GlobalAveragePooling(),
        GlobalMaxPooling(),
        Dense(neurons: 9, useBias: false, activation: .hardSigmoid(alpha: 0.25, beta: 0.4)),
        Flatten(order: .channelsFirst),
        Activation(.linear(a: 2, b: -1)),
        PReLU(),
        Softmax(),
        LogSoftmax(),
        BatchNormalization(epsilon: 1e-5),
        Add(activation: .relu6),
        Elementwise(.divide, constant: Shape(height: 1, width: 1, channels: 3), constantFirst: true, activation: .tanh),
        Elementwise(.mean, activation: .relu),
        Concatenate(axis: 2),
        ChannelShuffle(groups: 4),
        Transpose(permutation: [0, 3, 1, 2]),
        Reshape([-1, 0, 4]),
        Squeeze(axes: [1, 2]),
        Unsqueeze(axes: [1]),
        Slice(axis: -2, start: -5, end: 1, step: -2),
        DepthToSpace(blockSize: 3, mode: .columnRowDepth),
        SpaceToDepth(blockSize: 2, mode: .columnRowDepth),
        Flatten(axis: 2),
        Resize(scaleHeight: 1.5, scaleWidth: 2, coordinates: .pytorchHalfPixel),
        Resize(height: 7, width: 3, coordinates: .alignCorners),
        Resize(height: 5, width: 6, coordinates: .asymmetric, mode: .nearest, nearestRounding: .floor),
        Resize(scaleHeight: 2, scaleWidth: 2, coordinates: .halfPixelSymmetric, mode: .cubic, cubicCoefficient: -0.5,
               excludeOutside: true),
        TransposedConvolution(kernel: (4, 3), channels: 6, stride: (2, 3), padding: .explicit(top: 1, left: 0, bottom: 2, right: 1),
                              outputPadding: (1, 2), dilation: (1, 2), groups: 2, useBias: false, activation: .relu),
        Pad(top: 1, left: 2, bottom: 0, right: 3, front: 1, back: 2, mode: .edge, value: 0.5),
        InstanceNormalization(epsilon: 1e-3, affine: false),
        LayerNormalization(axes: 3, epsilon: 1e-6, affine: false),
        GroupNormalization(groups: 2, epsilon: 1e-4, affine: false),
        LocalResponseNormalization(size: 3, alpha: 2e-4, beta: 0.5, bias: 2),
        LpPooling(p: 3, kernel: (3, 2), stride: (1, 2), padding: .explicit(1), dilation: (1, 1), ceilMode: true),
        Reduce(.logSumExp, axes: [-1, 2], keepDimensions: false),
        ArgReduce(.argMin, axis: -2, keepDimensions: false, selectLastIndex: true),
        Cumulative(.product, axis: 2, exclusive: true, reverse: true),
        TopK(k: 3, axis: 1, largest: false, result: .indices),
        Take(shape: [4, 1, 2]),
        Embedding(table: [10, 2, 3], axis: -2),
        GridSample(mode: .cubic, padding: .reflection, alignCorners: true),
        RoiAlign(mode: .max, coordinates: .outputHalfPixel, outputHeight: 7, outputWidth: 5, samplingRatio: 2, spatialScale: 0.0625),
        DeformableConvolution(channels: 8, kernel: (3, 2), stride: (2, 1), padding: .explicit(top: 1, left: 0, bottom: 2, right: 1),
                              dilation: (1, 2), groups: 2, offsetGroups: 4, useBias: false),
        Col2Im(imageSize: (9, 7), block: (2, 3), stride: (2, 1), dilation: (1, 2), padding: .explicit(top: 1, left: 2, bottom: 0, right: 1)),
        MaxPoolingIndices(window: PoolingWindow(kernel: (3, 2), stride: (1, 2), padding: .explicit(1), dilation: (2, 1), ceilMode: true),
                          columnMajor: true),
        MaxUnpooling(kernel: (3, 3), stride: (2, 2), padding: .explicit(top: 1, left: 1, bottom: 0, right: 0), outputSize: (12, 13)),
        Select(constant: Shape(unchecked: [3, 1]), constantPosition: 0),
        Elementwise(.greaterOrEqual, activation: .none),
        Elementwise(.fmod, constant: Shape(unchecked: [2, 1, 1, 3]), activation: .none),
        Constant(try! TensorValue(shape: Shape(unchecked: [2, 1], elementType: .int32), integers: [7, -3])),
        ShapeOf(start: 1, end: -1),
        Gather(axis: -2),
        Arange(),
        ConstantOfShape(2.5, elementType: .float32),
        Cast(to: .int64),
        Expand(),
        MatMul(transposeA: true),
        Determinant(),
        FloatRounding(to: .bfloat16),
    ]

    @Test("Every registered layer's file type name is the one docs/model-format.md documents")
    func namesAreTheDocumentedOnes() throws {
        let registered = LayerRegistry.builtIn.map { $0.fileTypeName }
        #expect(Set(registered) == Self.documentedTypeNames)
        #expect(try Self.typeNamesInFormatDocument() == Self.documentedTypeNames)
    }

    @Test("File type names are unique and each maps back to its layer type")
    func namesAreUnique() {
        let names = LayerRegistry.builtIn.map { $0.fileTypeName }
        #expect(Set(names).count == names.count, "duplicates in \(names)")
        for layerType in LayerRegistry.builtIn {
            #expect(LayerRegistry.byFileTypeName[layerType.fileTypeName].map(ObjectIdentifier.init) == ObjectIdentifier(layerType))
        }
    }

    @Test("The round-trip list below covers every registered layer")
    func roundTripCoversTheRegistry() {
        let covered = Set(Self.layersWithOptions.map { ObjectIdentifier(type(of: $0)) })
        #expect(covered == Set(LayerRegistry.builtIn.map { ObjectIdentifier($0) }))
    }

    @Test("Encoding then decoding gives the same layer type and the same options")
    func roundTrip() throws {
        for layer in Self.layersWithOptions {
            let written = try LayerCoding.encode(layer, name: "l")
            let decoded = try LayerCoding.decode(try JSONFields(.object(written), context: "layer 'l'"), name: "l")
            #expect(type(of: decoded) == type(of: layer), "\(layer.typeName)")
            #expect(decoded.name == "l")
            let rewritten = try LayerCoding.encode(decoded, name: "l")
            #expect(JSONValue.object(rewritten) == JSONValue.object(written), "\(layer.typeName)")
            // And the options are not the defaults: decoding just the type gives something else.
            if Self.requiredMembers(of: written).count < written.count, let minimal = try? LayerCoding.decode(
                try JSONFields(.object(Self.requiredMembers(of: written)), context: "layer 'l'"), name: "l") {
                #expect(JSONValue.object(try LayerCoding.encode(minimal, name: "l")) != JSONValue.object(written),
                        "\(layer.typeName) is written with default options only")
            }
        }
    }

    @Test("Every activation function is written and read back as itself")
    func activationRoundTrip() throws {
        for f in refAllActivations + refIllConditionedActivations {
            let written = try LayerCoding.encode(Activation(f), name: "l")
            let decoded = try #require(try LayerCoding.decode(try JSONFields(.object(written), context: "layer 'l'"), name: "l") as? Activation)
            #expect(decoded.function == f, "\(f)")
        }
    }

    /// `type` and the members a layer cannot do without.
    static func requiredMembers(of members: [(String, JSONValue)]) -> [(String, JSONValue)] {
        let required: Set<String> = ["type", "kernel", "channels", "neurons", "function", "size"]
        return members.filter { required.contains($0.0) }
    }

    @Test("A custom layer cannot be written, and says so")
    func customLayerIsRefused() throws {
        final class Custom: Layer {
            let name: String? = nil
            func outputShape(for inputs: [Shape]) throws -> Shape { inputs[0] }
            func makeKernel(_ context: KernelContext) throws -> any Kernel { fatalError("not compiled") }
        }
        #expect {
            try LayerCoding.encode(Custom(), name: "mine")
        } throws: { error in
            (error as? AnvilError)?.message.contains("layer 'mine' has custom type Custom") == true
        }
    }

    @Test("Summaries keep showing the Swift type name")
    func summaryTypeNames() throws {
        let input = Input(width: 4, height: 4, channels: 2)
        let model = try Model(input: input, output: input --> MaxPooling(window: PoolingWindow(kernel: (2, 2)), name: "pool")
                                  --> Activation(.relu, name: "act"))
        #expect(model.summary().contains("pool (MaxPooling)"))
        #expect(model.summary().contains("act (Activation)"))
    }
}
