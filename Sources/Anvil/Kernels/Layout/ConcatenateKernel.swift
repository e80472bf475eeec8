/// Concatenates inputs along channels, pixel by pixel; then, when the compiler fused them, a
/// following BatchNormalization's per-channel `scale · x + shift` and an activation (DenseNet's
/// concatenation → norm → relu before each layer: one pass over the joined tensor, not three).
/// With a fused channel shuffle each joined channel is written where the shuffle moves it
/// (ShuffleNet's concatenation → shuffle: one pass, not two).
struct ConcatenateKernel: RangeKernel, EpilogueReportingKernel {
    let channels: [Int]
    let pixelsPerImage: Int
    /// The folded BatchNormalization's scale and shift per output channel (in the output's
    /// order, shuffled when a shuffle is fused), if any.
    var affine: (scale: ParameterData, shift: ParameterData)? = nil
    /// The activation applied last (after the affine map).
    var activation: ActivationFunction = .none
    /// The groups of a fused ``ChannelShuffle``, if any: joined channel `j·k + i` is written at
    /// `i·groups + j` (k = channels ÷ groups).
    var shuffleGroups: Int? = nil
    /// Where each input's channels lie in the buffer it reads: from channel `first` of `stride`
    /// per pixel (a folded channel ``Slice`` reads the sliced tensor); empty: each input whole.
    var windows: [(first: Int, stride: Int)] = []
    /// The body of the C affine map (``InstructionSet/current`` when built); tests force each one.
    var instructionSet = InstructionSet.current

    /// The activation the kernel applies to its output, last.
    var appliedActivation: ActivationFunction { activation }
    /// It takes no residual.
    var addsResidual: Bool { false }
    /// The fused shuffle's groups.
    var appliedShuffleGroups: Int? { shuffleGroups }

    func run(_ io: KernelIO) {
        let total = channels.reduce(0, +)
        let rows = io.batch * pixelsPerImage
        Compute.parallelFor(rows, costPerItem: total, KernelRange(kernel: self, io: io))
    }

    /// The loop body over `range` (see ``run(_:)``).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let total = channels.reduce(0, +)
        // With a fused epilogue, a chunk at a time: the affine map and the activation rewrite the
        // joined pixels while they are still in L1 (``ChannelAffineKernel/chunkPixels(channels:)``).
        let step = affine == nil && activation == .none ? max(1, range.count) : ChannelAffineKernel.chunkPixels(channels: total)
        for start in stride(from: range.lowerBound, to: range.upperBound, by: step) {
            let end = min(range.upperBound, start + step)
            if let shuffleGroups {
                copyShuffled(rows: start ..< end, groups: shuffleGroups, total: total, io)
            } else {
                for row in start ..< end {
                    var out = io.output + row * total
                    for index in channels.indices {
                        let count = channels[index]
                        out.update(from: source(index, row: row, io), count: count)
                        out += count
                    }
                }
            }
            ChannelAffineKernel.apply(affine, then: activation, input: io.output, output: io.output, channels: total,
                                      pixels: start ..< end, instructionSet: instructionSet)
        }
    }

    /// The first channel of input `index` at pixel `row` (see ``windows``).
    @inline(__always)
    private func source(_ index: Int, row: Int, _ io: KernelIO) -> UnsafePointer<Float> {
        guard !windows.isEmpty else { return io.inputs[index] + row * channels[index] }
        return io.inputs[index] + row * windows[index].stride + windows[index].first
    }

    /// Joins `rows` in the order of a shuffle of `groups` groups: the joined channels of group
    /// `j` land every `groups`-th float from `j`. When each input is one group (ShuffleNet's two
    /// halves) the inputs are woven together; otherwise each input is copied a group's run at a
    /// time with stride `groups`.
    private func copyShuffled(rows: Range<Int>, groups: Int, total: Int, _ io: KernelIO) {
        let k = total / groups
        // Compared element by element: an array literal here would allocate on every call.
        if groups == 2, channels.count == 2, channels[0] == k, channels[1] == k {
            // Two streams woven pair by pair (the compiler vectorises it with SSE unpacks: 2 pairs a step).
            for row in rows {
                let a = source(0, row: row, io), b = source(1, row: row, io), out = io.output + row * total
                for i in 0 ..< k {
                    out[2 &* i] = a[i]
                    out[2 &* i &+ 1] = b[i]
                }
            }
            return
        }
        for row in rows {
            let out = io.output + row * total
            var joined = 0
            for index in channels.indices {
                let count = channels[index], input = source(index, row: row, io)
                var copied = 0
                while copied < count {
                    // A run of joined channels j·k + i ..< j·k + k (or the input's end) goes to i·g + j, stride g.
                    let channel = joined + copied, group = channel / k, first = channel % k
                    let run = min(count - copied, k - first)
                    let target = out + first * groups + group, source = input + copied
                    for t in 0 ..< run { target[t &* groups] = source[t] }
                    copied += run
                }
                joined += count
            }
        }
    }
}
