import COpenBLAS
import Foundation

/// The Winograd algorithms ``WinogradConvolutionKernel`` implements.
enum WinogradVariant: String, Sendable, CaseIterable, CustomStringConvertible {
    /// F(2×2, 3×3): 4×4 input tiles, 16 GEMMs, 2.25× fewer multiplies than direct convolution.
    case f2x2
    /// F(4×4, 3×3): 6×6 input tiles, 36 GEMMs, 4× fewer multiplies.
    case f4x4

    var algorithm: any WinogradAlgorithm.Type {
        switch self {
        case .f2x2: return WinogradF2.self
        case .f4x4: return WinogradF4.self
        }
    }

    /// m: output pixels per tile side.
    var outputTile: Int { algorithm.outputTile }
    /// α²: transformed values per tile, one GEMM each.
    var positions: Int { algorithm.positions }

    var description: String { "F(\(outputTile)x\(outputTile),3x3)" }
}

/// 3×3, stride 1, dilation 1, ungrouped convolution by Winograd's minimal filtering.
///
/// The output is cut into m×m tiles (m = 2 or 4; the last row and column of tiles may stick
/// out of the output and read zeros past the input). For a block of tiles at a time:
/// 1. every (m+2)×(m+2) input patch, zeros where it leaves the input, becomes `Bᵀ d B`,
///    scattered into α² matrices `V[p]` of `tiles × inputChannels`;
/// 2. α² `cblas_sgemm` calls compute `M[p] = V[p] · U[p]`, with `U[p]` (`inputChannels ×
///    outputChannels`) the filters transformed once at construction;
/// 3. `Aᵀ M A` of every tile goes straight into the NHWC output with the bias and the
///    activation applied while the values are in registers.
///
/// The transforms run on ``Compute/parallelFor(_:costPerItem:_:)``; the GEMMs are issued one
/// after another and OpenBLAS spreads each over its threads (concurrent OpenBLAS calls from
/// several threads would oversubscribe the cores). Blocks are sized so `V` and `M` stay about
/// ``blockBudget`` floats.
struct WinogradConvolutionKernel: Kernel {
    let variant: WinogradVariant
    let geometry: WindowGeometry
    let inputChannels: Int
    let outputChannels: Int
    /// α² row-major `inputChannels × outputChannels` matrices: `U[p][i][o]`.
    let filters: FloatBox
    let bias: ParameterData?
    let activation: ActivationFunction
    /// Tiles per block when set (tests use it to force many blocks); otherwise from ``blockBudget``.
    let fixedBlockTiles: Int?

    /// Floats of transformed input and product matrices per block (8 MB): they go through
    /// the last-level cache between the transforms and the GEMMs.
    static let blockBudget: Int = {
        if let text = ProcessInfo.processInfo.environment["ANVIL_WINOGRAD_BUDGET"], let value = Int(text), value > 0 {
            return value
        }
        return 2 << 20
    }()

    /// The fewest tiles per block, so the GEMMs stay efficient even for wide layers.
    static let minimumBlockTiles = 64

    /// Transforms the filters. `weights` are Forge-layout `[out][3][3][in]`.
    init(variant: WinogradVariant, geometry: WindowGeometry, inputChannels: Int, outputChannels: Int,
         weights: KernelWeights, activation: ActivationFunction, blockTiles: Int? = nil) {
        precondition(Self.supports(geometry: geometry, groups: 1), "Winograd needs a 3×3, stride 1, dilation 1 convolution")
        self.variant = variant
        self.geometry = geometry
        self.inputChannels = inputChannels
        self.outputChannels = outputChannels
        self.filters = variant.algorithm.transformFilters(weights.weightPointer, outputs: outputChannels, inputs: inputChannels)
        self.bias = weights.bias
        self.activation = activation
        self.fixedBlockTiles = blockTiles.map { max(1, $0) }
    }

    /// Whether the kernel can compute this convolution at all.
    static func supports(geometry g: WindowGeometry, groups: Int) -> Bool {
        groups == 1 && g.kernelHeight == 3 && g.kernelWidth == 3 && g.strideHeight == 1 && g.strideWidth == 1
            && g.dilationHeight == 1 && g.dilationWidth == 1
    }

    var tilesHigh: Int { (geometry.outputHeight + variant.outputTile - 1) / variant.outputTile }
    var tilesWide: Int { (geometry.outputWidth + variant.outputTile - 1) / variant.outputTile }
    var tilesPerImage: Int { tilesHigh * tilesWide }

