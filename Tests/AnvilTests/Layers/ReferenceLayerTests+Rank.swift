import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ReferenceLayerTests``: the layout layers and tensors of rank 1 to 4 against the naive reference.
extension ReferenceLayerTests {
    /// Random values of `dims` (batch first).
    static func randomArray(_ dims: [Int], _ rng: inout RefRandom) -> RefArray {
        RefArray(dims: dims, v: (0 ..< dims.reduce(1, *)).map { _ in Double(rng.float()) })
    }

    /// Runs `build` on an input of `x`'s shape through Anvil.
    static func run(_ x: RefArray, parameters: [String: [Float]] = [:], layout: WeightLayout = .forge,
                    _ build: (Input) -> SymbolicTensor) throws -> Tensor {
        let input = Input(shape: try Shape(dimensions: Array(x.dims.dropFirst())))
        let model = try Model(input: input, output: build(input))
        try model.compile(layout: layout, from: ArrayParameterSource(parameters))
        return try model.predict(try x.tensor())
    }

    @Test("Transpose of rank 2 to 4 matches a naive permutation", arguments: [
        ([2, 5], [0, 1]), ([2, 3, 7], [0, 2, 1]), ([1, 4, 5, 6], [0, 3, 1, 2]), ([2, 4, 5, 6], [0, 2, 3, 1]),
        ([3, 2, 9, 17], [0, 1, 3, 2]), ([1, 3, 4, 5], [0, 3, 2, 1]),
    ])
    func transposeMatchesReference(dims: [Int], permutation: [Int]) throws {
        var rng = RefRandom(seed: dims.reduce(7, *))
        let x = Self.randomArray(dims, &rng)
        let y = try Self.run(x) { $0 --> Transpose(permutation: permutation) }
        refExpectClose(y, Naive.transpose(x, permutation).refTensor, tolerance: 0, "transpose \(dims) by \(permutation)")
    }

    @Test("ChannelShuffle matches the formula for every group count dividing the channels")
    func channelShuffleMatchesReference() throws {
        var rng = RefRandom(seed: 12)
        for (dims, groups) in [([2, 3, 4, 12], 3), ([1, 2, 2, 24], 2), ([1, 5, 6, 16], 4), ([2, 7, 10], 5), ([3, 8], 8)] {
            let x = Self.randomArray(dims, &rng)
            let y = try Self.run(x) { $0 --> ChannelShuffle(groups: groups) }
            refExpectClose(y, Naive.channelShuffle(x, groups: groups).refTensor, tolerance: 0, "shuffle \(dims) g \(groups)")
        }
    }

    @Test("Slice on every axis with positive and negative steps matches ONNX's clamping")
    func sliceMatchesReference() throws {
        var rng = RefRandom(seed: 5)
        let x = Self.randomArray([2, 5, 6, 7], &rng)
        // (axis, start, end, step) and the expected (first, count) resolved by hand from the ONNX rules.
        let cases: [(Int, Int, Int, Int, Int, Int)] = [
            (1, 1, 4, 1, 1, 3), (2, 0, Int.max, 2, 0, 3), (3, -3, -1, 1, 4, 2), (-1, 6, Int.min, -2, 6, 4),
            (1, 100, 0, -1, 4, 4), (2, -100, 100, 4, 0, 2), (3, 2, 3, 1, 2, 1),
        ]
        for (axis, start, end, step, first, count) in cases {
            let y = try Self.run(x) { $0 --> Slice(axis: axis, start: start, end: end, step: step) }
            let resolved = axis < 0 ? axis + 4 : axis
            refExpectClose(y, Naive.slice(x, axis: resolved, first: first, count: count, step: step).refTensor, tolerance: 0,
                           "slice axis \(axis) \(start)..<\(end) step \(step)")
        }
    }

