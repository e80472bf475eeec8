import Foundation
import SwiftProtobuf
import Testing
@testable import AnvilONNX
@testable import AnvilTestSupport

/// Initializers are parsed one at a time from the file's bytes, their `raw_data` read in place
/// (``ONNXInitializers``): the result must be what swift-protobuf's whole-model parse gives, for
/// every layout protobuf allows, and a file the split does not take is parsed whole.
@Suite struct ONNXInitializerSplitTests {
    /// The hostile-file model with its weight as `raw_data` (little-endian float32).
    static func rawModel(_ weights: [Float]) -> Onnx_ModelProto {
        var model = ONNXHostileFileTests.model(weights: weights)
        model.graph.initializer[0].floatData = []
        model.graph.initializer[0].rawData = Self.bytes(weights)
        return model
    }

    static func bytes(_ values: [Float]) -> Data {
        var data = Data()
        for value in values { withUnsafeBytes(of: value.bitPattern.littleEndian) { data.append(contentsOf: $0) } }
        return data
    }

    /// The weight tensor swift-protobuf's own parse of `bytes` holds: the reference.
    static func referenceWeights(_ bytes: Data) throws -> [Float] {
        let tensor = try Onnx_ModelProto(serializedBytes: bytes).graph.initializer[0]
        guard tensor.hasRawData else { return tensor.floatData }
        return tensor.rawData.withUnsafeBytes { raw in
            (0 ..< raw.count / 4).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
        }
    }

    static func convertedWeights(_ bytes: Data) throws -> [Float] {
        try #require(try ONNXConversion(serialized: bytes).tensors.first { $0.name == "conv_W" }).values
    }

    /// raw_data, float_data, and a file read from disk (mapped) all give the reference values.
    @Test func splitParsesWhatTheWholeParseHolds() throws {
        let weights: [Float] = [0.5, -1.25, 3, 0.125, -7, 2]
        for model in [Self.rawModel(weights), ONNXHostileFileTests.model(weights: weights)] {
            let bytes: Data = try model.serializedBytes()
            #expect(ONNXInitializers.split(bytes.withUnsafeBytes { UnsafeRawBufferPointer($0) }) != nil)
            #expect(try Self.convertedWeights(bytes) == Self.referenceWeights(bytes))
            let directory = try Fixtures.temporaryDirectory(prefix: "onnx-split")
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = directory.appendingPathComponent("model.onnx")
            try bytes.write(to: url)
            #expect(try ONNXConversion(contentsOf: url).tensors.first { $0.name == "conv_W" }?.values == weights)
        }
    }

    /// Protobuf keeps the last of a field written twice: a second raw_data wins, in place too.
    @Test func theLastRawDataWins() throws {
        let model = Self.rawModel([1, 2, 3, 4, 5, 6])
        var tensorBytes: Data = try model.graph.initializer[0].serializedBytes()
        var second = Onnx_TensorProto()
        second.rawData = Self.bytes([6, 5, 4, 3, 2, 1])
        tensorBytes.append(try second.serializedBytes())
        let bytes = try Self.model(model, initializerBytes: tensorBytes)
        #expect(try Self.referenceWeights(bytes) == [6, 5, 4, 3, 2, 1])
        #expect(try Self.convertedWeights(bytes) == [6, 5, 4, 3, 2, 1])
    }

    /// `model` serialised with its one initializer replaced by `initializerBytes`, as written.
    static func model(_ model: Onnx_ModelProto, initializerBytes: some Collection<UInt8>) throws -> Data {
        var withoutInitializer = model
        withoutInitializer.graph.initializer = []
        var graphBytes: Data = try withoutInitializer.graph.serializedBytes()
        graphBytes.append(0x2A)  // GraphProto field 5 (initializer), length-delimited
        appendVarint(initializerBytes.count, to: &graphBytes)
        graphBytes.append(contentsOf: initializerBytes)
        var withoutGraph = model
        withoutGraph.clearGraph()
        var bytes: Data = try withoutGraph.serializedBytes()
        bytes.append(0x3A)  // ModelProto field 7 (graph), length-delimited
        appendVarint(graphBytes.count, to: &bytes)
        bytes.append(graphBytes)
        return bytes
    }

    /// A graph field written twice merges in protobuf; the split leaves such a file to the whole
    /// parse, which merges it.
    @Test func aGraphWrittenTwiceIsParsedWhole() throws {
        var bytes: Data = try Self.rawModel([1, 2, 3, 4, 5, 6]).serializedBytes()
        var more = Onnx_GraphProto()
        more.name = "renamed"
        let moreBytes: Data = try more.serializedBytes()
        bytes.append(0x3A)
        Self.appendVarint(moreBytes.count, to: &bytes)
        bytes.append(moreBytes)
        #expect(ONNXInitializers.split(bytes.withUnsafeBytes { UnsafeRawBufferPointer($0) }) == nil)
        let conversion = try ONNXConversion(serialized: bytes)
        #expect(conversion.name == "renamed")
        #expect(conversion.tensors.first?.values == [1, 2, 3, 4, 5, 6])
    }

    /// An initializer whose own bytes are malformed (its outer length intact) is named.
    @Test func aMalformedInitializerIsNamed() throws {
        let broken: [UInt8] = [0x42, 0x05, 0x63]  // name (field 8) claims 5 bytes, has 1
        let bytes = try Self.model(Self.rawModel([1, 2, 3, 4, 5, 6]), initializerBytes: broken)
        let message = ONNXHostileFileTests.error(bytes)?.message ?? ""
        #expect(message.contains("not a valid ONNX model") && message.contains("initializer 1"), "\(message)")
    }

    static func appendVarint(_ value: Int, to data: inout Data) {
        var rest = UInt64(value)
        while rest >= 0x80 {
            data.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        data.append(UInt8(rest))
    }
}
