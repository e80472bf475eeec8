import CAnvilKernels
import Foundation

/// The Winograd algorithms ``WinogradConvolutionKernel`` implements.
enum WinogradVariant: String, Sendable, CaseIterable, CustomStringConvertible {
    /// F(2×2, 3×3): 4×4 input tiles, 16 products per channel pair, 2.25× fewer multiplies than direct convolution.
    case f2x2
    /// F(4×4, 3×3): 6×6 input tiles, 36 products per channel pair, 4× fewer multiplies.
    case f4x4

    /// m: output pixels per tile side.
    var outputTile: Int { self == .f2x2 ? 2 : 4 }
    /// α²: transformed values per tile, one product matrix each.
    var positions: Int { self == .f2x2 ? 16 : 36 }

    var description: String { "F(\(outputTile)x\(outputTile),3x3)" }

    /// Tiles down and across an output of `geometry` (the last ones may stick out of it).
    func tiles(_ geometry: WindowGeometry) -> (high: Int, wide: Int) {
        ((geometry.outputHeight + outputTile - 1) / outputTile, (geometry.outputWidth + outputTile - 1) / outputTile)
    }
}

/// 3×3, stride 1, dilation 1, ungrouped convolution by Winograd's minimal filtering, any
/// padding, batch and channel counts.
///
/// The output is cut into m×m tiles (m = 2 or 4; the last row and column of tiles may stick
/// out of the output and read zeros past the input). For a block of tiles at a time:
/// 1. every (m+2)×(m+2) input patch, zeros where it leaves the input, becomes `Bᵀ d B`: α²
///    vectors of `inputChannels`, which for position `p` form the matrix `V[p]`
///    (`tiles × inputChannels`, rows strided by a whole tile);
/// 2. α² products `M[p] = V[p] · U[p]` (``anvil_winograd_products``), with `U[p]` (`inputChannels ×
///    outputChannels`, packed in blocks of 16 output channels) the transformed filters: made once
///    at construction, or — in the ``WinogradFilterForm/taps`` form — made from the 3×3 taps for
///    32 output and 128 input channels at a time as the products need them;
/// 3. `Aᵀ M A` of every tile goes straight into the NHWC output with the bias and the
///    activation applied while the values are in registers.
///
/// All three phases are ``ParallelJob``s on ``Compute``'s threads: the transforms split the
/// tiles, the products split the positions (whole positions per thread read the filters once
/// in all, where splitting the tiles would make every thread stream all of them) or, from taps,
/// the pairs of output blocks. Blocks are sized so `V` and `M` stay about ``blockBudget``
/// floats. Transformed filters take α²/9 times the memory of the weights (16/9 for F(2×2), 4
/// for F(4×4)); taps take the weights' own.
struct WinogradConvolutionKernel: Kernel {
    let variant: WinogradVariant
    let geometry: WindowGeometry
    let inputChannels: Int
    let outputChannels: Int
    /// The transformed filters `U[p][i][o]` or the taps they are made from, packed as
    /// ``WinogradFilterLayout`` says.
    let filters: WinogradFilters
    let bias: ParameterData?
    let activation: ActivationFunction
    /// Tiles per block when set (tests use it to force many blocks); otherwise from ``blockBudget``.
    let fixedBlockTiles: Int?
    /// The C kernels' body for the filter transform, the input and output transforms and the
    /// products (tests build a kernel per body the CPU runs).
    let instructionSet: InstructionSet
    /// Tiles down and across one image's output, and in all.
    let tilesHigh: Int, tilesWide: Int, tilesPerImage: Int
    /// The layer as the C transforms see it (strides, epilogue), made once.
    private let transforms: anvil_winograd3_shape
    /// Whether the activation is one the C epilogue cannot apply (``Epilogue/general``).
    private let generalActivation: Bool

    /// Floats of transformed inputs and products per block (8 MB): they go through the
    /// last-level cache between the transforms and the products. (A block much smaller slows
    /// the widest layers; larger ones gain nothing.)
    static let blockBudget = 2 << 20

    /// The fewest tiles per block, so the products stay efficient even for wide layers.
    static let minimumBlockTiles = 64

    /// Transforms the filters. `weights` are Forge-layout `[out][3][3][in]`.
    init(variant: WinogradVariant, geometry: WindowGeometry, inputChannels: Int, outputChannels: Int,
         weights: KernelWeights, activation: ActivationFunction, blockTiles: Int? = nil,
         instructionSet: InstructionSet = .current) {
        self.init(variant: variant, geometry: geometry, inputChannels: inputChannels, outputChannels: outputChannels,
                  weights: weights.weights, layout: .forge, scale: nil, bias: weights.bias, activation: activation,
                  blockTiles: blockTiles, instructionSet: instructionSet)
    }