    @Test("Concatenate on every axis, and of one input, matches the naive join")
    func concatenateOnAnyAxis() throws {
        var rng = RefRandom(seed: 9)
        for axis in 1 ... 3 {
            var dimsA = [2, 3, 4, 5], dimsB = [2, 3, 4, 5]
            dimsA[axis] = 2
            dimsB[axis] = 3
            let a = Self.randomArray(dimsA, &rng), b = Self.randomArray(dimsB, &rng)
            let ia = Input(shape: try Shape(dimensions: Array(dimsA.dropFirst()))), ib = Input(shape: try Shape(dimensions: Array(dimsB.dropFirst())))
            let model = try Model(inputs: [ia, ib], outputs: [[ia, ib] --> Concatenate(axis: axis)])
            try model.compile(from: ArrayParameterSource([:]))
            let y = try model.predict([try a.tensor(), try b.tensor()])[0]
            refExpectClose(y, Naive.concatenate([a, b], axis: axis).refTensor, tolerance: 0, "axis \(axis)")
        }
        let x = Self.randomArray([2, 3, 9], &rng)
        let one = try Self.run(x) { [$0] --> Concatenate() }
        refExpectClose(one, x.refTensor, tolerance: 0, "one input")
    }

    @Test("Reshape, Squeeze, Unsqueeze and Flatten(axis:) keep the row-major order")
    func reshapesKeepOrder() throws {
        var rng = RefRandom(seed: 3)
        let x = Self.randomArray([2, 3, 4, 6], &rng)
        let cases: [(Layer, [Int])] = [
            (Reshape([-1, 6]), [2, 12, 6]), (Reshape([0, 24]), [2, 3, 24]), (Reshape([72]), [2, 72]),
            (Reshape([2, -1, 3]), [2, 2, 12, 3]), (Flatten(axis: 2), [2, 3, 24]), (Flatten(axis: 3), [2, 12, 6]),
            (Flatten(), [2, 72]),
        ]
        for (layer, dims) in cases {
            let y = try Self.run(x) { $0 --> layer }
            refExpectClose(y, RefArray(dims: dims, v: x.v).refTensor, tolerance: 0, "\(layer.typeName) to \(dims)")
        }
        let v = Self.randomArray([2, 1, 5], &rng)
        refExpectClose(try Self.run(v) { $0 --> Squeeze() }, RefArray(dims: [2, 5], v: v.v).refTensor, tolerance: 0, "squeeze")
        refExpectClose(try Self.run(v) { $0 --> Squeeze(axes: [1]) }, RefArray(dims: [2, 5], v: v.v).refTensor, tolerance: 0, "squeeze 1")
        refExpectClose(try Self.run(v) { $0 --> Unsqueeze(axes: [2]) }, RefArray(dims: [2, 1, 1, 5], v: v.v).refTensor, tolerance: 0, "unsqueeze")
    }

    @Test("DepthToSpace and SpaceToDepth in both modes match ONNX's formulas", arguments: [BlockOrder.depthColumnRow, .columnRowDepth])
    func depthToSpaceMatchesReference(mode: BlockOrder) throws {
        var rng = RefRandom(seed: 21)
        let crd = mode == .columnRowDepth
        let x = Self.randomArray([2, 3, 4, 12], &rng)
        let y = try Self.run(x) { $0 --> DepthToSpace(blockSize: 2, mode: mode) }
        refExpectClose(y, Naive.depthToSpace(x, block: 2, crd: crd).refTensor, tolerance: 0, "depth to space \(mode)")
        let s = Self.randomArray([1, 6, 9, 2], &rng)
        let z = try Self.run(s) { $0 --> SpaceToDepth(blockSize: 3, mode: mode) }
        refExpectClose(z, Naive.spaceToDepth(s, block: 3, crd: crd).refTensor, tolerance: 0, "space to depth \(mode)")
    }

    @Test("Split gives the parts a Slice per part gives")
    func splitIsSlices() throws {
        var rng = RefRandom(seed: 4)
        let x = Self.randomArray([2, 4, 10], &rng)
        let input = Input(shape: .sequence(length: 4, channels: 10))
        let parts = input --> Split(axis: -1, sizes: [3, 7])
        let model = try Model(inputs: [input], outputs: parts)
        try model.compile(from: ArrayParameterSource([:]))
        let y = try model.predict([try x.tensor()])
        refExpectClose(y[0], Naive.slice(x, axis: 2, first: 0, count: 3, step: 1).refTensor, tolerance: 0, "part 1")
        refExpectClose(y[1], Naive.slice(x, axis: 2, first: 3, count: 7, step: 1).refTensor, tolerance: 0, "part 2")
    }

