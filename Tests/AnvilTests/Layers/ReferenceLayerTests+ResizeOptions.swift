import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// ``ReferenceLayerTests``: Resize's antialiased filters, crop-and-resize and explicit size with
/// scale, against ONNX's definition written out in float64 (`Naive.resizeONNX`).
extension ReferenceLayerTests {
    /// Downsamplings (where antialiasing widens the filter), an identity and upsamplings (where it must not).
    static let antialiasCases: [ResizeCase] = [
        ResizeCase(input: (4, 4), size: (3, 3)), ResizeCase(input: (4, 4), scale: (0.6, 0.6)),
        ResizeCase(input: (9, 7), size: (2, 3)), ResizeCase(input: (12, 5), scale: (0.25, 0.5)),
        ResizeCase(input: (5, 11), scale: (0.34, 0.19)), ResizeCase(input: (6, 6), size: (6, 6)),
        ResizeCase(input: (3, 4), size: (7, 2)), ResizeCase(input: (3, 5), scale: (2.5, 0.7)),
    ]

    @Test("Resize antialias: linear and cubic, every coordinate mapping, with and without excludeOutside",
          arguments: [Resize.Mode.linear, .cubic], [false, true])
    func resizeAntialias(mode: Resize.Mode, excludeOutside: Bool) throws {
        for coordinates in Resize.Coordinates.allCases {
            for testCase in Self.antialiasCases {
                let a: Float = mode == .cubic && excludeOutside ? -0.5 : -0.75
                var rng = RefRandom(seed: testCase.input.0 * 31 + testCase.input.1)
                let x = rng.tensor(n: rng.pick(refBatchSizes), h: testCase.input.0, w: testCase.input.1, c: rng.int(1 ... 3))
                let (oh, ow, scale, length) = Self.resizeGeometry(x, testCase)
                let expected = Naive.resizeONNX(x, outH: oh, outW: ow, scale: scale, length: length, coordinates: coordinates,
                                                mode: mode, a: Double(a), excludeOutside: excludeOutside, antialias: true)
                let y = try refRun(x) { input in
                    if let size = testCase.size {
                        return input --> Resize(height: size.0, width: size.1, coordinates: coordinates, mode: mode,
                                                cubicCoefficient: a, excludeOutside: excludeOutside, antialias: true)
                    }
                    return input --> Resize(scaleHeight: testCase.scale!.0, scaleWidth: testCase.scale!.1,
                                            coordinates: coordinates, mode: mode, cubicCoefficient: a,
                                            excludeOutside: excludeOutside, antialias: true)
                }
                refExpectClose(y, expected, "antialias \(mode) exclude \(excludeOutside) \(coordinates) \(testCase.testDescription)")
            }
        }
    }

    @Test("Resize antialias changes a downsampling and leaves an upsampling as it was")
    func resizeAntialiasOnlyDownsamples() throws {
        var rng = RefRandom(seed: 77)
        let x = rng.tensor(n: 1, h: 8, w: 8, c: 2)
        for mode in [Resize.Mode.linear, .cubic] {
            let down = try refRun(x) { $0 --> Resize(height: 3, width: 3, mode: mode, antialias: true) }
            let plain = Naive.resizeONNX(x, outH: 3, outW: 3, scale: (3.0 / 8, 3.0 / 8), length: (3, 3),
                                         coordinates: .halfPixel, mode: mode)
            let gap = zip(down.values, plain.v).map { abs(Double($0) - $1) }.max() ?? 0
            #expect(gap > 1e-2, "\(mode): antialiased and plain downsampling should differ, max gap \(gap)")
            let up = try refRun(x) { $0 --> Resize(height: 13, width: 11, mode: mode, antialias: true) }
            let plainUp = Naive.resizeONNX(x, outH: 13, outW: 11, scale: (13.0 / 8, 11.0 / 8), length: (13, 11),
                                           coordinates: .halfPixel, mode: mode)
            refExpectClose(up, plainUp, "\(mode) upsampling with antialias")
        }
    }

