/// The 64-bit FNV-1a hash, for the weight cache's names: the same for the same bytes in every
/// process and build (Swift's `Hasher` is seeded per process). Not for security.
struct FNV1a {
    /// The hash of the bytes added so far.
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    /// Adds one byte.
    mutating func add(_ byte: UInt8) {
        value = (value ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    /// Adds every byte of `bytes`, in order.
    mutating func add<Bytes: Sequence>(bytes: Bytes) where Bytes.Element == UInt8 {
        for byte in bytes { add(byte) }
    }

    /// Adds a float's bit pattern, low byte first.
    mutating func add(_ value: Float) {
        var bits = value.bitPattern
        for _ in 0 ..< 4 {
            add(UInt8(truncatingIfNeeded: bits))
            bits >>= 8
        }
    }

    /// The hash in lowercase hexadecimal, without leading zeros.
    var hex: String { String(value, radix: 16) }
}