    @Test("A sequence runs 1-D convolution and pooling as height-1 images; Dense acts per position")
    func sequenceLayers() throws {
        var rng = RefRandom(seed: 31)
        let (n, length, c) = (2, 11, 3)
        let x = Self.randomArray([n, length, c], &rng)
        let w = (0 ..< 4 * 3 * c).map { _ in rng.float() }, bias = (0 ..< 4).map { _ in rng.float() }
        let dw = (0 ..< 5 * 4).map { _ in rng.float() }, db = (0 ..< 5).map { _ in rng.float() }
        let y = try Self.run(x, parameters: ["conv_W": w, "conv_b": bias, "fc_W": dw, "fc_b": db]) {
            $0 --> Convolution(kernel: 3, channels: 4, stride: 1, padding: .same, activation: .relu, name: "conv")
                --> MaxPooling(kernel: 2) --> AveragePooling(kernel: 2, stride: 1) --> Dense(neurons: 5, name: "fc")
        }
        #expect(y.shape == .sequence(length: 4, channels: 5))
        // The same network on a 1 × L image through the naive reference.
        var r = Naive.convolution(RefTensor(n: n, h: 1, w: length, c: c, v: x.v), weights: w, bias: bias, outputChannels: 4,
                                  kernel: (1, 3), padding: .same, activation: .relu)
        r = Naive.maxPool(r, kernel: (1, 2), stride: (1, 2))!
        r = Naive.averagePool(r, kernel: (1, 2), stride: (1, 1))!
        let positions = r.w
        var out = RefTensor(zerosN: n, h: 1, w: positions, c: 5)
        out.rank = 3
        for b in 0 ..< n { for p in 0 ..< positions { for o in 0 ..< 5 {
            var sum = Double(db[o])
            for ch in 0 ..< 4 { sum += Double(dw[o * 4 + ch]) * r[b, 0, p, ch] }
            out[b, 0, p, o] = sum
        } } }
        refExpectClose(y, out, "conv1d → pools → dense per position")
    }

    @Test("1-D Lp pooling on a sequence: the height-1 window of the naive Lp pooling", arguments: [1, 2, 3] as [Float])
    func sequenceLpPooling(p: Float) throws {
        var rng = RefRandom(seed: 32)
        let (n, length, c) = (2, 13, 5)
        let x = Self.randomArray([n, length, c], &rng)
        let y = try Self.run(x) { $0 --> LpPooling(p: p, kernel: 3, stride: 2, padding: .explicit(top: 0, left: 1, bottom: 0, right: 1)) }
        var expected = try #require(Naive.lpPool(RefTensor(n: n, h: 1, w: length, c: c, v: x.v), p: Double(p), kernel: (1, 3),
                                                 stride: (1, 2), padding: .explicit(top: 0, left: 1, bottom: 0, right: 1)))
        expected.rank = 3
        #expect(y.shape == .sequence(length: 7, channels: c))
        refExpectClose(y, expected, "lp pool 1-D p \(p)")
    }
}

extension ReferenceLayerTests {
    @Test("Transpose → Flatten → Dense is folded (no data moved) and matches the naive transpose then dense",
          arguments: [WeightLayout.forge, .pytorch, .tensorflow])
    func transposeFlattenDenseFolds(layout: WeightLayout) throws {
        var rng = RefRandom(seed: 17)
        let x = Self.randomArray([2, 3, 4, 5], &rng)
        let permutation = [0, 3, 2, 1]
        let w = (0 ..< 6 * 60).map { _ in rng.float() }, b = (0 ..< 6).map { _ in rng.float() }
        // The layouts' weights for a vector input: [out][in] (forge, pytorch) or [in][out] (tensorflow).
        let given = layout == .tensorflow ? (0 ..< 60 * 6).map { k in w[(k % 6) * 60 + k / 6] } : w
        let input = Input(shape: Shape(height: 3, width: 4, channels: 5))
        let model = try Model(input: input, output: input --> Transpose(permutation: permutation)
            --> Flatten() --> Dense(neurons: 6, activation: .relu, name: "fc"))
        #expect(model.plan.steps.count == 1, "Transpose and Flatten fold into the Dense")
        try model.compile(layout: layout, from: ArrayParameterSource(["fc_W": given, "fc_b": b]))
        let y = try model.predict(try x.tensor())
        let t = Naive.transpose(x, permutation)
        var expected = RefTensor(zerosN: 2, h: 1, w: 1, c: 6)
        expected.rank = 2
        for n in 0 ..< 2 { for o in 0 ..< 6 {
            var sum = Double(b[o])
            for i in 0 ..< 60 { sum += Double(w[o * 60 + i]) * t.v[n * 60 + i] }
            expected.v[n * 6 + o] = max(sum, 0)
        } }
        refExpectClose(y, expected, "\(layout)")
    }
}