    /// Transforms the filters (or packs their taps, for `form`) straight from `weights` in
    /// `layout` (no reordered copy), each output channel's filters times `scale[o]` when given (a
    /// folded BatchNormalization, whose shift the caller has put into `bias`). The kernel keeps no
    /// reference to `weights`. `transformed`, when given, is used instead (its form wins).
    init(variant: WinogradVariant, geometry: WindowGeometry, inputChannels: Int, outputChannels: Int,
         weights: ParameterData, layout: WeightLayout, scale: [Float]?, bias: ParameterData?,
         activation: ActivationFunction, blockTiles: Int? = nil, instructionSet: InstructionSet = .current,
         form: WinogradFilterForm = .transformed, transformed: WinogradFilters? = nil) {
        precondition(weights.count == 9 * inputChannels * outputChannels && (scale?.count ?? outputChannels) == outputChannels)
        // `transformed`: the same filters made for another input size of an open model (see
        // ``KernelContext/sharedAcrossSizes(_:_:)``).
        let filters = transformed ?? Self.makeFilters(variant: variant, form: form, weights: weights, layout: layout,
                                                      scale: scale, inputChannels: inputChannels,
                                                      outputChannels: outputChannels, instructionSet: instructionSet)
        self.init(variant: variant, geometry: geometry, inputChannels: inputChannels, outputChannels: outputChannels,
                  filters: filters, bias: bias, activation: activation, blockTiles: blockTiles, instructionSet: instructionSet)
    }

    /// A kernel on filters made already (transformed, or taps in either ``TapArrangement``),
    /// each output channel's scale already in them and its shift in `bias`.
    init(variant: WinogradVariant, geometry: WindowGeometry, inputChannels: Int, outputChannels: Int,
         filters: WinogradFilters, bias: ParameterData?, activation: ActivationFunction, blockTiles: Int? = nil,
         instructionSet: InstructionSet = .current) {
        precondition(Self.supports(geometry: geometry, groups: 1), "Winograd needs a 3×3, stride 1, dilation 1 convolution")
        precondition(filters.layout.inputs == inputChannels && filters.layout.outputs == outputChannels)
        self.variant = variant
        self.geometry = geometry
        self.inputChannels = inputChannels
        self.outputChannels = outputChannels
        self.filters = filters
        self.bias = bias
        self.activation = activation
        self.fixedBlockTiles = blockTiles.map { max(1, $0) }
        let m = variant.outputTile
        (tilesHigh, tilesWide) = variant.tiles(geometry)
        tilesPerImage = tilesHigh * tilesWide
        self.instructionSet = instructionSet
        let epilogue = Epilogue(activation), padded = filters.layout.paddedOutputs
        generalActivation = epilogue.general
        transforms = anvil_winograd3_shape(
            tile: Int32(m), input_height: Int32(geometry.inputHeight), input_width: Int32(geometry.inputWidth),
            channels: Int32(inputChannels), output_height: Int32(geometry.outputHeight),
            output_width: Int32(geometry.outputWidth), outputs: Int32(outputChannels), pad_top: Int32(geometry.padTop),
            pad_left: Int32(geometry.padLeft), v_tile_stride: variant.positions * inputChannels,
            v_position_stride: inputChannels, m_tile_stride: variant.positions * padded, m_position_stride: padded,
            clamp_min: epilogue.lower, clamp_max: epilogue.upper, negative_slope: epilogue.slope)
    }

