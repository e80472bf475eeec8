import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// `RoiAlign` against a naive float64 reference of ONNX's definition written here in NCHW
/// (regions, bins, samples and the clamped bilinear read spelled out), over both modes, both
/// coordinate mappings, fixed and adaptive sampling and a spatial scale.
@Suite struct RoiAlignKernelTests {
    /// ONNX RoiAlign over NCHW `x` [n][c][h][w]: output [R][C][oh][ow].
    static func naive(_ x: [Double], n: Int, c: Int, h: Int, w: Int, rois: [Double], indices: [Int], oh: Int, ow: Int,
                      ratio: Int, scale: Double, halfPixel: Bool, max useMax: Bool) -> [Double] {
        func at(_ b: Int, _ ch: Int, _ yy: Int, _ xx: Int) -> Double { x[((b * c + ch) * h + yy) * w + xx] }
        var out: [Double] = []
        for r in 0 ..< indices.count {
            let shift = halfPixel ? 0.5 : 0
            let x1 = rois[r * 4] * scale - shift, y1 = rois[r * 4 + 1] * scale - shift
            var rw = rois[r * 4 + 2] * scale - shift - x1, rh = rois[r * 4 + 3] * scale - shift - y1
            if !halfPixel { rw = Swift.max(rw, 1); rh = Swift.max(rh, 1) }
            let bh = rh / Double(oh), bw = rw / Double(ow)
            // (Python's range of a negative count is empty; a reversed region samples nothing.)
            let gh = ratio > 0 ? ratio : Swift.max(0, Int((rh / Double(oh)).rounded(.up)))
            let gw = ratio > 0 ? ratio : Swift.max(0, Int((rw / Double(ow)).rounded(.up)))
            for ch in 0 ..< c { for py in 0 ..< oh { for px in 0 ..< ow {
                var acc = 0.0, seen = false
                for iy in 0 ..< gh { for ix in 0 ..< gw {
                    var yy = y1 + Double(py) * bh + (Double(iy) + 0.5) * bh / Double(gh)
                    var xx = x1 + Double(px) * bw + (Double(ix) + 0.5) * bw / Double(gw)
                    var terms = [0.0, 0.0, 0.0, 0.0]
                    if !(yy < -1 || yy > Double(h) || xx < -1 || xx > Double(w)) {
                        yy = Swift.max(yy, 0); xx = Swift.max(xx, 0)
                        var ylo = Int(yy), xlo = Int(xx), yhi = ylo + 1, xhi = xlo + 1
                        if ylo >= h - 1 { ylo = h - 1; yhi = h - 1; yy = Double(ylo) }
                        if xlo >= w - 1 { xlo = w - 1; xhi = w - 1; xx = Double(xlo) }
                        let ly = yy - Double(ylo), lx = xx - Double(xlo)
                        let b = indices[r]
                        terms = [(1 - ly) * (1 - lx) * at(b, ch, ylo, xlo), (1 - ly) * lx * at(b, ch, ylo, xhi),
                                 ly * (1 - lx) * at(b, ch, yhi, xlo), ly * lx * at(b, ch, yhi, xhi)]
                    }
                    if useMax {
                        let v = terms.max()!
                        acc = seen ? Swift.max(acc, v) : v
                    } else {
                        acc += terms.reduce(0, +)
                    }
                    seen = true
                } }
                out.append(useMax ? acc : acc / Double(Swift.max(gh * gw, 1)))
            } } }
        }
        return out
    }

