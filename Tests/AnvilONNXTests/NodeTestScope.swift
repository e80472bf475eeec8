import Foundation
@testable import AnvilONNX

/// Which ONNX node tests are outside what Anvil means to run, and why: everything else must
/// convert and match (or be listed, with what stops it, in `Fixtures/node-tests-pending.tsv`).
enum NodeTestScope {
    /// Operators out of scope, by reason.
    static let operatorsOutOfScope: [(reason: String, operators: Set<String>)] = [
        ("training: losses and optimisers", ["Adagrad", "Adam", "Momentum", "Gradient", "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"]),
        ("int8 quantization (the reduced-precision issue)", ["QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv",
                                                          "QLinearMatMul", "ConvInteger", "MatMulInteger"]),
        ("attention operators (the fused-attention issue)", ["Attention", "RotaryEmbedding", "LinearAttention", "FlexAttention"]),
        ("recurrent networks and loops", ["RNN", "GRU", "LSTM", "Scan", "Loop"]),
        ("sequence, optional, string and classical-ML types",
         ["SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert", "SequenceLength", "SequenceMap",
          "SplitToSequence", "ConcatFromSequence", "Optional", "OptionalGetElement", "OptionalHasElement", "StringConcat",
          "StringNormalizer", "StringSplit", "RegexFullMatch", "TfIdfVectorizer", "LabelEncoder", "TreeEnsemble",
          "ArrayFeatureExtractor", "Binarizer"]),
        ("random sampling", ["Bernoulli", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial"]),
        ("signal processing", ["DFT", "STFT", "HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix"]),
        ("decoding encoded images", ["ImageDecoder"]),
        ("bit manipulation of integers (Anvil computes float32; integers are shapes and indices)",
         ["BitShift", "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "BitCast"]),
        ("streaming state (causal convolution with a carried state)", ["CausalConvWithState", "TensorScatter"]),
        // (NonZero of constants and shapes is folded by the importer; its node test reads a computed tensor.)
        ("outputs whose shape depends on computed values (Anvil builds one plan per input shape)",
         ["NonMaxSuppression", "Unique", "NonZero"]),
    ]

    /// Operators that make a tensor from settings, not from a tensor's values: a graph of only
    /// these, fed by graph inputs, has outputs whose shape depends on the inputs' values.
    static let constantGenerators: Set<String> = ["Constant", "ConstantOfShape", "Range"]

    /// Operators whose node tests are named by an abbreviation (`test_nllloss_…`, `test_sce_…`).
    static let testNameAliases = ["NegativeLogLikelihoodLoss": "nllloss", "SoftmaxCrossEntropyLoss": "sce"]

    /// Operators whose rank-5 form is 3-D convolution or pooling.
    static let spatialOperators: Set<String> = ["Conv", "ConvTranspose", "MaxPool", "AveragePool", "LpPool", "MaxUnpool",
                                                "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool", "DeformConv", "Col2Im",
                                                "GridSample", "AffineGrid", "RoiAlign", "Resize", "InstanceNormalization"]

    /// Element types Anvil does not compute with: strings, complex numbers, 8-, 4- and 2-bit
    /// floats and 4-bit integers (TensorProto.DataType 8, 14, 15, 17–26).
    static let formatsOutOfScope: Set<Int32> = [8, 14, 15, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26]

    /// Why `model` (the node test `name`) is out of scope, or nil when it is in.
    static func exclusion(name: String, model: Onnx_ModelProto) -> String? {
        let graph = model.graph
        // A function body (`_expanded`) is judged by the operator it expands, which its name begins with.
        var operators = Set(graph.node.map(\.opType))
        for (_, family) in operatorsOutOfScope {
            // (Some tests spell the operator in snake case, others in one word: `test_blackmanwindow_expanded`.)
            for op in family {
                for spelling in [snakeCase(op), op.lowercased()] + (testNameAliases[op].map { [$0] } ?? []) where name.hasPrefix("test_" + spelling + "_") || name == "test_" + spelling {
                    operators.insert(op)
                }
            }
        }
        for (reason, family) in operatorsOutOfScope where !operators.isDisjoint(with: family) { return reason }
        if operators.isSubset(of: constantGenerators) {
            return "constant generators: outputs whose shape is set by the graph inputs' values (Anvil builds a plan per input shape)"
        }
        if graph.node.contains(where: { !$0.domain.isEmpty && $0.domain != "ai.onnx" }) { return "operators outside the default ONNX domain" }
        if name.contains("training") { return "training mode" }
        let inputNames = Set(graph.input.map(\.name))
        if graph.node.contains(where: { $0.opType == "If" && inputNames.contains($0.input.first ?? "") }) {
            return "control flow on a value given at predict (If of a graph input): Anvil builds one plan per input shape"
        }
        let types = graph.input.map(\.type) + graph.output.map(\.type)
        if types.contains(where: { !$0.isTensor }) { return "sequence, optional, string and classical-ML types" }
        let elementTypes = types.map(\.tensorType.elemType) + graph.initializer.map(\.dataType)
            + graph.node.flatMap { node in node.attribute.filter { $0.name == "to" }.map { Int32($0.i) } }
        if elementTypes.contains(where: formatsOutOfScope.contains) { return "number formats Anvil does not compute with (strings, complex, float8/float4, int4)" }
        // (Col2Im of a 3-D image reads blocks of rank 3 and writes an image of rank 5.)
        let rank5 = graph.input.contains { $0.type.tensorType.shape.dim.count == 5 }
            || (operators.contains("Col2Im") && graph.output.contains { $0.type.tensorType.shape.dim.count == 5 })
        if rank5 && !operators.isDisjoint(with: spatialOperators) { return "3-D convolution, pooling and sampling" }
        // (An empty tensor the importer reads as a constant, such as ReduceSum's `axes`, is a setting.)
        let empty = graph.input.contains { input in
            input.type.tensorType.shape.dim.contains { $0.knownValue == 0 } && !NodeTestCase.readAsConstant(input.name, in: graph)
        } || graph.output.contains { output in
            // (A vector of no values, such as an empty Shape, is computed when the plan is built.)
            let dims = output.type.tensorType.shape.dim
            return dims.count >= 2 && dims.contains { $0.knownValue == 0 }
        }
        if empty { return "empty tensors (an axis of extent 0): Anvil's tensors hold at least one value" }
        return nil
    }

    /// `LayerNormalization` → `layer_normalization`, as the node tests are named.
    static func snakeCase(_ op: String) -> String {
        var result = ""
        let characters = Array(op)
        for (i, c) in characters.enumerated() {
            if c.isUppercase, i > 0, characters[i - 1].isLowercase || (i + 1 < characters.count && characters[i + 1].isLowercase && characters[i - 1].isUppercase) {
                result.append("_")
            }
            result.append(contentsOf: c.lowercased())
        }
        return result
    }
}
