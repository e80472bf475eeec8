/// What ``Image/rgb(alpha:)`` and ``ImagePreprocessing`` do with an alpha channel.
public enum AlphaHandling: Sendable, Hashable {
    /// Composite over a flat grey `background` level (0...255) with straight alpha:
    /// `colour × a + background × (1 − a)`, `a = alpha / 255`. A transparent pixel becomes
    /// the background whatever colour it stores.
    case composite(background: Float)
    /// Keep the colour samples and ignore alpha, as Pillow's `convert("RGB")` (and so
    /// torchvision's image loader) does: transparent pixels show whatever colour they store,
    /// often black.
    case drop

    /// Composite over white (255): what a browser or image viewer shows on a white page.
    public static let compositeOverWhite = AlphaHandling.composite(background: 255)
}
