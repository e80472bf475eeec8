/// How layers carry their input's rank to their output (see ``Shape``).
extension Shape {
    /// The output of a windowed layer (convolution, pooling, resize) on this input, of the same
    /// rank: an image stays an image; a sequence (rank 3) is run as a height-1 image, so its
    /// window must keep the height at 1 (a height-1 kernel and no vertical padding); a vector is a
    /// 1 × 1 image that must stay 1 × 1. Rank 1 has no channel axis and is refused.
    func windowOutput(height: Int, width: Int, channels: Int) throws -> Shape {
        switch rank {
        case 4:
            return Shape(height: height, width: width, channels: channels)
        case 3:
            guard height == 1 else {
                throw AnvilError(.invalidShape, "a sequence (rank 3) runs as a height-1 image: the window must have height 1 and no vertical padding (the output height would be \(height))")
            }
            return .sequence(length: width, channels: channels)
        case 2:
            guard height == 1, width == 1 else {
                throw AnvilError(.invalidShape, "a vector (rank 2) is a 1 × 1 image: the output would be \(height) × \(width)")
            }
            return .vector(channels)
        default:
            throw AnvilError(.invalidShape, "needs an input of rank 2 to 4 (an image, a sequence or a vector), got rank \(rank)")
        }
    }
}
