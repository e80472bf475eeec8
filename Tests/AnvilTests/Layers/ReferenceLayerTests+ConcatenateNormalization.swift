import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ReferenceLayerTests``: a BatchNormalization and an activation after a concatenation
/// (DenseNet's concatenation → norm → relu), fused into the concatenation along the channels and
/// applied after it otherwise, against the naive reference.
extension ReferenceLayerTests {
    /// `x` and 1×1 convolutions `b0`, `b1`, ... of it with `widths` channels (random weights): the
    /// naive branches and their parameters, to be joined.
    static func branches(_ x: RefTensor, widths: [Int], _ rng: inout RefRandom) -> ([RefTensor], [String: [Float]]) {
        var parameters: [String: [Float]] = [:]
        var branches = [x]
        for (index, width) in widths.enumerated() {
            let w = rng.floats(width * x.c), b = rng.floats(width)
            parameters["b\(index)_W"] = w; parameters["b\(index)_b"] = b
            branches.append(Naive.convolution(x, weights: w, bias: b, outputChannels: width, kernel: (1, 1)))
        }
        return (branches, parameters)
    }

    /// The Anvil branches ``branches(_:widths:_:)`` computes: `input` and its 1×1 convolutions.
    static func branchTensors(_ input: SymbolicTensor, widths: [Int]) -> [SymbolicTensor] {
        [input] + widths.indices.map { input --> Convolution(kernel: (1, 1), channels: widths[$0], name: "b\($0)") }
    }

    @Test("Concatenate → BatchNormalization → activation: along channels (fused), an activation alone, along the height, with a second reader",
          arguments: 0 ..< 8)
    func concatenateNormalization(seed: Int) throws {
        var rng = RefRandom(seed: seed + 17_500)
        // Large enough, now and then, to cross the kernel's chunks and split across threads.
        let side = seed % 2 == 0 ? rng.int(1 ... 4) : rng.int(20 ... 30)
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: side, w: rng.int(1 ... 4) * (seed % 2 == 0 ? 1 : 8), c: rng.int(1 ... 9), -3, 3)
        let widths = (0 ..< rng.int(1 ... 3)).map { _ in rng.pick([1, 3, 8, 13, 40]) }
        let (branches, branchParameters) = Self.branches(x, widths: widths, &rng)
        let joined = Naive.concatenate(branches)
        let epsilon: Float = 1e-5
        let bn = Self.normalization(&rng, channels: joined.c, prefix: "bn")
        let parameters = branchParameters.merging(bn.parameters) { $1 }
        let activation = rng.pick([ActivationFunction.relu, .relu6, .sigmoid, .leakyRelu(alpha: 0.1)])
        func normalized(_ t: RefTensor) -> RefTensor {
            Naive.activation(Naive.batchNormalization(t, gamma: bn.gamma, beta: bn.beta, mean: bn.mean, variance: bn.variance,
                                                      epsilon: epsilon), activation)
        }
        func branchTensors(_ input: SymbolicTensor) -> [SymbolicTensor] { Self.branchTensors(input, widths: widths) }
        refExpectClose(try refRun(x, parameters: parameters) {
            branchTensors($0) --> Concatenate(name: "cat") --> BatchNormalization(epsilon: epsilon, name: "bn")
                --> Activation(activation)
        }, normalized(joined), "seed \(seed): \(x) + \(widths) --> BN --> \(activation)")

        // An activation alone after the concatenation is fused too.
        refExpectClose(try refRun(x, parameters: branchParameters) {
            branchTensors($0) --> Concatenate(name: "cat") --> Activation(activation)
        }, Naive.activation(joined, activation), "seed \(seed): \(x) + \(widths) --> \(activation)")

        // The joined tensor read again: the concatenation keeps its output and the BN its own step.
        refExpectClose(try refRun(x, parameters: parameters) {
            let cat = branchTensors($0) --> Concatenate(name: "cat")
            return [cat --> BatchNormalization(epsilon: epsilon, name: "bn") --> Activation(activation), cat] --> Add()
        }, Naive.add([normalized(joined), joined]), "seed \(seed): BN --> \(activation), plus the joined tensor")

        // Along the height: the kernel does not take the normalization; the compiler applies it.
        let bnHeight = Self.normalization(&rng, channels: x.c, prefix: "bn")
        var stacked = RefTensor(zerosN: x.n, h: 2 * x.h, w: x.w, c: x.c)
        for b in 0 ..< x.n { for y in 0 ..< 2 * x.h { for px in 0 ..< x.w { for ch in 0 ..< x.c {
            stacked[b, y, px, ch] = x[b, y % x.h, px, ch]
        } } } }
        refExpectClose(try refRun(x, parameters: bnHeight.parameters) {
            [$0, $0] --> Concatenate(axis: 1, name: "cat") --> BatchNormalization(epsilon: epsilon, name: "bn")
                --> Activation(activation)
        }, Naive.activation(Naive.batchNormalization(stacked, gamma: bnHeight.gamma, beta: bnHeight.beta, mean: bnHeight.mean,
                                                     variance: bnHeight.variance, epsilon: epsilon), activation),
        "seed \(seed): height-stacked \(x) --> BN --> \(activation)")
    }
}