    /// The filters of `weights` in `layout` in `form` (transformed, or the taps the products
    /// transform), each output channel's times `scale[o]` when given.
    /// With a `cache`, filters of weights mapped from a file come from its entry when there is one
    /// and a sample of it (the first and last input channels) matches this build's transform or
    /// packing bit for bit; otherwise they are made and the entry written for the next compile.
    static func makeFilters(variant: WinogradVariant, form: WinogradFilterForm = .transformed, weights: ParameterData,
                            layout: WeightLayout, scale: [Float]?, inputChannels: Int, outputChannels: Int,
                            instructionSet: InstructionSet = .current, cache: WeightCache? = nil) -> WinogradFilters {
        let strides = FilterStrides(layout: layout, inputs: inputChannels, outputs: outputChannels)
        let filterLayout = WinogradFilterLayout(inputs: inputChannels, outputs: outputChannels)
        // Taps are the same for both variants and every instruction set.
        let made = form == .taps ? "winograd3 taps" : "winograd3 \(variant.rawValue) isa \(instructionSet)"
        let key = cache.flatMap { _ in WeightCache.origin(of: weights) }.map { origin in
            "\(made) layout \(layout.rawValue) inputs \(inputChannels) "
                + "outputs \(outputChannels) scale \(scale.map(Self.fingerprint) ?? "none") weights \(origin)"
        }
        return weights.withUnsafeBufferPointer { source in
            func transform(_ factors: UnsafePointer<Float>?) -> WinogradFilters {
                let count = filterLayout.count(form: form, positions: variant.positions)
                if let cache, let key, let entry = cache.entry(key: key, count: count) {
                    let mapped = WinogradFilters(layout: filterLayout, form: form, positions: variant.positions, mapped: entry)
                    let sample = Set([0, inputChannels - 1])
                    if sample.allSatisfy({
                        form == .taps
                            ? mapped.tapsMatch(input: $0, weights: source.baseAddress!, strides: strides, scale: factors)
                            : variant.matches(mapped, input: $0, weights: source.baseAddress!, strides: strides,
                                              scale: factors, instructionSet: instructionSet)
                    }) {
                        cache.hit()
                        return mapped
                    }
                    cache.reject()
                }
                let made = form == .taps
                    ? WinogradFilters.taps(source.baseAddress!, strides: strides, scale: factors, outputs: outputChannels,
                                           inputs: inputChannels)
                    : variant.transformFilters(source.baseAddress!, strides: strides, scale: factors,
                                               outputs: outputChannels, inputs: inputChannels, instructionSet: instructionSet)
                if let cache, let key { cache.store(key: key, values: UnsafeBufferPointer(start: made.pointer, count: made.count)) }
                return made
            }
            guard let scale else { return transform(nil) }
            return scale.withUnsafeBufferPointer { transform($0.baseAddress) }
        }
    }

    /// A 64-bit FNV-1a hash of `values`' bits, naming a folded scale in a cache key.
    private static func fingerprint(_ values: [Float]) -> String {
        var hash = FNV1a()
        for value in values { hash.add(value) }
        return hash.hex + "/\(values.count)"
    }

    /// Whether the kernel can compute this convolution at all.
    static func supports(geometry g: WindowGeometry, groups: Int) -> Bool {
        groups == 1 && g.kernelHeight == 3 && g.kernelWidth == 3 && g.strideHeight == 1 && g.strideWidth == 1
            && g.dilationHeight == 1 && g.dilationWidth == 1
    }

    /// The number of blocks and the largest block's tile count for a batch.
    func blocking(batch: Int) -> (blocks: Int, tiles: Int) {
        let total = max(1, batch * tilesPerImage)
        let perTile = variant.positions * (inputChannels + outputChannels)
        let limit = fixedBlockTiles ?? max(Self.minimumBlockTiles, Self.blockBudget / perTile)
        let blocks = (total + limit - 1) / limit
        return (blocks, (total + blocks - 1) / blocks)
    }

    /// Room for `V` and `M` of one block, each 64-byte aligned, and with taps one slot of
    /// transformed filters per thread that can run.
    func scratchCount(batch: Int) -> Int {
        let tiles = blocking(batch: batch).tiles
        let slots = filters.form == .taps ? saturatingProduct(Compute.maximumThreadCount, slotCount) : 0
        return Self.roundUp(variant.positions * tiles * inputChannels) + Self.roundUp(variant.positions * tiles * paddedOutputs)
            + slots + 16
    }

    /// Input channels transformed from taps at a time (a multiple of ``ANVIL_WINOGRAD_CHUNK``, so
    /// the products sum the same runs as from transformed filters). The slot they fill (590 KB
    /// for F(4×4)) stays in the core's L2 between the transform and the products, and `M`'s rows
    /// of the pair are read and written once per run. 32 output channels a slot (a pair of
    /// blocks) rather than more, which would also leave threads idle on narrow layers.
    static let slotInputs = 4 * Int(ANVIL_WINOGRAD_CHUNK)

    /// Floats from one position's filters to the next in a slot: a cache line more than they
    /// take, so the α² values a transform writes at once do not all fall into one cache set.
    var slotPositionStride: Int { min(inputChannels, Self.slotInputs) * WinogradFilterLayout.tapWidth + 16 }

