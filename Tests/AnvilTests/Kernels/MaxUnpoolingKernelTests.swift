import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// `MaxPoolingIndices` and `MaxUnpooling` against naive float64 references written here in
/// NCHW: the position of each window's first maximum over the whole batch (row- and
/// column-major), and the scatter of values to positions in the unpooled batch.
@Suite struct MaxUnpoolingKernelTests {
    /// ONNX MaxPool's Indices over x [n][c][h][w]: [n][c][oh][ow] positions.
    static func naiveIndices(_ x: [Double], n: Int, c: Int, h: Int, w: Int, kernel: (Int, Int), stride: (Int, Int), dilation: (Int, Int),
                             pads: (Int, Int), out: (Int, Int), columnMajor: Bool) -> [Double] {
        var result: [Double] = []
        for b in 0 ..< n { for ch in 0 ..< c { for i in 0 ..< out.0 { for j in 0 ..< out.1 {
            var best = -Double.infinity, at = (0, 0), found = false
            for ky in 0 ..< kernel.0 { for kx in 0 ..< kernel.1 {
                let y = i * stride.0 - pads.0 + ky * dilation.0, xx = j * stride.1 - pads.1 + kx * dilation.1
                guard y >= 0, y < h, xx >= 0, xx < w else { continue }
                let v = x[((b * c + ch) * h + y) * w + xx]
                if !found || v > best { best = v; at = (y, xx); found = true }
            } }
            let within = columnMajor ? at.1 * h + at.0 : at.0 * w + at.1
            result.append(Double((b * c + ch) * h * w + within))
        } } } }
        return result
    }

    /// NCHW values to channels-last, per item.
    static func channelsLast(_ v: [Float], n: Int, c: Int, h: Int, w: Int) -> [Float] {
        var out: [Float] = []
        for b in 0 ..< n { for y in 0 ..< h { for x in 0 ..< w { for ch in 0 ..< c { out.append(v[((b * c + ch) * h + y) * w + x]) } } } }
        return out
    }

    @Test("Indices match the naive search, row- and column-major, batch offsets included", arguments: [false, true])
    func indices(columnMajor: Bool) throws {
        var rng = RefRandom(seed: 5)
        let (n, c, h, w) = (2, 3, 7, 6)
        for (kernel, stride, dilation, pads) in [((2, 2), (2, 2), (1, 1), (0, 0)), ((3, 3), (1, 2), (1, 1), (1, 1)), ((2, 3), (2, 1), (2, 1), (1, 0))] {
            // Values in few levels, so that ties (first maximum wins) occur.
            let x = (0 ..< n * c * h * w).map { _ in Float(rng.int(0 ... 5)) }
            let window = PoolingWindow(kernel: kernel, stride: stride, padding: .explicit(top: pads.0, left: pads.1, bottom: pads.0, right: pads.1),
                                       dilation: dilation)
            let layer = MaxPoolingIndices(window: window, columnMajor: columnMajor)
            let output = try runLayerKernel(layer, [Self.channelsLast(x, n: n, c: c, h: h, w: w)], batch: n,
                                            shapes: [Shape(height: h, width: w, channels: c)])
            #expect(output.shape.elementType == .int64)
            let (oh, ow) = (output.shape.height, output.shape.width)
            let reference = Self.naiveIndices(x.map(Double.init), n: n, c: c, h: h, w: w, kernel: kernel, stride: stride, dilation: dilation,
                                              pads: pads, out: (oh, ow), columnMajor: columnMajor)
            #expect(output.values == Self.channelsLast(reference.map { Float($0) }, n: n, c: c, h: oh, w: ow), "\(kernel) \(stride) \(dilation) \(pads)")
        }
    }