extension ReferenceLayerTests {
    @Test("The summary and the model file show the true rank: a sequence, a vector and an image round-trip")
    func ranksInSummaryAndModelFile() throws {
        let sequence = Input(shape: .sequence(length: 10, channels: 3), name: "audio")
        let vector = Input(shape: .vector(4), name: "features")
        let conv = sequence --> Convolution(kernel: 3, channels: 8, name: "conv")
        let pooled = conv --> GlobalAveragePooling(name: "gap")
        let joined = [pooled, vector] --> Concatenate(name: "joined")
        let image = joined --> Reshape([2, 2, 3], name: "image")
        let model = try Model(inputs: [sequence, vector], outputs: [image, conv])
        #expect(model.inputShapes == [.sequence(length: 10, channels: 3), .vector(4)])
        #expect(model.outputShapes == [Shape(height: 2, width: 2, channels: 3), .sequence(length: 10, channels: 8)])
        let summary = model.summary()
        for text in ["audio (Input)", "(10, 3)", "(4)", "conv (Convolution)", "(10, 8)", "(8)", "(12)", "(2, 2, 3)"] {
            #expect(summary.contains(text), "summary lacks \(text):\n\(summary)")
        }
        let json = try model.modelFileJSON(name: "ranks")
        let text = json.serialized().filter { !$0.isWhitespace }
        #expect(text.contains(#""shape":[10,3]"#) && text.contains(#""shape":[4]"#), "\(text)")
        let reread = try ModelFile(json: json, source: "ranks", directory: FileManager.default.temporaryDirectory)
        #expect(reread.model.inputShapes == model.inputShapes)
        #expect(reread.model.outputShapes == model.outputShapes)
    }
}

extension ReferenceLayerTests {
    @Test("Slice with extreme starts, ends and steps takes what ONNX takes and never traps")
    func sliceExtremes() throws {
        var rng = RefRandom(seed: 8)
        let x = Self.randomArray([1, 2, 7], &rng)
        // (start, end, step) and the expected (first, count).
        let cases: [(Int, Int, Int, Int, Int)] = [
            (0, Int.max, Int.max, 0, 1), (Int.max, Int.min, Int.min, 6, 1), (Int.min, Int.max, 3, 0, 3),
            (-1, Int.min, -1, 6, 7), (3, 4, Int.max, 3, 1),
        ]
        for (start, end, step, first, count) in cases {
            let y = try Self.run(x) { $0 --> Slice(axis: 2, start: start, end: end, step: step) }
            refExpectClose(y, Naive.slice(x, axis: 2, first: first, count: count, step: step == Int.min || step == Int.max ? 1 : step).refTensor,
                           tolerance: 0, "slice \(start)..<\(end) step \(step)")
        }
    }
}

extension ReferenceLayerTests {
    @Test("Element-wise layers give the largest rank of their inputs")
    func elementwiseKeepsRank() throws {
        let v = Input(shape: .vector(4)), s = Input(shape: .sequence(length: 3, channels: 4))
        let i = Input(width: 2, height: 5, channels: 4)
        let model = try Model(inputs: [v, s, i], outputs: [[v, v] --> Elementwise(.add), [s, v] --> Elementwise(.multiply),
                                                           [v, i] --> Elementwise(.maximum), s --> Activation(.relu)])
        #expect(model.outputShapes == [.vector(4), .sequence(length: 3, channels: 4), Shape(height: 5, width: 2, channels: 4),
                                       .sequence(length: 3, channels: 4)])
    }
}