    /// Floats of one thread's slot of filters transformed from taps: ``slotInputs`` input
    /// channels' filters to a pair of blocks at every position.
    var slotCount: Int { variant.positions * slotPositionStride }

    private static func roundUp(_ floats: Int) -> Int { (floats + 15) & ~15 }

    /// Pairs of output blocks (the last may be one block): the products from taps claim whole
    /// pairs.
    var pairs: Int { (paddedOutputs + WinogradFilterLayout.tapWidth - 1) / WinogradFilterLayout.tapWidth }

    /// A row of products holds whole blocks of 16 output channels (see ``anvil_winograd_products``).
    private var paddedOutputs: Int { filters.layout.paddedOutputs }

    func run(_ io: KernelIO) {
        let total = io.batch * tilesPerImage
        let (blocks, blockTiles) = blocking(batch: io.batch)
        let address = (UInt(bitPattern: io.scratch) + 63) & ~UInt(63)
        let v = UnsafeMutablePointer<Float>(bitPattern: address)!
        let products = v + Self.roundUp(variant.positions * blockTiles * inputChannels)
        let slots = products + Self.roundUp(variant.positions * blockTiles * paddedOutputs)
        for block in 0 ..< blocks {
            let first = total * block / blocks
            let count = total * (block + 1) / blocks - first
            Compute.parallelFor(count, costPerItem: variant.positions * inputChannels * 4,
                                InputTransform(isa: instructionSet.cValue, shape: transforms, input: io.inputs[0], v: v, firstTile: first))
            switch filters.form {
            case .transformed:
                Compute.parallelFor(variant.positions, costPerItem: count * inputChannels * outputChannels,
                                    Products(kernel: self, v: v, u: UnsafePointer(filters.pointer), products: products, tiles: count))
            case .taps:
                Compute.parallelFor(pairs, costPerItem: variant.positions * count * inputChannels * WinogradFilterLayout.tapWidth,
                                    TapProducts(kernel: self, v: v, products: products, tiles: count, slots: slots))
            }
            Compute.parallelFor(count, costPerItem: variant.positions * outputChannels * 4,
                                OutputTransform(kernel: self, shape: transforms, products: products, output: io.output, firstTile: first))
        }
    }

    // V is tile-major, `(t · α² + p) · inputChannels + c`, so the transforms read and write
    // each tile contiguously (position-major, each product's operand contiguous, is slower on
    // large layers: the input transform's 36 store streams miss the cache); M
    // likewise, each position holding whole blocks of 16 channels.

    /// The products `M[p] = V[p] · U[p]` of a range of positions, as a parallel job: each
    /// worker takes whole positions, so each reads its own share of the filters (see
    /// ``anvil_winograd_products`` for why Anvil sums them itself rather than calling a BLAS).
    private struct Products: ParallelJob {
        static var balancesParts: Bool { true }

        let kernel: WinogradConvolutionKernel
        let v: UnsafePointer<Float>
        let u: UnsafePointer<Float>
        let products: UnsafeMutablePointer<Float>
        let tiles: Int

        func run(_ range: Range<Int>) {
            let inputs = kernel.inputChannels, outputs = kernel.paddedOutputs
            let filterLayout = kernel.filters.layout
            var shape = anvil_winograd_products_shape(
                tiles: Int32(tiles), channels: Int32(inputs), outputs: Int32(kernel.outputChannels),
                v_tile_stride: kernel.variant.positions * inputs, m_tile_stride: kernel.variant.positions * outputs,
                accumulate: 0)
            for p in range {
                anvil_winograd_products(kernel.instructionSet.cValue, &shape, v + p * inputs, u + p * filterLayout.positionStride, products + p * outputs,
                                        0, Int32(outputs / Int(ANVIL_WINOGRAD_BLOCK)))
            }
        }
    }

    /// The products from taps of a range of pairs of output blocks, as a parallel job whose
    /// claims are pairs, each participant transforming into its own slot. For each pair, a run of
    /// ``slotInputs`` input channels at a time: their filters to the pair's 32 outputs are
    /// transformed into the slot (``anvil_winograd3_transform_taps``, the arithmetic of
    /// transformed filters), then each position's products add the run into `M`. The runs are
    /// whole runs of the products' sums, so `M` holds what transformed filters give, bit for bit.
    private struct TapProducts: ParallelJob {
        static var balancesParts: Bool { true }

        let kernel: WinogradConvolutionKernel
        let v: UnsafePointer<Float>
        let products: UnsafeMutablePointer<Float>
        let tiles: Int
        let slots: UnsafeMutablePointer<Float>