    /// Crop boxes inside the image, flipped, and reaching past it (extrapolated rows and columns).
    static let cropRegions: [Resize.Region] = [
        Resize.Region(top: 0.4, left: 0.6, bottom: 0.6, right: 0.8), .whole,
        Resize.Region(top: 0.9, left: 0.1, bottom: 0.2, right: 0.7),
        Resize.Region(top: -0.3, left: 0.2, bottom: 1.2, right: 1.7),
        Resize.Region(top: 1.5, left: -2, bottom: 2, right: -1),
    ]

    @Test("Resize tfCropAndResize: nearest, linear and cubic over regions inside, flipped and outside the image",
          arguments: Resize.Mode.allCases)
    func resizeCropAndResize(mode: Resize.Mode) throws {
        for (k, region) in Self.cropRegions.enumerated() {
            for testCase in [ResizeCase(input: (4, 4), size: (3, 3)), ResizeCase(input: (5, 7), size: (6, 2)),
                             ResizeCase(input: (6, 3), size: (1, 4)), ResizeCase(input: (4, 5), scale: (0.75, 1.5))] {
                var rng = RefRandom(seed: 900 + k * 10 + testCase.input.0)
                let x = rng.tensor(n: rng.pick(refBatchSizes), h: testCase.input.0, w: testCase.input.1, c: rng.int(1 ... 3))
                let (oh, ow, scale, length) = Self.resizeGeometry(x, testCase)
                let value = Float(k) * 2.5 - 1
                let expected = Naive.resizeONNX(x, outH: oh, outW: ow, scale: scale, length: length, coordinates: .tfCropAndResize,
                                                mode: mode, roi: (Double(region.top), Double(region.left),
                                                                  Double(region.bottom), Double(region.right)),
                                                extrapolation: Double(value))
                let y = try refRun(x) { input in
                    if let size = testCase.size {
                        return input --> Resize(height: size.0, width: size.1, coordinates: .tfCropAndResize, mode: mode,
                                                region: region, extrapolationValue: value)
                    }
                    return input --> Resize(scaleHeight: testCase.scale!.0, scaleWidth: testCase.scale!.1,
                                            coordinates: .tfCropAndResize, mode: mode, region: region, extrapolationValue: value)
                }
                refExpectClose(y, expected, "crop \(region) \(mode) value \(value) \(testCase.testDescription)")
            }
        }
    }

    @Test("Resize to a size with its own scales (ONNX keep_aspect_ratio_policy): the mapping uses the scales",
          arguments: Resize.Mode.allCases, [Resize.Coordinates.halfPixel, .alignCorners, .asymmetric, .halfPixelSymmetric])
    func resizeSizeWithScale(mode: Resize.Mode, coordinates: Resize.Coordinates) throws {
        // (input, output, scale): output = round-half-up(input × scale) as keep_aspect_ratio_policy gives.
        let cases: [((Int, Int), (Int, Int), Float)] = [((3, 5), (2, 3), 0.5), ((2, 4), (1, 2), 0.5), ((2, 2), (7, 7), 3.5),
                                                         ((5, 3), (4, 2), 0.7)]
        for (input, output, s) in cases {
            var rng = RefRandom(seed: input.0 * 7 + output.1)
            let x = rng.tensor(n: 2, h: input.0, w: input.1, c: 2)
            let scale = (Double(s), Double(s))
            let expected = Naive.resizeONNX(x, outH: output.0, outW: output.1, scale: scale,
                                            length: (Double(input.0) * Double(s), Double(input.1) * Double(s)),
                                            coordinates: coordinates, mode: mode)
            let y = try refRun(x) {
                $0 --> Resize(height: output.0, width: output.1, scaleHeight: s, scaleWidth: s, coordinates: coordinates, mode: mode)
            }
            refExpectClose(y, expected, "\(mode) \(coordinates) \(input) to \(output) at scale \(s)")
        }
    }

