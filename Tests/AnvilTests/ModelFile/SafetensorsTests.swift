import Foundation
import Testing
@testable import Anvil
@testable import AnvilTestSupport

/// `SafetensorsParameterSource` on files written by the `safetensors` Python package
/// (`Fixtures/safetensors`, made by `Scripts/fixtures/converter_fixtures.py --only safetensors` from a
/// small PyTorch model) and on hand-built malformed files.
@Suite struct SafetensorsTests {
    static let directory = Fixtures.root.appendingPathComponent("safetensors")

    /// The PyTorch model of the fixture, with Anvil layer names that are its module paths.
    static func model() throws -> Model {
        let input = Input(width: 12, height: 12, channels: 3, name: "image")
        let output = input
            --> Convolution(kernel: (3, 3), channels: 8, padding: .explicit(top: 1, left: 1, bottom: 1, right: 1), name: "features_0")
            --> BatchNormalization(epsilon: 1e-5, name: "features_1")
            --> Activation(.relu, name: "features_2")
            --> DepthwiseConvolution(kernel: (3, 3), padding: .explicit(top: 1, left: 1, bottom: 1, right: 1), name: "features_3")
            --> BatchNormalization(epsilon: 1e-5, name: "features_4")
            --> PReLU(name: "features_5")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2), name: "features_6")
            --> Dense(neurons: 10, name: "classifier")
        return try Model(input: input, output: output)
    }

    static func input() throws -> Tensor {
        try Tensor(batch: 1, shape: Shape(height: 12, width: 12, channels: 3),
                   values: Fixtures.floats(directory.appendingPathComponent("input.f32")))
    }

    /// The same weights as `model_<dtype>.safetensors`, as float32 arrays under Anvil's names.
    static func reference(_ dtype: String) throws -> ArrayParameterSource {
        let index = try JSONValue.parse(try Data(contentsOf: directory.appendingPathComponent("reference.json")), source: "reference.json")
        let values = try Fixtures.floats(directory.appendingPathComponent("reference_\(dtype).bin"))
        guard case .object(let entries)? = index["tensors"] else { throw AnvilError(.invalidFile, "reference.json has no tensors") }
        var tensors: [String: [Float]] = [:]
        for (name, entry) in entries {
            guard case .int(let offset)? = entry["offset"], case .int(let count)? = entry["count"] else { continue }
            tensors[name] = Array(values[offset / 4 ..< offset / 4 + count])
        }
        return ArrayParameterSource(tensors)
    }

    static func predict(_ source: any ParameterSource) throws -> [Float] {
        let model = try model()
        try model.compile(layout: .pytorch, from: source)
        return try model.predict(try input()).values
    }

    @Test(arguments: ["f32", "f16", "bf16", "f64"])
    func matchesArrayParameterSource(_ dtype: String) throws {
        let source = try SafetensorsParameterSource(url: Self.directory.appendingPathComponent("model_\(dtype).safetensors"))
        let fromFile = try Self.predict(source)
        let fromArrays = try Self.predict(try Self.reference(dtype))
        #expect(fromFile == fromArrays)
        // And both agree with PyTorch (the weights of the f16/bf16 files are rounded).
        let expected = try Fixtures.floats(Self.directory.appendingPathComponent("expected.f32"))
        let range = expected.max()! - expected.min()!
        let worst = zip(fromFile, expected).map { abs($0 - $1) }.max()!
        let tolerance: Float = dtype == "f16" ? 1e-2 : dtype == "bf16" ? 5e-2 : 1e-4
        print("safetensors \(dtype): identical to ArrayParameterSource: \(fromFile == fromArrays); max abs diff to PyTorch \(worst) = \(worst / range) x range")
        #expect(worst <= tolerance * range, "\(dtype): max abs diff \(worst), logit range \(range)")
    }

    @Test func float32IsUsedInPlace() throws {
        let source = try SafetensorsParameterSource(url: Self.directory.appendingPathComponent("model_f32.safetensors"))
        let data = try source.data(for: ParameterRequest(layer: "classifier", kind: .weights, count: 2880))
        let file = source.file.bytes
        let start = UnsafeRawPointer(data.buffer.baseAddress!)
        #expect(start >= file.baseAddress! && start + 2880 * 4 <= file.baseAddress! + file.count)
        #expect(data.owner === source.file)
        let copied = try SafetensorsParameterSource(url: source.url, loading: .copied)
            .data(for: ParameterRequest(layer: "classifier", kind: .weights, count: 2880))
        withExtendedLifetime((data, copied)) {
            #expect(Array(copied.buffer) == Array(data.buffer))
        }
        #expect(copied.owner !== source.file)
    }

    @Test func headerIsRead() throws {
        let source = try SafetensorsParameterSource(url: Self.directory.appendingPathComponent("model_bf16.safetensors"))
        #expect(source.tensors["features.0.weight"]?.shape == [8, 3, 3, 3])
        #expect(source.tensors["features.0.weight"]?.dataType == .bfloat16)
        #expect(source.tensors["features.1.num_batches_tracked"]?.dataType == .int64)
        #expect(source.tensors.count == 17)
        #expect(source.tensorNames?.count == 15)
        #expect(source.tensorName(for: ParameterRequest(layer: "features_4", kind: .variance, count: 8)) == "features.4.running_var")
    }

    @Test func anvilNaming() throws {
        let source = try SafetensorsParameterSource(url: Self.directory.appendingPathComponent("model_anvil_names.safetensors"),
                                                    naming: .anvil)
        #expect(try Self.predict(source) == Self.predict(try Self.reference("f32")))
    }

    @Test func customNaming() throws {
        // Anvil layers called conv/bn/... mapped onto the state_dict's module paths.
        let modules = ["conv": "features.0", "bn": "features.1", "relu": "features.2", "dw": "features.3",
                       "bn2": "features.4", "prelu": "features.5", "pool": "features.6", "fc": "classifier"]
        let naming = SafetensorsParameterSource.Naming { request in
            "\(modules[request.layer] ?? request.layer).\(SafetensorsParameterSource.Naming.pytorchSuffix(request.kind))"
        }
        let source = try SafetensorsParameterSource(url: Self.directory.appendingPathComponent("model_f32.safetensors"), naming: naming)
        let input = Input(width: 12, height: 12, channels: 3)
        let pad = Padding.explicit(top: 1, left: 1, bottom: 1, right: 1)
        let output = input
            --> Convolution(kernel: (3, 3), channels: 8, padding: pad, name: "conv")
            --> BatchNormalization(epsilon: 1e-5, name: "bn")
            --> Activation(.relu, name: "relu")
            --> DepthwiseConvolution(kernel: (3, 3), padding: pad, name: "dw")
            --> BatchNormalization(epsilon: 1e-5, name: "bn2")
            --> PReLU(name: "prelu")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2), name: "pool")
            --> Dense(neurons: 10, name: "fc")
        let model = try Model(input: input, output: output)
        try model.compile(layout: .pytorch, from: source)
        #expect(try model.predict(try Self.input()).values == Self.predict(try Self.reference("f32")))
    }

    @Test func unusedTensorsAreReported() throws {
        let url = Self.directory.appendingPathComponent("model_f32.safetensors")
        let strict = try SafetensorsParameterSource(url: url, ignoring: { _ in false })
        let error = #expect(throws: AnvilError.self) { try Self.model().compile(layout: .pytorch, from: strict) }
        #expect(error?.code == .unusedParameter)
        #expect(error?.message.contains("num_batches_tracked") == true)
    }

    @Test func integerTensorsCannotBeLoaded() throws {
        let source = try SafetensorsParameterSource(url: Self.directory.appendingPathComponent("model_f32.safetensors"),
                                                    naming: .init { _ in "features.1.num_batches_tracked" })
        let error = #expect(throws: AnvilError.self) {
            try source.data(for: ParameterRequest(layer: "x", kind: .weights, count: 1))
        }
        #expect(error?.code == .invalidParameter)
        #expect(error?.message.contains("I64") == true)
        #expect(error?.message.contains("features.1.num_batches_tracked") == true)
    }

    @Test func missingAndMiscountedTensors() throws {
        let url = Self.directory.appendingPathComponent("model_f32.safetensors")
        let source = try SafetensorsParameterSource(url: url)
        let missing = #expect(throws: AnvilError.self) {
            try source.data(for: ParameterRequest(layer: "features_9", kind: .weights, count: 4))
        }
        #expect(missing?.code == .missingParameter)
        #expect(missing?.message.contains("'features.9.weight'") == true)
        #expect(missing?.message.contains(url.path) == true)
        let wrong = #expect(throws: AnvilError.self) {
            try source.data(for: ParameterRequest(layer: "features_0", kind: .weights, count: 215))
        }
        #expect(wrong?.code == .invalidParameter)
        #expect(wrong?.message.contains("[8, 3, 3, 3]") == true)
    }

    // MARK: - Hand-built files

    /// A temporary file: the header length (or `length`), the header text, then `data`.
    static func file(_ header: String, data: [UInt8] = [], length: UInt64? = nil, name: String = #function) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("anvil-safetensors-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("\(name.filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString).safetensors")
        let text = Array(header.utf8)
        var bytes = withUnsafeBytes(of: (length ?? UInt64(text.count)).littleEndian) { Array($0) }
        bytes += text + data
        try Data(bytes).write(to: url)
        return url
    }

    /// The values of a request, read while the `ParameterData` (and its owner) is alive.
    static func values(_ source: SafetensorsParameterSource, _ layer: String, count: Int) throws -> [Float] {
        let data = try source.data(for: ParameterRequest(layer: layer, kind: .weights, count: count))
        return withExtendedLifetime(data) { Array(data.buffer) }
    }

    static func floatBytes(_ values: [Float]) -> [UInt8] {
        values.flatMap { withUnsafeBytes(of: $0.bitPattern.littleEndian) { Array($0) } }
    }

    struct Malformed: CustomTestStringConvertible, Sendable {
        let label: String
        let header: String
        let data: [UInt8]
        let length: UInt64?
        let fragments: [String]
        var testDescription: String { label }
    }

    static let malformed: [Malformed] = [
        Malformed(label: "header length past the end", header: "{}", data: [], length: 1000, fragments: ["header length 1000", "past the end"]),
        Malformed(label: "gigantic header length", header: "{}", data: [], length: UInt64.max, fragments: ["header length 18446744073709551615"]),
        Malformed(label: "header length just past the end", header: "{}", data: [], length: 3, fragments: ["past the end"]),
        Malformed(label: "not JSON", header: "{\"a\": [1, 2", data: [], length: nil, fragments: ["not valid JSON"]),
        Malformed(label: "not an object", header: "[1, 2, 3]", data: [], length: nil, fragments: ["not a JSON object"]),
        Malformed(label: "entry not an object", header: #"{"w": 3}"#, data: [], length: nil, fragments: ["'w'", "not a JSON object"]),
        Malformed(label: "missing dtype", header: #"{"w": {"shape": [1], "data_offsets": [0, 4]}}"#, data: [0, 0, 0, 0], length: nil,
                  fragments: ["'w'", "dtype"]),
        Malformed(label: "unknown dtype", header: #"{"w": {"dtype": "Q7", "shape": [1], "data_offsets": [0, 4]}}"#, data: [0, 0, 0, 0],
                  length: nil, fragments: ["'w'", "unknown dtype 'Q7'"]),
        Malformed(label: "negative dimension", header: #"{"w": {"dtype": "F32", "shape": [-1, 2], "data_offsets": [0, 4]}}"#,
                  data: [0, 0, 0, 0], length: nil, fragments: ["'w'", "non-negative"]),
        Malformed(label: "fractional dimension", header: #"{"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}}"#,
                  data: [0, 0, 0, 0], length: nil, fragments: ["'w'", "shape"]),
        Malformed(label: "element count overflows",
                  header: #"{"w": {"dtype": "F32", "shape": [4294967296, 4294967296, 4294967296], "data_offsets": [0, 4]}}"#,
                  data: [0, 0, 0, 0], length: nil, fragments: ["'w'", "too many elements"]),
        Malformed(label: "byte count overflows",
                  header: #"{"w": {"dtype": "F64", "shape": [4611686018427387904], "data_offsets": [0, 4]}}"#,
                  data: [0, 0, 0, 0], length: nil, fragments: ["'w'", "too many elements"]),
        Malformed(label: "gigantic offsets", header: #"{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 1e30]}}"#,
                  data: [0, 0, 0, 0], length: nil, fragments: ["'w'", "data_offsets"]),
        Malformed(label: "offsets past the data", header: #"{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}"#,
                  data: [0, 0, 0, 0], length: nil, fragments: ["'w'", "run past the 4 bytes"]),
        Malformed(label: "negative offset", header: #"{"w": {"dtype": "F32", "shape": [1], "data_offsets": [-4, 0]}}"#,
                  data: [0, 0, 0, 0], length: nil, fragments: ["'w'", "negative or reversed"]),
        Malformed(label: "reversed offsets", header: #"{"w": {"dtype": "F32", "shape": [0], "data_offsets": [4, 0]}}"#,
                  data: [0, 0, 0, 0], length: nil, fragments: ["'w'", "negative or reversed"]),
        Malformed(label: "three offsets", header: #"{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}}"#,
                  data: [0, 0, 0, 0], length: nil, fragments: ["'w'", "[begin, end]"]),
        Malformed(label: "size does not match shape", header: #"{"w": {"dtype": "F16", "shape": [3], "data_offsets": [0, 4]}}"#,
                  data: [0, 0, 0, 0], length: nil, fragments: ["'w'", "hold 4 bytes", "needs 6"]),
        Malformed(label: "overlapping tensors",
                  header: #"{"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}"#,
                  data: Array(repeating: 0, count: 8), length: nil, fragments: ["'a'", "'b'", "overlap"]),
        Malformed(label: "partial bytes", header: #"{"w": {"dtype": "F4", "shape": [3], "data_offsets": [0, 2]}}"#,
                  data: [0, 0], length: nil, fragments: ["'w'", "whole bytes"]),
    ]

    @Test(arguments: malformed)
    func malformedHeaderIsAnError(_ testCase: Malformed) throws {
        let url = try Self.file(testCase.header, data: testCase.data, length: testCase.length, name: testCase.label)
        defer { try? FileManager.default.removeItem(at: url) }
        let error = #expect(throws: AnvilError.self) { try SafetensorsParameterSource(url: url) }
        #expect(error?.code == .invalidFile)
        #expect(error?.message.contains(url.path) == true, "\(error?.message ?? "")")
        for fragment in testCase.fragments {
            #expect(error?.message.contains(fragment) == true, "'\(fragment)' not in: \(error?.message ?? "")")
        }
    }

    @Test func tooShortFile() throws {
        let directory = FileManager.default.temporaryDirectory
        let url = directory.appendingPathComponent("anvil-short-\(UUID().uuidString).safetensors")
        try Data([1, 2, 3, 4]).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let error = #expect(throws: AnvilError.self) { try SafetensorsParameterSource(url: url) }
        #expect(error?.message.contains("too short") == true)
        let missing = #expect(throws: AnvilError.self) {
            try SafetensorsParameterSource(url: directory.appendingPathComponent("no-such-file-\(UUID().uuidString).safetensors"))
        }
        #expect(missing?.code == .fileError)
    }

    @Test func metadataIsIgnoredAndUnalignedDataIsCopied() throws {
        // A 3-byte header padding makes the data start at an odd offset.
        let header = #"{"__metadata__": {"format": "pt"}, "w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}"# + "   "
        let values: [Float] = [1.5, -2, 0.25, 1e-3]
        let url = try Self.file(header, data: Self.floatBytes(values))
        defer { try? FileManager.default.removeItem(at: url) }
        let source = try SafetensorsParameterSource(url: url, naming: .init { $0.layer })
        #expect((8 + header.utf8.count) % 4 != 0)
        #expect(source.tensorNames == ["w"])
        #expect(try Self.values(source, "w", count: 4) == values)
    }

    @Test func reducedPrecisionConversions() throws {
        // F16: 1, -2, 65504 (max), 2^-24 (smallest subnormal), -0, +inf, NaN, 0.1 (rounded).
        let half: [UInt16] = [0x3C00, 0xC000, 0x7BFF, 0x0001, 0x8000, 0x7C00, 0x7E00, 0x2E66]
        // BF16: 1, -3.5, 1e-40-ish subnormal, +inf.
        let brain: [UInt16] = [0x3F80, 0xC060, 0x0001, 0x7F80]
        let doubles: [Double] = [1.0 / 3.0, -1e300, 5e-324, 2.5]
        var data = half.flatMap { withUnsafeBytes(of: $0.littleEndian) { Array($0) } }
        data += brain.flatMap { withUnsafeBytes(of: $0.littleEndian) { Array($0) } }
        data += doubles.flatMap { withUnsafeBytes(of: $0.bitPattern.littleEndian) { Array($0) } }
        let header = #"{"h": {"dtype": "F16", "shape": [8], "data_offsets": [0, 16]}, "b": {"dtype": "BF16", "shape": [4], "data_offsets": [16, 24]}, "d": {"dtype": "F64", "shape": [4], "data_offsets": [24, 56]}}"#
        let url = try Self.file(header, data: data)
        defer { try? FileManager.default.removeItem(at: url) }
        let source = try SafetensorsParameterSource(url: url, naming: .init { $0.layer })
        let h = try Self.values(source, "h", count: 8)
        #expect(Array(h[0 ..< 4]) == [1, -2, 65504, 0x1p-24])
        #expect(h[4] == 0 && h[4].sign == .minus)
        #expect(h[5] == .infinity && h[6].isNaN)
        #expect(abs(h[7] - 0.1) < 1e-4)
        let b = try Self.values(source, "b", count: 4)
        #expect(b[0] == 1 && b[1] == -3.5 && b[2] == Float(bitPattern: 0x0001_0000) && b[3] == .infinity)
        let d = try Self.values(source, "d", count: 4)
        #expect(d == [Float(1.0 / 3.0), -.infinity, 0, 2.5])
        // Every F16 bit pattern converts exactly as Swift's own Float16 does.
        var mismatches = 0
        for bits in 0 ... Int(UInt16.max) {
            let ours = SafetensorsParameterSource.float(half: UInt16(bits))
            let swift = Float(Float16(bitPattern: UInt16(bits)))
            if !(ours.bitPattern == swift.bitPattern || (ours.isNaN && swift.isNaN)) { mismatches += 1 }
        }
        #expect(mismatches == 0)
    }

    @Test func emptyAndZeroSizedTensors() throws {
        let header = #"{"e": {"dtype": "F32", "shape": [0, 3], "data_offsets": [0, 0]}, "w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}"#
        let url = try Self.file(header, data: Self.floatBytes([7]))
        defer { try? FileManager.default.removeItem(at: url) }
        let source = try SafetensorsParameterSource(url: url, naming: .init { $0.layer })
        #expect(source.tensors["e"]?.elementCount == 0)
        #expect(try Self.values(source, "w", count: 1) == [7])
        let empty = try Self.file("{}")
        defer { try? FileManager.default.removeItem(at: empty) }
        #expect(try SafetensorsParameterSource(url: empty).tensors.isEmpty)
    }
}

