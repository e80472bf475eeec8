import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ReferenceLayerTests``: a ChannelShuffle after a concatenation along the channels
/// (ShuffleNet's block ending), fused into the concatenation, with and without a BatchNormalization
/// and activation between them, against the naive reference.
extension ReferenceLayerTests {
    /// `t` with its channels shuffled in `groups` groups (``Naive/channelShuffle(_:groups:)``).
    static func shuffled(_ t: RefTensor, groups: Int) -> RefTensor {
        Naive.channelShuffle(RefArray(dims: [t.n, t.h, t.w, t.c], v: t.v), groups: groups).refTensor
    }

    @Test("Concatenate → ChannelShuffle: ShuffleNet's two halves, uneven inputs, a norm and activation between, a second reader",
          arguments: 0 ..< 8)
    func concatenateShuffle(seed: Int) throws {
        var rng = RefRandom(seed: seed + 18_100)
        // Large enough, now and then, to cross the kernel's chunks and split across threads.
        let side = seed % 2 == 0 ? rng.int(1 ... 4) : rng.int(20 ... 30)
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: side, w: rng.int(1 ... 4) * (seed % 2 == 0 ? 1 : 8),
                           c: rng.int(1 ... 9), -3, 3)
        // Even seeds: ShuffleNet's halves (the input and a branch as wide, 2 groups); odd: any widths
        // and any group count dividing the total, so inputs straddle groups.
        let widths = seed % 2 == 0 ? [x.c] : (0 ..< rng.int(1 ... 3)).map { _ in rng.pick([1, 3, 8, 13]) }
        let (branches, parameters) = Self.branches(x, widths: widths, &rng)
        let joined = Naive.concatenate(branches)
        let divisors = (1 ... joined.c).filter { joined.c % $0 == 0 }
        let groups = seed % 2 == 0 ? 2 : rng.pick(divisors.count > 1 ? Array(divisors.dropFirst()) : divisors)
        func branchTensors(_ input: SymbolicTensor) -> [SymbolicTensor] { Self.branchTensors(input, widths: widths) }
        let label = "seed \(seed): \(x) + \(widths), \(groups) groups"

        refExpectClose(try refRun(x, parameters: parameters) {
            branchTensors($0) --> Concatenate(name: "cat") --> ChannelShuffle(groups: groups)
        }, Self.shuffled(joined, groups: groups), label)

        // A norm and an activation between: fused too, each channel's scale and shift moved with it.
        let epsilon: Float = 1e-5
        let bn = Self.normalization(&rng, channels: joined.c, prefix: "bn")
        let activation = rng.pick([ActivationFunction.relu, .relu6, .sigmoid])
        let normalized = Naive.activation(Naive.batchNormalization(joined, gamma: bn.gamma, beta: bn.beta, mean: bn.mean,
                                                                   variance: bn.variance, epsilon: epsilon), activation)
        refExpectClose(try refRun(x, parameters: parameters.merging(bn.parameters) { $1 }) {
            branchTensors($0) --> Concatenate(name: "cat") --> BatchNormalization(epsilon: epsilon, name: "bn")
                --> Activation(activation) --> ChannelShuffle(groups: groups)
        }, Self.shuffled(normalized, groups: groups), "\(label), BN --> \(activation) between")

        // The joined tensor read again: the concatenation keeps its order and the shuffle its own step.
        refExpectClose(try refRun(x, parameters: parameters) {
            let cat = branchTensors($0) --> Concatenate(name: "cat")
            return [cat --> ChannelShuffle(groups: groups), cat] --> Add()
        }, Naive.add([Self.shuffled(joined, groups: groups), joined]), "\(label), plus the joined tensor")
    }

    /// Channels `first`, `first + step`, ... (`count` of them) of `t`.
    static func channels(_ t: RefTensor, first: Int, count: Int, step: Int = 1) -> RefTensor {
        Naive.slice(RefArray(dims: [t.n, t.h, t.w, t.c], v: t.v), axis: 3, first: first, count: count, step: step).refTensor
    }

    @Test("Channel slices read by a concatenation along channels: ShuffleNet's block, both halves swapped, a second reader, steps and one channel",
          arguments: 0 ..< 6)
    func slicesIntoConcatenation(seed: Int) throws {
        var rng = RefRandom(seed: seed + 18_200)
        let side = seed % 2 == 0 ? rng.int(1 ... 4) : rng.int(20 ... 30)
        let k = rng.pick([1, 2, 5, 8, 13])
        let x = rng.tensor(n: rng.pick(refBatchSizes), h: side, w: rng.int(1 ... 4) * (seed % 2 == 0 ? 1 : 8), c: 2 * k, -3, 3)
        let w = rng.floats(k * k), b = rng.floats(k)
        let kept = Self.channels(x, first: 0, count: k), processed = Self.channels(x, first: k, count: k)
        let branch = Naive.convolution(processed, weights: w, bias: b, outputChannels: k, kernel: (1, 1))

        // ShuffleNet's block: the kept half is joined from where it lies, the processed half feeds a convolution.
        refExpectClose(try refRun(x, parameters: ["conv_W": w, "conv_b": b]) {
            [$0 --> Slice(axis: -1, start: 0, end: k), $0 --> Slice(axis: -1, start: k, end: 2 * k)
                --> Convolution(kernel: (1, 1), channels: k, name: "conv")]
                --> Concatenate() --> ChannelShuffle(groups: 2)
        }, Self.shuffled(Naive.concatenate([kept, branch]), groups: 2), "seed \(seed): ShuffleNet block on \(x)")

        // Both halves swapped (two windows of one tensor), the second from a negative start.
        refExpectClose(try refRun(x) {
            [$0 --> Slice(axis: -1, start: -k), $0 --> Slice(axis: 3, start: 0, end: k)] --> Concatenate()
        }, Naive.concatenate([processed, kept]), tolerance: 0, "seed \(seed): halves swapped")

        // A slice also read by an activation stays a step of its own; so do a slice with step 2 and a
        // concatenation of one input. One channel is a window too.
        let stepped = Self.channels(x, first: 1, count: k, step: 2)
        refExpectClose(try refRun(x) {
            let half = $0 --> Slice(axis: -1, start: 0, end: k)
            return [half, half --> Activation(.relu), $0 --> Slice(axis: -1, start: 1, step: 2),
                    [$0 --> Slice(axis: -1, start: 2 * k - 1)] --> Concatenate(), $0 --> Slice(axis: -1, start: k, end: k + 1)]
                --> Concatenate()
        }, Naive.concatenate([kept, Naive.activation(kept, .relu), stepped, Self.channels(x, first: 2 * k - 1, count: 1),
                              Self.channels(x, first: k, count: 1)]), tolerance: 0, "seed \(seed): second reader, step 2, one channel")
    }
}

