extension VisionError {
    /// The kind of a ``VisionError``; an open set of named constants so that cases can be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The constant's name, e.g. `"fileTooShort"`.
        public let name: String

        private init(_ name: String) { self.name = name }

        /// The name of the code.
        public var description: String { name }

        /// The file could not be read (missing, unreadable, a directory...).
        public static let cannotRead = Code("cannotRead")
        /// The file or buffer holds zero bytes.
        public static let emptyFile = Code("emptyFile")
        /// The file ends inside its fixed-size header.
        public static let truncatedHeader = Code("truncatedHeader")
        /// The first bytes are not those of the expected format.
        public static let badMagic = Code("badMagic")
        /// The IDX element type is not unsigned byte (0x08).
        public static let unsupportedDataType = Code("unsupportedDataType")
        /// The dimensions are unusable (none, or not the rank a data set needs).
        public static let badDimensions = Code("badDimensions")
        /// The sizes declared in the header overflow the machine's integers.
        public static let sizeOverflow = Code("sizeOverflow")
        /// The file holds fewer bytes than its header declares.
        public static let fileTooShort = Code("fileTooShort")
        /// The file holds more bytes than its header declares.
        public static let fileTooLong = Code("fileTooLong")
        /// A data set's files disagree (e.g. 10000 images but 9999 labels).
        public static let countMismatch = Code("countMismatch")
        /// A label is outside the valid classes.
        public static let invalidLabel = Code("invalidLabel")
        /// The image data could not be decoded (corrupt, truncated or unsupported format).
        public static let decodeFailed = Code("decodeFailed")
        /// The image is larger than ``Image/maximumPixelCount``.
        public static let imageTooLarge = Code("imageTooLarge")
        /// The image holds no ink to find (uniform or nearly uniform).
        public static let blankImage = Code("blankImage")
        /// A label file is malformed: a blank line, or text that is not UTF-8.
        public static let invalidLabelFile = Code("invalidLabelFile")
        /// An argument is out of range (a size, an index range, a buffer that is too small...).
        public static let invalidArgument = Code("invalidArgument")
    }
}