    @Test("Resize options round-trip through the model file")
    func resizeOptionsRoundTrip() throws {
        let x = Input(width: 6, height: 5, channels: 2)
        let layers = [
            Resize(height: 3, width: 3, coordinates: .tfCropAndResize, mode: .cubic,
                   region: Resize.Region(top: 0.25, left: -0.5, bottom: 1.5, right: 0.75), extrapolationValue: 10),
            Resize(scaleHeight: 0.5, scaleWidth: 0.4, mode: .linear, excludeOutside: true, antialias: true),
            Resize(height: 2, width: 3, scaleHeight: 0.5, scaleWidth: 0.5, mode: .nearest),
        ]
        var rng = RefRandom(seed: 5)
        let input = rng.tensor(n: 1, h: 5, w: 6, c: 2)
        for layer in layers {
            let model = try Model(input: x, output: x --> layer)
            let decoded = try ModelFile(json: try model.modelFileJSON(), source: "resize",
                                        directory: FileManager.default.temporaryDirectory).model
            let resize = try #require(decoded.layers.first?.layer as? Resize)
            #expect(resize.region == layer.region && resize.extrapolationValue == layer.extrapolationValue)
            #expect(resize.antialias == layer.antialias && resize.mode == layer.mode && resize.coordinates == layer.coordinates)
            #expect(resize.size?.height == layer.size?.height && resize.scale?.width == layer.scale?.width)
            try model.compile(from: ArrayParameterSource([:]))
            try decoded.compile(from: ArrayParameterSource([:]))
            #expect(try model.predict(try input.tensor()) == decoded.predict(try input.tensor()))
        }
    }
}

extension ReferenceLayerTests {
    @Test("Resize MACs in the summary count an antialiased filter's taps: ONNX's footprint 2 − 2·(⌊−r/scale⌋ + 1) per axis")
    func resizeAntialiasMACs() throws {
        let x = Input(width: 10, height: 8, channels: 2)
        for (mode, radius) in [(Resize.Mode.linear, 1.0), (.cubic, 2.0)] {
            let model = try Model(input: x, output: x --> Resize(height: 3, width: 4, mode: mode, antialias: true, name: "rz"))
            let footprint = { (scale: Double) in 2 - 2 * (Int(floor(-radius / scale)) + 1) }
            let expected = 3 * 4 * 2 * footprint(3.0 / 8) * footprint(4.0 / 10)
            #expect(model.macs == expected, "\(mode)")
            #expect(model.summary().contains(Model.grouped(expected)), "\(mode): the summary shows \(expected) MACs")
            let plain = try Model(input: x, output: x --> Resize(height: 3, width: 4, mode: mode))
            #expect(plain.macs == 3 * 4 * 2 * Int(2 * radius) * Int(2 * radius))
        }
    }
}

extension ReferenceLayerTests {
    @Test("An antialiased Resize by scale on an open input size: each size's taps are its own")
    func resizeAntialiasOpenSize() throws {
        let input = Input(height: nil, width: nil, channels: 2)
        let model = try Model(input: input, output: input --> Resize(scaleHeight: 0.3, scaleWidth: 0.5, mode: .cubic,
                                                                   excludeOutside: true, antialias: true))
        try model.compile(from: ArrayParameterSource([:]))
        var rng = RefRandom(seed: 8)
        for (h, w) in [(10, 8), (17, 13), (10, 8)] {
            let x = rng.tensor(n: 2, h: h, w: w, c: 2)
            let (oh, ow) = (Int(floor(Double(h) * Double(Float(0.3)))), Int(floor(Double(w) * 0.5)))
            let expected = Naive.resizeONNX(x, outH: oh, outW: ow, scale: (Double(Float(0.3)), 0.5),
                                            length: (Double(h) * Double(Float(0.3)), Double(w) * 0.5), coordinates: .halfPixel,
                                            mode: .cubic, excludeOutside: true, antialias: true)
            refExpectClose(try model.predict(try x.tensor()), expected, "\(h)x\(w)")
        }
    }
}
