/// A Conv / pooling window's attributes (kernel_shape, strides, dilations, pads, auto_pad,
/// ceil_mode), bounded so that no arithmetic on them can overflow; a 1-D window is read as the
/// height-1 2-D one Anvil runs (the Python `window_1d`).
struct WindowAttributes {
    /// kernel_shape, if given.
    var kernel: [Int]?
    /// strides.
    var strides: [Int]?
    /// dilations.
    var dilations: [Int]?
    /// pads (begins, then ends).
    var pads: [Int]?
    /// output_padding (ConvTranspose).
    var outputPadding: [Int]?
    /// output_shape (ConvTranspose).
    var outputShape: [Int]?
    /// auto_pad.
    var autoPad: String
    /// ceil_mode.
    var ceilMode: Bool

    /// The largest extent, stride, dilation or pad accepted.
    static let limit = 1 << 20

    /// Reads the attributes of a window node.
    init(_ a: NodeAttributes) throws {
        func bounded(_ name: String, minimum: Int) throws -> [Int]? {
            guard let values = try a.ints(name) else { return nil }
            for v in values where v < minimum || v > Self.limit {
                throw ImportFailure("attribute '\(name)' value \(v) is out of range (\(minimum) to \(Self.limit))")
            }
            return values
        }
        kernel = try bounded("kernel_shape", minimum: 1)
        strides = try bounded("strides", minimum: 1)
        dilations = try bounded("dilations", minimum: 1)
        pads = try bounded("pads", minimum: -Self.limit)
        outputPadding = try bounded("output_padding", minimum: -Self.limit)
        outputShape = try bounded("output_shape", minimum: 0)
        autoPad = try a.string("auto_pad", "NOTSET")
        ceilMode = try a.int("ceil_mode", 0) != 0
    }

    /// The attributes of a 1-D window as a height-1 2-D one.
    func oneDimensional() -> WindowAttributes {
        var a = self
        a.strides = strides.map { [1] + $0 }
        a.dilations = dilations.map { [1] + $0 }
        a.kernel = kernel.map { [1] + $0 }
        if let pads, pads.count >= 2 { a.pads = [0, pads[0], 0, pads[1]] }
        return a
    }
}