        func run(_ range: Range<Int>) { run(range, participant: 0) }

        func run(_ range: Range<Int>, participant: Int) {
            let inputs = kernel.inputChannels, padded = kernel.paddedOutputs, positions = kernel.variant.positions
            let isa = kernel.instructionSet.cValue, tile = Int32(kernel.variant.outputTile)
            let layout = kernel.filters.layout, positionStride = kernel.slotPositionStride
            var shape = anvil_winograd_products_shape(
                tiles: Int32(tiles), channels: 0, outputs: Int32(kernel.outputChannels),
                v_tile_stride: positions * inputs, m_tile_stride: positions * padded, accumulate: 0)
            let slot = slots + participant * kernel.slotCount
            for pair in range {
                // A last pair may be one block; the taps' padding lanes are zeros, so whole
                // blocks are transformed.
                let (first, width) = layout.tapGroup(of: pair * WinogradFilterLayout.tapWidth)
                let taps = kernel.filters.pointer + layout.tapOffset(input: 0, tap: 0, output: first)
                for begin in stride(from: 0, to: inputs, by: WinogradConvolutionKernel.slotInputs) {
                    let end = min(inputs, begin + WinogradConvolutionKernel.slotInputs)
                    anvil_winograd3_transform_taps(isa, tile, taps, layout.tapStrides(width: width), Int32(width),
                                                   Int32(begin), Int32(end), slot, positionStride)
                    shape.channels = Int32(end - begin)
                    shape.accumulate = begin > 0 ? 1 : 0
                    for p in 0 ..< positions {
                        anvil_winograd_products(isa, &shape, v + p * inputs + begin, slot + p * positionStride,
                                                products + p * padded + first, 0, Int32(width) / ANVIL_WINOGRAD_BLOCK)
                    }
                }
            }
        }
    }

    /// The input transform of a block's tiles, as a parallel job.
    private struct InputTransform: ParallelJob {
        static var balancesParts: Bool { true }

        let isa: anvil_isa
        let shape: anvil_winograd3_shape
        let input: UnsafePointer<Float>
        let v: UnsafeMutablePointer<Float>
        let firstTile: Int

        func run(_ range: Range<Int>) {
            withUnsafePointer(to: shape) {
                anvil_winograd3_transform_input(isa, $0, input, v, firstTile, range.lowerBound, range.upperBound)
            }
        }
    }

    /// The output transform and epilogue of a block's tiles, as a parallel job; activations
    /// the C epilogue cannot express (``Epilogue/general``) follow per tile while it is in cache.
    private struct OutputTransform: ParallelJob {
        static var balancesParts: Bool { true }

        let kernel: WinogradConvolutionKernel
        let shape: anvil_winograd3_shape
        let products: UnsafePointer<Float>
        let output: UnsafeMutablePointer<Float>
        let firstTile: Int

        func run(_ range: Range<Int>) {
            withUnsafePointer(to: shape) {
                anvil_winograd3_transform_output(kernel.instructionSet.cValue, $0, products, kernel.bias?.buffer.baseAddress, output, firstTile,
                                                 range.lowerBound, range.upperBound)
            }
            guard kernel.generalActivation else { return }
            let g = kernel.geometry, m = kernel.variant.outputTile, channels = kernel.outputChannels
            for local in range {
                let tile = firstTile + local
                let image = tile / kernel.tilesPerImage, index = tile % kernel.tilesPerImage
                let oy = index / kernel.tilesWide * m, ox = index % kernel.tilesWide * m
                let target = output + ((image * g.outputHeight + oy) * g.outputWidth + ox) * channels
                for r in 0 ..< min(m, g.outputHeight - oy) {
                    kernel.activation.apply(target + r * g.outputWidth * channels, count: min(m, g.outputWidth - ox) * channels,
                                            instructionSet: kernel.instructionSet)
                }
            }
        }
    }

    /// The activation as the C epilogue's clamp to `lower...upper` (±∞ when there is none) and
    /// slope for negative values (1 when there is none). Other activations are `general`:
    /// applied per tile once it is written.
    private struct Epilogue {
        var lower = -Float.infinity, upper = Float.infinity, slope: Float = 1
        var general = false

        init(_ activation: ActivationFunction) {
            switch activation {
            case .none: break
            case .relu: lower = 0
            case .relu6: (lower, upper) = (0, 6)
            case .clip(let low, let high): (lower, upper) = (low, high)
            case .leakyRelu(let alpha): slope = alpha
            default: general = true
            }
        }
    }
}