    /// The number of blocks and the largest block's tile count for a batch.
    func blocking(batch: Int) -> (blocks: Int, tiles: Int) {
        let total = max(1, batch * tilesPerImage)
        let perTile = variant.positions * (inputChannels + outputChannels)
        let limit = fixedBlockTiles ?? max(Self.minimumBlockTiles, Self.blockBudget / perTile)
        let blocks = (total + limit - 1) / limit
        return (blocks, (total + blocks - 1) / blocks)
    }

    /// Room for `V` and `M` of one block, each 64-byte aligned.
    func scratchCount(batch: Int) -> Int {
        let tiles = blocking(batch: batch).tiles
        return Self.roundUp(variant.positions * tiles * inputChannels) + variant.positions * tiles * outputChannels + 16
    }

    private static func roundUp(_ floats: Int) -> Int { (floats + 15) & ~15 }

    func run(_ io: KernelIO) {
        switch variant {
        case .f2x2: run(io, WinogradF2.self)
        case .f4x4: run(io, WinogradF4.self)
        }
    }

    /// Where value `p` of block tile `t`, channel `c` lives in `V` (and `M`, with the output
    /// channels): `t * tileStride + p * positionStride + c`, in floats.
    private struct Layout {
        let tileStride: Int
        let positionStride: Int

        /// Tile-major (`[tile][position][channel]`, the transforms read and write whole tiles
        /// contiguously) or position-major (`[position][tile][channel]`, each GEMM operand contiguous).
        init(tileMajor: Bool, positions: Int, tiles: Int, channels: Int) {
            tileStride = tileMajor ? positions * channels : channels
            positionStride = tileMajor ? channels : tiles * channels
        }
        /// The GEMM's leading dimension.
        var rowStride: Int { tileStride }
    }

    static let tileMajor = ProcessInfo.processInfo.environment["ANVIL_WINOGRAD_LAYOUT"] != "position"

