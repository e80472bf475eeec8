/// A tensor's `raw_data` read where it lies in the model's bytes (``ONNXInitializers``), and what
/// gives a decoded stretch of it back: the pages of a mapped file leave resident memory while
/// the rest of a large tensor is decoded (nothing happens for bytes read into memory).
struct InPlaceBytes {
    /// The raw_data bytes.
    let bytes: UnsafeRawBufferPointer
    /// Gives the whole pages of a decoded stretch of `bytes` back to the system.
    let release: (UnsafeRawBufferPointer) -> Void
}
