import Foundation

/// Reads typed values from the fuzzer's bytes; once they run out it returns zeros, so every
/// input, however short, describes something.
struct FuzzInput {
    private let bytes: [UInt8]
    private var position = 0

    init(_ data: UnsafePointer<UInt8>, _ size: Int) {
        bytes = Array(UnsafeBufferPointer(start: data, count: size))
    }

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var isAtEnd: Bool { position >= bytes.count }
    var remaining: [UInt8] { Array(bytes[min(position, bytes.count)...]) }

    mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func bool() -> Bool { byte() & 1 == 1 }

    /// A value in `0 ..< count` (0 when `count` is 0).
    mutating func choose(_ count: Int) -> Int { count <= 0 ? 0 : Int(byte()) % count }

    mutating func uint32() -> UInt32 {
        (0 ..< 4).reduce(UInt32(0)) { value, _ in value << 8 | UInt32(byte()) }
    }

    mutating func int64() -> Int {
        Int(truncatingIfNeeded: (0 ..< 8).reduce(UInt64(0)) { value, _ in value << 8 | UInt64(byte()) })
    }

    /// Mostly a small size in `low ... high`; one time in sixteen an absurd one (negative,
    /// zero, huge, Int.max, Int.min) so that every range check is exercised.
    mutating func size(_ low: Int, _ high: Int) -> Int {
        let selector = byte()
        if selector >= 240 {
            let absurd = [0, -1, -2, Int.max, Int.min, Int.max / 2, 1 << 31, 1 << 20, 1 << 24, 1 << 40,
                          Int(Int32.max), 65_536, 1 << 62, -(1 << 31), 4097, 3]
            return absurd[Int(selector - 240)]
        }
        return low + Int(selector) % (high - low + 1)
    }

    /// Mostly a modest float; sometimes NaN, infinities, zero, huge or tiny values.
    mutating func float() -> Float {
        let selector = byte()
        if selector >= 240 {
            let special: [Float] = [.nan, .infinity, -.infinity, 0, -0, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
                                    .leastNonzeroMagnitude, 1e30, -1e30, 1e-30, 0.5, 2, -3, 100, 1e6]
            return special[Int(selector - 240)]
        }
        return Float(Int(selector) - 120) / 16
    }
}

/// A per-process scratch directory for fuzz targets that need files. It starts with what the
/// seed model files point to: `blob.bin` (256 floats 0, 0.01, 0.02, ...), a directory
/// `weights/` holding `c_W.bin` (2 floats) and `c_b.bin` (2 floats), and an empty `empty/`.
enum FuzzScratch {
    static let directory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("anvil-fuzz-\(getpid())")
        let manager = FileManager.default
        try? manager.createDirectory(at: url.appendingPathComponent("weights"), withIntermediateDirectories: true)
        try? manager.createDirectory(at: url.appendingPathComponent("empty"), withIntermediateDirectories: true)
        func floats(_ values: [Float]) -> Data { values.withUnsafeBufferPointer { Data(buffer: $0) } }
        try? floats((0 ..< 256).map { Float($0) / 100 }).write(to: url.appendingPathComponent("blob.bin"))
        try? floats([0.5, -0.5]).write(to: url.appendingPathComponent("weights/c_W.bin"))
        try? floats([0.1, 0.2]).write(to: url.appendingPathComponent("weights/c_b.bin"))
        atexit { try? FileManager.default.removeItem(at: FuzzScratch.directory) }
        return url
    }()
}

/// Stops the run with a message libFuzzer records as a crash: a property the target checks failed.
func fuzzFailure(_ message: String) -> Never {
    fatalError("fuzz property violated: \(message)")
}

/// Prints when `ANVIL_FUZZ_VERBOSE` is set (to check what the seeds reach).
func fuzzLog(_ message: @autoclosure () -> String) {
    if getenv("ANVIL_FUZZ_VERBOSE") != nil { print(message()) }
}
