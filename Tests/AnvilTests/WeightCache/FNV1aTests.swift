import Testing
@testable import Anvil

/// The weight cache's names rest on FNV-1a: checked against the algorithm's published test
/// vectors, and a float against its bytes.
@Suite("FNV-1a")
struct FNV1aTests {
    @Test("64-bit FNV-1a of the published test strings")
    func publishedVectors() {
        for (text, expected) in [("", "cbf29ce484222325"), ("a", "af63dc4c8601ec8c"), ("foobar", "85944171f73967e8")] {
            var hash = FNV1a()
            hash.add(bytes: text.utf8)
            #expect(hash.hex == expected, "FNV-1a(\"\(text)\")")
        }
    }

    @Test("A float adds its bit pattern's four bytes, low byte first")
    func floatBytes() {
        let value: Float = -1234.5678
        var byFloat = FNV1a(), byBytes = FNV1a()
        byFloat.add(value)
        let bits = value.bitPattern
        byBytes.add(bytes: [UInt8(bits & 0xff), UInt8(bits >> 8 & 0xff), UInt8(bits >> 16 & 0xff), UInt8(bits >> 24)])
        #expect(byFloat.value == byBytes.value)
    }
}
