import Anvil

/// What an ONNX `Resize` / `Upsample` node asks of the engine's ``Resize`` besides its size or
/// scale, read from the node's attributes once and applied to whichever form the node takes.
struct ResizeOptions {
    /// The coordinate mapping.
    var coordinates: Resize.Coordinates
    /// The interpolation.
    var mode: Resize.Mode
    /// The rounding of `nearest`.
    var nearestRounding: Resize.NearestRounding
    /// The cubic coefficient.
    var cubicCoefficient: Float = -0.75
    /// Whether taps outside the image get weight 0.
    var excludeOutside = false
    /// Whether a downsampling filter is widened.
    var antialias = false
    /// The part of the input tf_crop_and_resize samples.
    var region: Resize.Region = .whole
    /// The value outside the input, with tf_crop_and_resize.
    var extrapolationValue: Float = 0

    /// The engine layer resizing to `size`, to `scale`, or to `size` mapped at `scale`.
    func layer(size: (Int, Int)?, scale: (Float, Float)?, name: String) -> Resize {
        switch (size, scale) {
        case let (size?, scale?):
            return Resize(height: size.0, width: size.1, scaleHeight: scale.0, scaleWidth: scale.1, coordinates: coordinates,
                          mode: mode, nearestRounding: nearestRounding, cubicCoefficient: cubicCoefficient,
                          excludeOutside: excludeOutside, antialias: antialias, region: region,
                          extrapolationValue: extrapolationValue, name: name)
        case let (size?, nil):
            return Resize(height: size.0, width: size.1, coordinates: coordinates, mode: mode, nearestRounding: nearestRounding,
                          cubicCoefficient: cubicCoefficient, excludeOutside: excludeOutside, antialias: antialias,
                          region: region, extrapolationValue: extrapolationValue, name: name)
        default:
            let scale = scale ?? (1, 1)
            return Resize(scaleHeight: scale.0, scaleWidth: scale.1, coordinates: coordinates, mode: mode,
                          nearestRounding: nearestRounding, cubicCoefficient: cubicCoefficient, excludeOutside: excludeOutside,
                          antialias: antialias, region: region, extrapolationValue: extrapolationValue, name: name)
        }
    }
}
