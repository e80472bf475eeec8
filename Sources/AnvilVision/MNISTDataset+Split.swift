extension MNISTDataset {
    /// Which half of MNIST to load: the 60,000 training or the 10,000 test images.
    public enum Split: String, CaseIterable, Sendable {
        /// `train-images-idx3-ubyte` and `train-labels-idx1-ubyte` (60,000 images).
        case training
        /// `t10k-images-idx3-ubyte` and `t10k-labels-idx1-ubyte` (10,000 images).
        case test

        /// The file-name prefix: `"train"` or `"t10k"`.
        public var prefix: String {
            switch self {
            case .training: return "train"
            case .test: return "t10k"
            }
        }

        /// Accepted names of the images file, standard name first
        /// (`t10k-images-idx3-ubyte`, then `t10k-images.idx3-ubyte` as some mirrors spell it).
        public var imageFileNames: [String] {
            ["\(prefix)-images-idx3-ubyte", "\(prefix)-images.idx3-ubyte"]
        }

        /// Accepted names of the labels file, standard name first.
        public var labelFileNames: [String] {
            ["\(prefix)-labels-idx1-ubyte", "\(prefix)-labels.idx1-ubyte"]
        }
    }
}
