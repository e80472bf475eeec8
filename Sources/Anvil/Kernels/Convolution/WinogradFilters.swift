import CAnvilKernels
import Foundation

/// Where the 3×3 filters lie in a convolution's weights, in floats: tap (y, x) from input
/// channel `i` to output channel `o` is at `o * output + i * input + y * row + x * column`.
/// The filter transform gathers the taps through these strides, so weights in any
/// ``WeightLayout`` are read where they lie, without a reordered copy.
struct FilterStrides: Sendable, Equatable {
    let output: Int, input: Int, row: Int, column: Int

    /// The strides of `layout` for `inputs` input and `outputs` output channels.
    init(layout: WeightLayout, inputs: Int, outputs: Int) {
        switch layout {
        case .forge: (output, row, column, input) = (9 * inputs, 3 * inputs, inputs, 1)  // [o][y][x][i]
        case .pytorch: (output, input, row, column) = (9 * inputs, 9, 3, 1)  // [o][i][y][x]
        case .tensorflow: (row, column, input, output) = (3 * inputs * outputs, inputs * outputs, outputs, 1)  // [y][x][i][o]
        }
    }
}

/// The filters of a Winograd kernel in one of two ``WinogradFilterForm``s:
/// - **transformed**, `U[p][i][o]`: for each input channel `i`, the α² rows (one per position
///   `p`) of its transformed filters to every output channel `o`. The GEMM of position `p` reads
///   its B operand (`inputs × outputs`) at `p · outputs` with a row stride of α² · outputs.
///   Input-channel-major, the transform writes each thread's share of the memory from start to
///   end: each 2 MB page is zeroed by the kernel and then filled while still in cache, and no two
///   threads fault the same page. (Position-major, each thread wrote a row of each of the α²
///   matrices in turn, and the kernel's zeroing and the transform's writes went to memory and
///   back.) They take 16/9 (F(2×2)) or 4 (F(4×4)) times the memory of the weights;
/// - **taps**, the 3×3 filters themselves (times the folded scale), arranged as
///   ``TapArrangement`` says (``WinogradFilterLayout/tapOffset(input:tap:output:)``): the
///   weights' own memory, transformed a group at a time as the products need them.
///
/// One allocation, 2 MB aligned and (on Linux) advised for transparent huge pages — or a
/// read-only mapping of a ``WeightCache`` entry holding the same values, or the direct
/// convolution's packed weights (``TapArrangement/directBlocks``). Fresh memory is dear:
/// the kernel zeroes every page on first touch, and faulting it in 4 KB pages costs several
/// times what 2 MB pages do. Huge pages also spare the products TLB misses when they stream the
/// filters.
final class WinogradFilters: @unchecked Sendable {
    // @unchecked Sendable: `pointer`, `count` and `storage` are `let`s; owned filters are written
    // by the compile step's transform before the kernel holding them is published, mapped ones
    // never; both are only read after.

    /// The filters, read by the products.
    let pointer: UnsafePointer<Float>
    let count: Int
    /// Where each filter value lives.
    let layout: WinogradFilterLayout
    /// Whether the values are transformed filters or taps.
    let form: WinogradFilterForm
    private let storage: Storage

    /// Memory this object allocated (freed with it), a ``WeightCache`` entry it maps, or the
    /// direct kernel's packed weights it reads (kept alive with it).
    private enum Storage {
        case owned(UnsafeMutablePointer<Float>)
        case mapped(WeightCacheEntry)
        case directPacked(ParameterData)
    }

    /// Memory for filters of `positions` positions in `form` and `layout` (in huge pages when
    /// large: ``LargeAllocation``), uninitialised but for the padding lanes of a last partial
    /// block (zeros: they enter the products, never the outputs).
    init(layout: WinogradFilterLayout, form: WinogradFilterForm = .transformed, positions: Int) {
        let count = layout.count(form: form, positions: positions)
        let bytes = max(count, 1) * MemoryLayout<Float>.stride
        guard let raw = LargeAllocation.allocate(bytes: bytes) else {
            fatalError("cannot allocate \(bytes) bytes of Winograd filters")
        }
        let pointer = raw.bindMemory(to: Float.self, capacity: max(count, 1))
        self.pointer = UnsafePointer(pointer)
        self.storage = .owned(pointer)
        self.count = count
        self.layout = layout
        self.form = form
        if layout.paddedOutputs != layout.outputs && !LargeAllocation.startsZeroed(bytes: bytes) {
            pointer.initialize(repeating: 0, count: count)
        }
    }