    @Test("Matches the naive definition", arguments: RoiAlignMode.allCases, RoiAlignCoordinates.allCases)
    func matchesNaive(mode: RoiAlignMode, coordinates: RoiAlignCoordinates) throws {
        var rng = RefRandom(seed: 43)
        let (n, c, h, w, oh, ow, regions, batch) = (2, 3, 6, 7, 3, 2, 5, 2)
        for (ratio, scale) in [(2, 1.0), (0, 0.5), (1, 2.0)] {
            var features: [Float] = [], rois: [Float] = [], indices: [Float] = []
            var expected: [Float] = []
            for _ in 0 ..< batch {
                let x = rng.floats(n * c * h * w)
                var r: [Float] = [], idx: [Int] = []
                for k in 0 ..< regions {
                    let x1 = rng.float(-2, 8), y1 = rng.float(-2, 7)
                    // One region reversed (malformed), one tiny; the rest ordinary.
                    let x2 = k == 0 ? x1 - 1 : x1 + (k == 1 ? 0.2 : rng.float(0.5, 9)), y2 = y1 + (k == 1 ? 0.1 : rng.float(0.5, 8))
                    r += [x1, y1, x2, y2].map { $0 / Float(scale) }
                    idx.append(rng.int(0 ... n - 1))
                }
                // Features NCHW → NHWC for the layer.
                for b in 0 ..< n { for y in 0 ..< h { for xx in 0 ..< w { for ch in 0 ..< c { features.append(x[((b * c + ch) * h + y) * w + xx]) } } } }
                rois += r
                indices += idx.map(Float.init)
                let reference = Self.naive(x.map(Double.init), n: n, c: c, h: h, w: w, rois: r.map(Double.init), indices: idx, oh: oh, ow: ow,
                                           ratio: ratio, scale: scale, halfPixel: coordinates == .halfPixel, max: mode == .max)
                // [R][C][oh][ow] → [R][oh][ow][C].
                for k in 0 ..< regions { for y in 0 ..< oh { for xx in 0 ..< ow { for ch in 0 ..< c {
                    expected.append(Float(reference[((k * c + ch) * oh + y) * ow + xx]))
                } } } }
            }
            let layer = RoiAlign(mode: mode, coordinates: coordinates, outputHeight: oh, outputWidth: ow, samplingRatio: ratio, spatialScale: Float(scale))
            let shapes = [try Shape(dimensions: [n, h, w, c]), try Shape(dimensions: [regions, 4]), try Shape(dimensions: [regions], elementType: .int64)]
            let output = try runLayerKernel(layer, [features, rois, indices], batch: batch, shapes: shapes)
            #expect(output.shape.dimensions == [regions, oh, ow, c])
            for (k, (got, want)) in zip(output.values, expected).enumerated() {
                #expect(abs(got - want) <= 1e-5 * max(1, abs(want)), "\(mode) \(coordinates) ratio \(ratio) value \(k): \(got) vs \(want)")
            }
        }
    }

    @Test("A batch index outside the maps gives NaN for its region only")
    func badIndex() throws {
        let shapes = [try Shape(dimensions: [1, 2, 2, 1]), try Shape(dimensions: [2, 4]), try Shape(dimensions: [2], elementType: .int64)]
        let output = try runLayerKernel(RoiAlign(samplingRatio: 1), [[1, 2, 3, 4], [0, 0, 2, 2, 0, 0, 2, 2], [0, 3]], batch: 1, shapes: shapes)
        #expect(!output.values[0].isNaN && output.values[1].isNaN)
    }

    @Test("Bad options and shapes are refused, naming the option or input")
    func refusals() throws {
        let good = [try Shape(dimensions: [1, 4, 4, 3]), try Shape(dimensions: [2, 4]), try Shape(dimensions: [2], elementType: .int64)]
        #expect(throws: AnvilError.self) { try RoiAlign(outputHeight: 0).outputShape(for: good) }
        #expect(throws: AnvilError.self) { try RoiAlign(samplingRatio: -1).outputShape(for: good) }
        #expect(throws: AnvilError.self) { try RoiAlign(spatialScale: .nan).outputShape(for: good) }
        #expect(throws: AnvilError.self) { try RoiAlign().outputShape(for: [good[0], try Shape(dimensions: [2, 5]), good[2]]) }
        #expect(throws: AnvilError.self) { try RoiAlign().outputShape(for: [good[0], good[1], try Shape(dimensions: [3])]) }
        #expect(throws: AnvilError.self) { try RoiAlign().outputShape(for: [Shape.vector(4), good[1], good[2]]) }
        #expect(try RoiAlign(outputHeight: 2, outputWidth: 3).outputShape(for: good).dimensions == [2, 2, 3, 3])
    }
}
