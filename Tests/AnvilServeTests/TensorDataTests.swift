@testable import AnvilServe
@testable import AnvilTestSupport
import Foundation
import Testing

/// The request scanner's fast number reading gives exactly what Foundation's JSONDecoder reads,
/// and leaves to it (and its error messages) whatever is not a regular array of JSON numbers.
@Suite("Serving: tensor data in JSON")
struct TensorDataTests {
    /// `json` read through the scanner, and through JSONDecoder alone (the reference).
    static func both(_ json: String) throws -> (scanned: InferenceRequest, reference: InferenceRequest, fast: Int) {
        let (scanned, arrays) = TensorDataScanner.scan(Data(json.utf8))
        let decoder = JSONDecoder()
        decoder.userInfo[TensorDataScanner.userInfoKey] = arrays
        return (try decoder.decode(InferenceRequest.self, from: scanned),
                try JSONDecoder().decode(InferenceRequest.self, from: Data(json.utf8)), arrays.arrays.count)
    }

    @Test("Flat and nested arrays, exponents, signs, whitespace, empty: the fast path reads what JSONDecoder reads")
    func sameAsJSONDecoder() throws {
        var random = RefRandom(seed: 808)
        let numbers = (0 ..< 200).map { _ -> String in
            let value = random.float(-1000, 1000) * pow(10, Float(random.int(-30 ... 30)))
            return random.bool() ? "\(value)" : String(format: "%.9e", Double(value))
        }
        let flat = "[" + numbers.joined(separator: " ,\n ") + "]"
        let nested = "[[" + numbers[0 ..< 100].joined(separator: ",") + "], [" + numbers[100 ..< 200].joined(separator: ",") + "]]"
        let cases = [
            #"{"inputs": [{"name": "a", "shape": [200], "datatype": "FP32", "data": \#(flat)}]}"#,
            #"{"inputs": [{"name": "a", "shape": [2, 100], "datatype": "FP32", "data": \#(nested)}], "id": "data"}"#,
            #"{"id": "x\"data\"", "inputs": [{"name": "a", "shape": [1], "datatype": "FP32", "data" : [ -0, 1E2, -2.5e-3 ] }, {"name": "b", "shape": [0], "datatype": "FP32", "data": []}]}"#,
        ]
        for json in cases {
            let (scanned, reference, fast) = try Self.both(json)
            #expect(fast == reference.inputs.count, "every array took the fast path")
            #expect(scanned == reference)
            #expect(scanned.inputs.map { $0.data?.values.map(\.bitPattern) ?? [] } == reference.inputs.map { $0.data?.values.map(\.bitPattern) ?? [] })
        }
    }

    @Test("What is not a regular array of numbers goes to JSONDecoder, which names it")
    func leftToJSONDecoder() throws {
        for data in [#"["1", 2]"#, "[[1, 2], [3]]", "[[1, 2], 3]", "[1e39]", "[NaN]", "[0x10]", "[1, 2", "[true, 1]", "[1, false]", "[[1], [[2]]]", "[null]"] {
            let json = #"{"inputs": [{"name": "a", "shape": [2], "datatype": "FP32", "data": \#(data)}]}"#
            let (scanned, arrays) = TensorDataScanner.scan(Data(json.utf8))
            #expect(arrays.arrays.isEmpty, "\(data)")
            #expect(scanned == Data(json.utf8))
            let decoder = JSONDecoder()
            decoder.userInfo[TensorDataScanner.userInfoKey] = arrays
            #expect(throws: DecodingError.self, "\(data)") { try decoder.decode(InferenceRequest.self, from: scanned) }
        }
        // A client cannot pass a placeholder of its own.
        let forged = #"{"inputs": [{"name": "a", "shape": [1], "datatype": "FP32", "data": "anvil-tensor-data-0"}]}"#
        #expect(throws: DecodingError.self) { try Self.both(forged) }
    }

    @Test("Truth values (BOOL data) go to JSONDecoder, flat or nested; numbers keep a double's precision")
    func truthValuesAndIntegers() throws {
        let json = #"{"inputs": [{"name": "a", "shape": [2, 2], "datatype": "BOOL", "data": [[true, false], [false, true]]}, "#
            + #"{"name": "b", "shape": [3], "datatype": "INT64", "data": [16777217, -16777217, 9007199254740992]}]}"#
        let (scanned, reference, fast) = try Self.both(json)
        #expect(fast == 1, "the numbers took the fast path, the truth values did not")
        #expect(scanned == reference)
        #expect(scanned.inputs[0].data?.elements == .truths([true, false, false, true]) && scanned.inputs[0].data?.nesting == [2, 2])
        #expect(scanned.inputs[1].data?.elements == .numbers([16_777_217, -16_777_217, 9_007_199_254_740_992]))
        // A response's integers and truth values are written as JSON integers and booleans.
        let written = try JSONEncoder().encode([TensorData(.integers([3, -1])), TensorData(.truths([true, false])), TensorData([0.5])])
        #expect(String(decoding: written, as: UTF8.self) == "[[3,-1],[true,false],[0.5]]")
    }
}