    /// Filters mapped from a cache entry of exactly the count `form`, `layout` and `positions` give.
    init(layout: WinogradFilterLayout, form: WinogradFilterForm = .transformed, positions: Int, mapped entry: WeightCacheEntry) {
        precondition(entry.count == layout.count(form: form, positions: positions))
        self.pointer = entry.pointer
        self.storage = .mapped(entry)
        self.count = entry.count
        self.layout = layout
        self.form = form
    }

    /// The taps of a direct convolution's packed weights (``DirectConvolutionKernel/pack(_:outputs:depth:)``
    /// of `[o][3][3][inputs]` rows, the folded scale already in them), read where they lie: a
    /// kernel that runs both algorithms keeps one copy.
    init(directPacked packed: ParameterData, inputs: Int, outputs: Int) {
        // The taps transform steps through blocks of the products' width: the direct kernel's must match.
        precondition(ANVIL_CONV_BLOCK == ANVIL_WINOGRAD_BLOCK, "the direct kernel's blocks are not Winograd's")
        let layout = WinogradFilterLayout(inputs: inputs, outputs: outputs, taps: .directBlocks)
        precondition(packed.count == layout.count(form: .taps, positions: 0), "packed weights of another shape")
        self.pointer = packed.buffer.baseAddress!
        self.storage = .directPacked(packed)
        self.count = packed.count
        self.layout = layout
        self.form = .taps
    }

    /// The memory the transform writes (owned filters only).
    var writablePointer: UnsafeMutablePointer<Float> {
        guard case .owned(let pointer) = storage else { preconditionFailure("mapped or shared Winograd filters are read-only") }
        return pointer
    }

    deinit {
        if case .owned(let pointer) = storage {
            LargeAllocation.release(pointer, bytes: max(count, 1) * MemoryLayout<Float>.stride)
        }
    }
}

extension WinogradVariant {
    /// Transforms every filter once: `U[p][i][o] = (G g Gᵀ)[p]` for the 3×3 filter `g` from
    /// input channel `i` to output channel `o`, times `scale[o]` when given (a folded
    /// BatchNormalization), with `instructionSet`'s body. `weights` are read through `strides`
    /// (any ``WeightLayout``); the input channels are split among the threads.
    func transformFilters(_ weights: UnsafePointer<Float>, strides: FilterStrides, scale: UnsafePointer<Float>?,
                          outputs: Int, inputs: Int, instructionSet: InstructionSet) -> WinogradFilters {
        let filters = WinogradFilters(layout: WinogradFilterLayout(inputs: inputs, outputs: outputs), positions: positions)
        Compute.parallelFor(inputs, costPerItem: outputs * 8 * positions,
                            FilterTransform(isa: instructionSet.cValue, tile: Int32(outputTile), weights: weights,
                                            strides: strides, scale: scale, u: filters.writablePointer, inputs: inputs,
                                            outputs: outputs))
        return filters
    }

    /// Whether `filters` hold, bit for bit, what the transform makes of input channel `input`
    /// (the sample a ``WeightCache`` entry is checked by before it is used).
    func matches(_ filters: WinogradFilters, input: Int, weights: UnsafePointer<Float>, strides: FilterStrides,
                 scale: UnsafePointer<Float>?, instructionSet: InstructionSet) -> Bool {
        let layout = filters.layout
        // The transform of one channel alone, laid out as a layer of one input channel.
        let single = WinogradFilters(layout: WinogradFilterLayout(inputs: 1, outputs: layout.outputs), positions: positions)
        let c = anvil_winograd3_filter_strides(output: strides.output, input: strides.input, row: strides.row,
                                               column: strides.column)
        anvil_winograd3_transform_filters(instructionSet.cValue, Int32(outputTile), weights + input * strides.input, c,
                                          scale, Int32(layout.outputs), 1, single.writablePointer, 0, 1)
        for position in 0 ..< positions {
            for output in 0 ..< layout.outputs {
                let expected = single.pointer[single.layout.offset(position: position, input: 0, output: output)]
                let cached = filters.pointer[layout.offset(position: position, input: input, output: output)]
                guard expected.bitPattern == cached.bitPattern else { return false }
            }
        }
        return true
    }
}