    private func run<A: WinogradAlgorithm>(_ io: KernelIO, _ algorithm: A.Type) {
        let total = io.batch * tilesPerImage
        let blocks = blocking(batch: io.batch).blocks
        let address = (UInt(bitPattern: io.scratch) + 63) & ~UInt(63)
        let v = UnsafeMutablePointer<Float>(bitPattern: address)!
        let products = v + Self.roundUp(A.positions * blocking(batch: io.batch).tiles * inputChannels)
        let u = UnsafePointer(filters.pointer)
        let input = io.inputs[0]
        for block in 0 ..< blocks {
            let first = total * block / blocks
            let count = total * (block + 1) / blocks - first
            let inputLayout = Layout(tileMajor: Self.tileMajor, positions: A.positions, tiles: count, channels: inputChannels)
            let outputLayout = Layout(tileMajor: Self.tileMajor, positions: A.positions, tiles: count, channels: outputChannels)
            Compute.parallelFor(count, costPerItem: A.positions * inputChannels * 4) { range in
                transformInput(A.self, input: input, into: v, layout: inputLayout, firstTile: first, tiles: range)
            }
            for p in 0 ..< A.positions {
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Int32(count), Int32(outputChannels),
                            Int32(inputChannels), 1, v + p * inputLayout.positionStride, Int32(inputLayout.rowStride),
                            u + p * inputChannels * outputChannels, Int32(outputChannels), 0,
                            products + p * outputLayout.positionStride, Int32(outputLayout.rowStride))
            }
            Compute.parallelFor(count, costPerItem: A.positions * outputChannels * 4) { range in
                transformOutput(A.self, products: products, layout: outputLayout, into: io.output, firstTile: first, tiles: range)
            }
        }
    }

    /// Writes `Bᵀ d B` of tiles `firstTile + tiles` into `v`, block tile `t` being `tiles` element `t`.
    private func transformInput<A: WinogradAlgorithm>(_: A.Type, input: UnsafePointer<Float>,
                                                      into v: UnsafeMutablePointer<Float>, layout: Layout,
                                                      firstTile: Int, tiles: Range<Int>) {
        let g = geometry
        let alpha = A.inputTile, m = A.outputTile
        let channels = inputChannels
        let imageStride = g.inputHeight * g.inputWidth * channels
        let vector = MemoryLayout<WinogradLanes>.stride
        let pixelBytes = channels * MemoryLayout<Float>.stride
        let positionBytes = layout.positionStride * MemoryLayout<Float>.stride
        withUnsafeTemporaryAllocation(of: WinogradLanes.self, capacity: 2 * A.positions) { buffer in
            // `rows`: the patch after the pass along rows; `patch`: a zero-padded copy of an edge
            // tile's input, or the transformed tile of a partial channel vector.
            let rows = UnsafeMutableRawPointer(buffer.baseAddress!)
            let patch = rows + A.positions * vector
            for local in tiles {
                let tile = firstTile + local
                let image = tile / tilesPerImage
                let index = tile - image * tilesPerImage
                let tileRow = index / tilesWide
                let y0 = tileRow * m - g.padTop
                let x0 = (index - tileRow * tilesWide) * m - g.padLeft
                let interior = y0 >= 0 && x0 >= 0 && y0 + alpha <= g.inputHeight && x0 + alpha <= g.inputWidth
                let source = input + image * imageStride
                let target = v + local * layout.tileStride
                var channel = 0
                while channel < channels {
                    let lanes = min(8, channels - channel)
                    if interior && lanes == 8 {
                        let origin = source + (y0 * g.inputWidth + x0) * channels + channel
                        for r in 0 ..< alpha {
                            A.transformInput(origin + r * g.inputWidth * channels, pixelBytes, rows + r * alpha * vector, vector)
                        }
                    } else {
                        for r in 0 ..< alpha {
                            let y = y0 + r
                            let rowInside = y >= 0 && y < g.inputHeight
                            for q in 0 ..< alpha {
                                let x = x0 + q
                                var value = WinogradLanes.zero
                                if rowInside && x >= 0 && x < g.inputWidth {
                                    let pixel = source + (y * g.inputWidth + x) * channels + channel
                                    value = lanes == 8 ? Self.load(pixel) : Self.load(pixel, lanes: lanes)
                                }
                                patch.store(value, r * alpha + q, vector)
                            }
                        }
                        for r in 0 ..< alpha {
                            A.transformInput(patch + r * alpha * vector, vector, rows + r * alpha * vector, vector)
                        }
                    }
                    if lanes == 8 {
                        let destination = UnsafeMutableRawPointer(target + channel)
                        for q in 0 ..< alpha {
                            A.transformInput(rows + q * vector, alpha * vector, destination + q * positionBytes, alpha * positionBytes)
                        }
                    } else {
                        for q in 0 ..< alpha {
                            A.transformInput(rows + q * vector, alpha * vector, patch + q * vector, alpha * vector)
                        }
                        for p in 0 ..< A.positions {
                            Self.store(UnsafeRawPointer(patch).lanes(p, vector), to: target + p * layout.positionStride + channel, lanes: lanes)
                        }
                    }
                    channel += 8
                }
            }
        }
    }

    /// Writes `Aᵀ M A` (plus bias, through the activation) of tiles `firstTile + tiles` into
    /// the output, skipping the parts of edge tiles that fall outside it.
    private func transformOutput<A: WinogradAlgorithm>(_: A.Type, products: UnsafePointer<Float>, layout: Layout,
                                                       into output: UnsafeMutablePointer<Float>, firstTile: Int,
                                                       tiles: Range<Int>) {
        let g = geometry
        let alpha = A.inputTile, m = A.outputTile
        let channels = outputChannels
        let vector = MemoryLayout<WinogradLanes>.stride
        let positionBytes = layout.positionStride * MemoryLayout<Float>.stride
        let epilogue = Epilogue(activation)
        let biasPointer = bias?.buffer.baseAddress
        withUnsafeTemporaryAllocation(of: WinogradLanes.self, capacity: 2 * A.positions) { buffer in
            // `rows`: α × m after the pass along rows; `result`: m × m (or a partial vector's α × α input).
            let rows = UnsafeMutableRawPointer(buffer.baseAddress!)
            let result = rows + A.positions * vector
            for local in tiles {
                let tile = firstTile + local
                let image = tile / tilesPerImage
                let index = tile - image * tilesPerImage
                let tileRow = index / tilesWide
                let oy = tileRow * m, ox = (index - tileRow * tilesWide) * m
                let outputRows = min(m, g.outputHeight - oy), outputColumns = min(m, g.outputWidth - ox)
                let source = products + local * layout.tileStride
                let target = output + ((image * g.outputHeight + oy) * g.outputWidth + ox) * channels
                var channel = 0
                while channel < channels {
                    let lanes = min(8, channels - channel)
                    if lanes == 8 {
                        let origin = UnsafeRawPointer(source + channel)
                        for i in 0 ..< alpha {
                            A.transformOutput(origin + i * alpha * positionBytes, positionBytes, rows + i * m * vector, vector)
                        }
                    } else {
                        for p in 0 ..< A.positions {
                            result.store(Self.load(source + p * layout.positionStride + channel, lanes: lanes), p, vector)
                        }
                        for i in 0 ..< alpha {
                            A.transformOutput(result + i * alpha * vector, vector, rows + i * m * vector, vector)
                        }
                    }
                    for q in 0 ..< m {
                        A.transformOutput(rows + q * vector, m * vector, result + q * vector, m * vector)
                    }
                    let shift: WinogradLanes = biasPointer.map { lanes == 8 ? Self.load($0 + channel) : Self.load($0 + channel, lanes: lanes) } ?? .zero
                    let values = UnsafeRawPointer(result)
                    for r in 0 ..< outputRows {
                        for q in 0 ..< outputColumns {
                            let value = epilogue.apply(values.lanes(r * m + q, vector) + shift)
                            let pixel = target + (r * g.outputWidth + q) * channels + channel
                            if lanes == 8 { Self.store(value, to: pixel) } else { Self.store(value, to: pixel, lanes: lanes) }
                        }
                    }
                    channel += 8
                }
                if case .general = epilogue {
                    for r in 0 ..< outputRows {
                        for q in 0 ..< outputColumns { activation.apply(target + (r * g.outputWidth + q) * channels, count: channels) }
                    }
                }
            }
        }
    }

    private enum Epilogue {
        case identity
        case clamp(lower: Float, upper: Float)
        case leaky(slope: Float)
        case general

        init(_ activation: ActivationFunction) {
            switch activation {
            case .none: self = .identity
            case .relu: self = .clamp(lower: 0, upper: .infinity)
            case .relu6: self = .clamp(lower: 0, upper: 6)
            case .clip(let lower, let upper): self = .clamp(lower: lower, upper: upper)
            case .leakyRelu(let alpha): self = .leaky(slope: alpha)
            default: self = .general
            }
        }

        @inline(__always)
        func apply(_ x: WinogradLanes) -> WinogradLanes {
            switch self {
            case .identity, .general: return x
            case .clamp(let lower, let upper):
                // max then min, as ActivationFunction does (NaN stays NaN).
                let raised = x.replacing(with: lower, where: x .< lower)
                return raised.replacing(with: upper, where: raised .> upper)
            case .leaky(let slope): return x.replacing(with: x * slope, where: x .< 0)
            }
        }
    }

    @inline(__always)
    private static func load(_ pointer: UnsafePointer<Float>) -> WinogradLanes {
        UnsafeRawPointer(pointer).loadUnaligned(as: WinogradLanes.self)
    }

    @inline(__always)
    private static func load(_ pointer: UnsafePointer<Float>, lanes: Int) -> WinogradLanes {
        var value = WinogradLanes()
        for lane in 0 ..< lanes { value[lane] = pointer[lane] }
        return value
    }

    @inline(__always)
    private static func store(_ value: WinogradLanes, to pointer: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: value, as: WinogradLanes.self)
    }

    @inline(__always)
    private static func store(_ value: WinogradLanes, to pointer: UnsafeMutablePointer<Float>, lanes: Int) {
        for lane in 0 ..< lanes { pointer[lane] = value[lane] }
    }
}

extension WinogradConvolutionKernel {
    /// `ANVIL_CONVOLUTION` = `im2col`, `winograd2` or `winograd4` forces the algorithm of every
    /// convolution Winograd supports (for benchmarks); unset or `auto` lets ``preferredVariant`` choose.
    static let override: String? = ProcessInfo.processInfo.environment["ANVIL_CONVOLUTION"]

    /// The Winograd variant to use for a convolution, or `nil` when im2col + GEMM is the better
    /// (or the only) choice.
    static func preferredVariant(geometry: WindowGeometry, inputChannels: Int, outputChannels: Int,
                                 groups: Int) -> WinogradVariant? {
        guard supports(geometry: geometry, groups: groups) else { return nil }
        switch override {
        case "im2col": return nil
        case "winograd2": return .f2x2
        case "winograd4": return .f4x4
        default: break
        }
        guard inputChannels >= 8, outputChannels >= 8 else { return nil }
        return .f4x4
    }
}
