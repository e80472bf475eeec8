import Foundation

/// A tiny deterministic generator (SplitMix64), so every random test case is reproducible
/// from its seed. The one generator of the tests; suites that used to carry a private copy keep
/// their own `offset`, so their cases are the same as before.
struct RefRandom {
    private var state: UInt64

    init(seed: Int) { self.init(seed: UInt64(truncatingIfNeeded: seed), offset: 0x1234_5678) }

    /// The stream starting at `seed · φ + offset` (φ = 0x9E37_79B9_7F4A_7C15, SplitMix64's increment).
    init(seed: UInt64, offset: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 &+ offset }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform integer in `range`.
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }

    /// A uniform double in `[0, 1)`.
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// A uniform float in `[lo, hi)`.
    mutating func float(_ lo: Float = -1, _ hi: Float = 1) -> Float { lo + (hi - lo) * Float(unit()) }

    /// A standard normal value (Box–Muller).
    mutating func normal() -> Float {
        Float((-2 * Foundation.log(1 - unit())).squareRoot() * Foundation.cos(2 * Double.pi * unit()))
    }

    mutating func bool() -> Bool { next() & 1 == 1 }

    mutating func pick<T>(_ items: [T]) -> T { items[int(0 ... items.count - 1)] }

    /// `count` floats in `[lo, hi)`.
    mutating func floats(_ count: Int, _ lo: Float = -1, _ hi: Float = 1) -> [Float] {
        (0 ..< count).map { _ in float(lo, hi) }
    }

    /// A random input batch.
    mutating func tensor(n: Int, h: Int, w: Int, c: Int, _ lo: Float = -1, _ hi: Float = 1) -> RefTensor {
        RefTensor(n: n, h: h, w: w, c: c, floats: floats(n * h * w * c, lo, hi))
    }
}