/// The filter transform of a range of input channels, as a parallel job
/// (``anvil_winograd3_transform_filters``).
private struct FilterTransform: ParallelJob {
    let isa: anvil_isa
    let tile: Int32
    let weights: UnsafePointer<Float>
    let strides: FilterStrides
    let scale: UnsafePointer<Float>?
    let u: UnsafeMutablePointer<Float>
    let inputs: Int
    let outputs: Int

    func run(_ range: Range<Int>) {
        let c = anvil_winograd3_filter_strides(output: strides.output, input: strides.input, row: strides.row,
                                               column: strides.column)
        anvil_winograd3_transform_filters(isa, tile, weights, c, scale, Int32(outputs), Int32(inputs), u,
                                          Int32(range.lowerBound), Int32(range.upperBound))
    }
}

/// How the taps of the ``WinogradFilterForm/taps`` form lie.
enum TapArrangement: Sendable, Equatable {
    /// Anvil's own: groups of ``WinogradFilterLayout/tapWidth`` outputs one after another (the
    /// last may be one block), each `[i][y][x][o]`, so the products transform each group's taps
    /// from one sequential stream.
    case pairs
    /// The direct convolution's packed weights: blocks of 16 outputs, each `[y][x][i][16]`
    /// (``anvil_conv_pack_weights`` of `[o][3][3][i]` rows).
    case directBlocks
}

/// Where the transformed filters `U[p][i][o]` live, packed for ``anvil_winograd_products``:
/// position by position, each position's output channels in blocks of 16, each block's
/// `inputs × 16` values row by row (the last block padded with zeros); and where taps lie.
struct WinogradFilterLayout: Sendable, Equatable {
    let inputs: Int
    let outputs: Int
    /// Output channels rounded up to whole blocks of 16.
    let paddedOutputs: Int
    /// Where taps lie (the taps form only).
    let taps: TapArrangement

    init(inputs: Int, outputs: Int, taps: TapArrangement = .pairs) {
        let block = Int(ANVIL_WINOGRAD_BLOCK)
        self.inputs = inputs
        self.outputs = outputs
        self.paddedOutputs = (outputs + block - 1) / block * block
        self.taps = taps
    }

    /// Floats from one position's filters to the next.
    var positionStride: Int { paddedOutputs * inputs }

    /// The offset of `U[position][input][output]` (transformed filters).
    func offset(position: Int, input: Int, output: Int) -> Int {
        let block = Int(ANVIL_WINOGRAD_BLOCK)
        return position * positionStride + (output / block * inputs + input) * block + output % block
    }

    /// Output channels side by side in the taps: the products' pair of blocks.
    static let tapWidth = 2 * Int(ANVIL_WINOGRAD_BLOCK)

    /// The outputs of the taps' group holding `output`: `first ..< first + width`.
    func tapGroup(of output: Int) -> (first: Int, width: Int) {
        let first = output / Self.tapWidth * Self.tapWidth
        return (first, min(Self.tapWidth, paddedOutputs - first))
    }

    /// The offset of tap `tap` (`3y + x`) from `input` to `output` (taps), as ``taps`` arranges them.
    func tapOffset(input: Int, tap: Int, output: Int) -> Int {
        let block = Int(ANVIL_WINOGRAD_BLOCK)
        switch taps {
        case .pairs:
            let (first, width) = tapGroup(of: output)
            return first * 9 * inputs + (input * 9 + tap) * width + output - first
        case .directBlocks:
            return (output / block * 9 * inputs + tap * inputs + input) * block + output % block
        }
    }

    /// How the taps transform steps through the taps of the group of `width` outputs that
    /// starts at ``tapOffset(input:tap:output:)`` of its first output.
    func tapStrides(width: Int) -> anvil_winograd3_tap_strides {
        let block = Int(ANVIL_WINOGRAD_BLOCK)
        switch taps {
        case .pairs: return anvil_winograd3_tap_strides(input: 9 * width, tap: width, block: block)
        case .directBlocks: return anvil_winograd3_tap_strides(input: block, tap: inputs * block, block: 9 * inputs * block)
        }
    }

    /// Floats of filters in `form` for `positions` positions.
    func count(form: WinogradFilterForm, positions: Int) -> Int {
        switch form {
        case .transformed: return positions * positionStride
        case .taps: return 9 * inputs * paddedOutputs
        }
    }
}
