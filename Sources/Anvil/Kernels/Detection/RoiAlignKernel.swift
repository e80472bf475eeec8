/// A ``RoiAlign`` layer's kernel: for each region, its bins, and in each bin a grid of samples
/// read bilinearly from the region's feature map (a sample more than a pixel outside the map
/// reads 0; one inside that margin reads the clamped edge), all channels of a sample at once,
/// computed in double precision; split over the worker pool by regions.
struct RoiAlignKernel: RangeKernel {
    let mode: RoiAlignMode
    let coordinates: RoiAlignCoordinates
    let outputHeight: Int
    let outputWidth: Int
    let samplingRatio: Int
    let spatialScale: Double
    /// Feature maps per item.
    let mapCount: Int
    let height: Int
    let width: Int
    let channels: Int
    /// Regions per item.
    let regionCount: Int

    func run(_ io: KernelIO) {
        let grid = samplingRatio > 0 ? samplingRatio * samplingRatio : 4
        Compute.parallelFor(io.batch * regionCount, costPerItem: outputHeight * outputWidth * channels * grid * 4,
                            KernelRange(kernel: self, io: io))
    }

    /// Pools the regions in `range` (item-major).
    func run(_ range: Range<Int>, _ io: KernelIO) {
        let features = io.inputs[0], rois = io.inputs[1], indices = io.inputs[2]
        let mapSize = height * width * channels, cells = outputHeight * outputWidth
        // One cell's sums, on the stack: nothing is allocated per region at predict.
        withUnsafeTemporaryAllocation(of: Double.self, capacity: channels) { sums in
            for region in range {
                let item = region / regionCount
                let output = io.output + region * cells * channels
                let index = Double(indices[region])
                guard index == index.rounded(.towardZero), index >= 0, index < Double(mapCount) else {
                    output.update(repeating: .nan, count: cells * channels)
                    continue
                }
                let map = features + item * mapCount * mapSize + Int(index) * mapSize
                let box = rois + region * 4
                pool(map, box: (Double(box[0]), Double(box[1]), Double(box[2]), Double(box[3])), into: output, sums: sums)
            }
        }
    }

    /// Pools one region `box` (x1, y1, x2, y2) of `map` into `output` (cells × channels).
    func pool(_ map: UnsafePointer<Float>, box: (Double, Double, Double, Double), into output: UnsafeMutablePointer<Float>,
              sums: UnsafeMutableBufferPointer<Double>) {
        let shift = coordinates == .halfPixel ? 0.5 : 0
        let startX = box.0 * spatialScale - shift, startY = box.1 * spatialScale - shift
        var regionWidth = box.2 * spatialScale - shift - startX, regionHeight = box.3 * spatialScale - shift - startY
        if coordinates == .outputHalfPixel {
            // The legacy mapping makes a malformed region 1 × 1.
            regionWidth = max(regionWidth, 1)
            regionHeight = max(regionHeight, 1)
        }
        let binHeight = regionHeight / Double(outputHeight), binWidth = regionWidth / Double(outputWidth)
        let gridY = samplingRatio > 0 ? samplingRatio : Self.adaptiveCount(binHeight)
        let gridX = samplingRatio > 0 ? samplingRatio : Self.adaptiveCount(binWidth)
        let count = Double(max(gridY * gridX, 1))
        for cellY in 0 ..< outputHeight {
            for cellX in 0 ..< outputWidth {
                sums.update(repeating: 0)
                var first = true
                for sy in 0 ..< gridY {
                    let y = startY + Double(cellY) * binHeight + (Double(sy) + 0.5) * binHeight / Double(gridY)
                    for sx in 0 ..< gridX {
                        let x = startX + Double(cellX) * binWidth + (Double(sx) + 0.5) * binWidth / Double(gridX)
                        accumulate(map, x: x, y: y, into: sums, first: first)
                        first = false
                    }
                }
                let cell = output + (cellY * outputWidth + cellX) * channels
                for c in 0 ..< channels { cell[c] = Float(mode == .average ? sums[c] / count : sums[c]) }
            }
        }
    }

    /// Samples per bin along an axis when `samplingRatio` is 0: `ceil(extent)`, at most 2²⁰
    /// (a region of absurd size must not loop for ever), 0 for an empty or reversed bin.
    static func adaptiveCount(_ extent: Double) -> Int {
        guard extent > 0 else { return 0 }
        return Int(min(extent.rounded(.up), Double(1 << 20)))
    }

    /// Adds (average) or takes the larger of (max) the sample at (x, y) into `sums`; the first
    /// sample of a max cell replaces the sums.
    func accumulate(_ map: UnsafePointer<Float>, x: Double, y: Double, into sums: UnsafeMutableBufferPointer<Double>, first: Bool) {
        // Outside the map by more than a pixel (or not a number): four taps of weight 0 at pixel 0.
        var offsets = SIMD4<Int>(repeating: 0), weights = SIMD4<Double>(repeating: 0)
        if y >= -1, y <= Double(height), x >= -1, x <= Double(width) {
            let (y0, y1, ly) = Self.axis(max(y, 0), height)
            let (x0, x1, lx) = Self.axis(max(x, 0), width)
            let (hy, hx) = (1 - ly, 1 - lx)
            offsets = SIMD4(y0 * width + x0, y0 * width + x1, y1 * width + x0, y1 * width + x1) &* channels
            weights = SIMD4(hy * hx, hy * lx, ly * hx, ly * lx)
        }
        for c in 0 ..< channels {
            let value: Double
            if mode == .average {
                value = weights[0] * Double(map[offsets[0] + c]) + weights[1] * Double(map[offsets[1] + c])
                    + weights[2] * Double(map[offsets[2] + c]) + weights[3] * Double(map[offsets[3] + c])
                sums[c] += value
            } else {
                value = Swift.max(Swift.max(weights[0] * Double(map[offsets[0] + c]), weights[1] * Double(map[offsets[1] + c])),
                                  Swift.max(weights[2] * Double(map[offsets[2] + c]), weights[3] * Double(map[offsets[3] + c])))
                sums[c] = first ? value : Swift.max(sums[c], value)
            }
        }
    }

    /// The two pixels around coordinate `v` (≥ 0) on an axis of `extent` and the weight of the
    /// second; past the last pixel both are the last.
    static func axis(_ v: Double, _ extent: Int) -> (Int, Int, Double) {
        let low = Int(v)
        if low >= extent - 1 { return (extent - 1, extent - 1, 0) }
        return (low, low + 1, v - Double(low))
    }
}