    @Test("Unpooling scatters each value to its position, across items, into a larger output")
    func unpooling() throws {
        var rng = RefRandom(seed: 9)
        let (n, c, h, w, oh, ow) = (2, 2, 3, 3, 7, 8)  // kernel 2, stride 2, pads 0: unpooled 6 × 6
        let (uh, uw) = (6, 6)
        let values = rng.floats(n * c * h * w)
        // Distinct positions in the unpooled NCHW batch, one pointing into the other item, one invalid.
        var pool = Array(0 ..< n * c * uh * uw)
        for i in stride(from: pool.count - 1, to: 0, by: -1) { pool.swapAt(i, rng.int(0 ... i)) }
        var positions = pool.prefix(n * c * h * w).map(Double.init)
        positions[3] = -1
        positions[4] = 0.5
        var expected = [Double](repeating: 0, count: n * c * oh * ow)
        for (k, p) in positions.enumerated() where p >= 0 && p == p.rounded() {
            let flat = Int(p), b = flat / (c * uh * uw), ch = (flat / (uh * uw)) % c, y = (flat % (uh * uw)) / uw, x = flat % uw
            expected[((b * c + ch) * oh + y) * ow + x] = Double(values[k])
        }
        let layer = MaxUnpooling(kernel: (2, 2), outputSize: (oh, ow))
        let shape = Shape(height: h, width: w, channels: c)
        let output = try runLayerKernel(layer, [Self.channelsLast(values, n: n, c: c, h: h, w: w),
                                                Self.channelsLast(positions.map { Float($0) }, n: n, c: c, h: h, w: w)],
                                        batch: n, shapes: [shape, shape.with(elementType: .int64)])
        #expect(output.shape == Shape(height: oh, width: ow, channels: c))
        #expect(output.values == Self.channelsLast(expected.map { Float($0) }, n: n, c: c, h: oh, w: ow))
    }

    @Test("Pooling, then unpooling with its indices, keeps each window's maximum in place")
    func roundTrip() throws {
        var rng = RefRandom(seed: 3)
        let (h, w, c, batch) = (4, 6, 2, 2)
        let x = rng.floats(batch * h * w * c)
        let shape = Shape(height: h, width: w, channels: c)
        let indices = try runLayerKernel(MaxPoolingIndices(window: PoolingWindow(kernel: (2, 2))), [x], batch: batch, shapes: [shape])
        let pooled = try runLayerKernel(MaxPooling(kernel: (2, 2)), [x], batch: batch, shapes: [shape])
        let restored = try runLayerKernel(MaxUnpooling(kernel: (2, 2)), [pooled.values, indices.values], batch: batch,
                                          shapes: [pooled.shape, indices.shape])
        for (k, value) in restored.values.enumerated() {
            // Each kept value is its window's maximum in place; the others are 0.
            #expect(value == 0 || value == x[k], "value \(k)")
        }
        #expect(restored.values.filter { $0 != 0 }.sorted() == pooled.values.filter { $0 != 0 }.sorted())
    }

    @Test("Sizes and shapes that do not fit are refused")
    func refusals() throws {
        let shape = Shape(height: 2, width: 2, channels: 1)
        #expect(throws: AnvilError.self) { try MaxUnpooling(kernel: (2, 2), outputSize: (3, 3)).outputShape(for: [shape, shape]) }
        #expect(throws: AnvilError.self) { try MaxUnpooling(kernel: (2, 2)).outputShape(for: [shape, Shape(height: 2, width: 3, channels: 1)]) }
        #expect(throws: AnvilError.self) { try MaxUnpooling(kernel: (2, 2), padding: .same).outputShape(for: [shape, shape]) }
        #expect(throws: AnvilError.self) { try MaxUnpooling(kernel: (0, 2)).outputShape(for: [shape, shape]) }
        #expect(throws: AnvilError.self) { try MaxUnpooling(kernel: (2, 2), stride: (Int.max, 1)).outputShape(for: [shape, shape]) }
        #expect(throws: AnvilError.self) { try MaxUnpooling(kernel: (2, 2), padding: .explicit(top: -1, left: 0, bottom: 0, right: 0)).outputShape(for: [shape, shape]) }
        #expect(try MaxUnpooling(kernel: (2, 2)).outputShape(for: [shape, shape]) == Shape(height: 4, width: 4, channels: 1))
        #expect(throws: AnvilError.self) { try MaxPoolingIndices(window: PoolingWindow(kernel: (3, 3))).outputShape(for: [shape]) }
    }
}
