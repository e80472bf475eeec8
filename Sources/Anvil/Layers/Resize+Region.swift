extension Resize {
    /// The part of the input ``Resize/Coordinates/tfCropAndResize`` samples, in normalised
    /// coordinates: 0 is the first row (column), 1 the last (ONNX's `roi` over height and width,
    /// TensorFlow's crop box `[y1, x1, y2, x2]`). A start past its end flips that axis; values
    /// outside `[0, 1]` reach past the image, where the output is ``Resize/extrapolationValue``.
    public struct Region: Sendable, Equatable, CustomStringConvertible {
        /// The first sampled row.
        public var top: Float
        /// The first sampled column.
        public var left: Float
        /// The last sampled row.
        public var bottom: Float
        /// The last sampled column.
        public var right: Float

        /// A region from its edges.
        public init(top: Float, left: Float, bottom: Float, right: Float) {
            self.top = top
            self.left = left
            self.bottom = bottom
            self.right = right
        }

        /// The whole input: `(0, 0)` to `(1, 1)`.
        public static let whole = Region(top: 0, left: 0, bottom: 1, right: 1)

        /// `top,left-bottom,right`, e.g. `0.4,0.6-0.6,0.8`.
        public var description: String { "\(top),\(left)-\(bottom),\(right)" }
    }
}
