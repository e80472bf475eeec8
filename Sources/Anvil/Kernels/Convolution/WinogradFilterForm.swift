import Foundation

/// How a Winograd 3×3 kernel keeps its filters (``WinogradFilters``).
///
/// Transformed filters cost nothing per prediction but take α²/9 times the weights' memory
/// (16/9 for F(2×2), 4 for F(4×4)): VGG16's took 164 MB where its convolution weights take 59.
/// Taps keep the weights' own memory; the products transform 32 output and 128 input channels'
/// filters at a time into a per-thread slot that stays in L2. On layers with large filters (such
/// as VGG16's 256- and 512-channel layers) the transform costs no more than streaming the larger
/// transformed filters from memory, and a model compiles without making or mapping them.
enum WinogradFilterForm: String, Sendable, CaseIterable {
    /// `U = G g Gᵀ` of every filter, made once.
    case transformed
    /// The 3×3 taps, transformed as the products need them.
    case taps

    /// Transformed filters up to this many bytes are kept transformed; larger ones as taps.
    static let transformedLimit = 4 << 20

    /// Products per (input, output) channel pair and image, tiles × α², that a layer needs before
    /// its filters are kept as taps: each slot's transform is paid once per block of tiles, and
    /// below this it costs more than streaming transformed filters saves (ResNet-50's 7 × 7
    /// 512 → 512 layers, F(2×2): 16 tiles × 16 positions, stay transformed; VGG16's 14 × 14
    /// ones, F(4×4): 16 × 36, take taps).
    static let minimumProducts = 512

    /// The form for a layer of `geometry`: taps once the transformed filters would pass
    /// ``transformedLimit``, the outputs make at least two pairs of blocks (the products from taps
    /// split the pairs among the threads) and an image has ``minimumProducts``, unless
    /// `ANVIL_WINOGRAD_FILTERS` (`transformed` or `taps`) says otherwise.
    static func preferred(variant: WinogradVariant, geometry: WindowGeometry, inputs: Int,
                          outputs: Int) -> WinogradFilterForm {
        if let forced = environment { return forced }
        let bytes = variant.positions * inputs * outputs * MemoryLayout<Float>.size
        let tiles = variant.tiles(geometry)
        return bytes > transformedLimit && outputs > WinogradFilterLayout.tapWidth
            && tiles.high * tiles.wide * variant.positions >= minimumProducts ? .taps : .transformed
    }

    /// `ANVIL_WINOGRAD_FILTERS`, when it names a form.
    private static let environment: WinogradFilterForm? =
        Settings.current.winogradFilters.flatMap(WinogradFilterForm.init(rawValue:))
}
