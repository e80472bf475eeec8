import Anvil
import Foundation
import SwiftProtobuf

/// A graph's initializers, handed to the converter one at a time.
///
/// A file's model is parsed without them: ``split(_:)`` finds each initializer's bytes in the
/// file and leaves them out of what swift-protobuf parses, and each is parsed only when the
/// converter decodes it, its `raw_data` read in place. swift-protobuf copies every `bytes` field,
/// so a model parsed whole held its weights twice (the file's pages and the copy) before the
/// first was decoded. An initializer's pages of a mapped file are released a megabyte at a
/// time as they are decoded (``InPlaceBytes``), so a large tensor is not resident twice.
/// A model whose layout the split does not expect (two graph fields, a malformed message) is
/// parsed whole, as before, and swift-protobuf names what is wrong.
final class ONNXInitializers {
    /// Where the initializers are.
    private enum Storage {
        /// In the parsed model (taken out as the converter asks for them).
        case parsed([Onnx_TensorProto])
        /// Each a range of `bytes`: a serialised TensorProto.
        case ranges([Range<Int>], ONNXBytes)
    }

    private var storage: Storage
    /// Names the file in errors.
    private let source: String
    /// How deep a TensorProto's messages may nest.
    private let depthLimit: Int

    /// The initializers of an already parsed graph.
    init(parsed: [Onnx_TensorProto], source: String) {
        storage = .parsed(parsed)
        self.source = source
        depthLimit = ONNXFile.depthLimit
    }

    /// Initializers at `ranges` of `bytes`, messages nested `depth` deep in the model.
    init(ranges: [Range<Int>], in bytes: ONNXBytes, source: String, depth: Int) {
        storage = .ranges(ranges, bytes)
        self.source = source
        depthLimit = max(ONNXFile.depthLimit - depth, 1)
    }

    /// How many there are.
    var count: Int {
        switch storage {
        case .parsed(let tensors): return tensors.count
        case .ranges(let ranges, _): return ranges.count
        }
    }

    /// Calls `decode` with initializer `index` and its `raw_data` when it was left in the file
    /// (nil: read the tensor's own fields), then lets go of the initializer's bytes. Throws
    /// ``ONNXImportError`` when its message is not a valid TensorProto.
    func take<R>(_ index: Int, _ decode: (Onnx_TensorProto, InPlaceBytes?) throws -> R) throws -> R {
        switch storage {
        case .parsed(var tensors):
            // Out of the list first, so the bytes are freed once decoded (the list holds the only copy).
            storage = .parsed([])
            let tensor = tensors[index]
            tensors[index] = Onnx_TensorProto()
            storage = .parsed(tensors)
            return try decode(tensor, nil)
        case .ranges(let ranges, let bytes):
            let range = ranges[index]
            return try bytes.withBytes { all in
                var message: [UInt8] = [], raw: Range<Int>?
                if let fields = ProtoWire.fields(of: all, in: range) {
                    // raw_data (field 9) stays in place; the last one counts, as in protobuf.
                    for field in fields {
                        if field.number == 9 && field.wireType == 2 { raw = field.payload } else { message += all[field.whole] }
                    }
                } else {
                    message = Array(all[range])
                }
                var options = BinaryDecodingOptions()
                options.messageDepthLimit = depthLimit
                let tensor: Onnx_TensorProto
                do {
                    tensor = try Onnx_TensorProto(serializedBytes: message, partial: true, options: options)
                } catch {
                    throw ONNXImportError("'\(source)' is not a valid ONNX model: \(ONNXFile.describe(error)) (in initializer \(index + 1))")
                }
                let result = try decode(tensor, raw.map { InPlaceBytes(bytes: UnsafeRawBufferPointer(rebasing: all[$0]), release: bytes.release) })
                bytes.release(UnsafeRawBufferPointer(rebasing: all[range]))
                return result
            }
        }
    }

    /// A serialised `ModelProto` without its graph's initializers, and where each initializer is
    /// in `bytes`; nil when the model has no initializers or a layout the split does not take
    /// (the graph field twice or not length-delimited, fields that do not tile their message).
    static func split(_ bytes: UnsafeRawBufferPointer) -> (model: [UInt8], initializers: [Range<Int>])? {
        // ModelProto.graph is field 7; GraphProto.initializer is field 5.
        guard let top = ProtoWire.fields(of: bytes, in: 0 ..< bytes.count) else { return nil }
        let graphs = top.filter { $0.number == 7 }
        guard graphs.count == 1, graphs[0].wireType == 2,
              let graphFields = ProtoWire.fields(of: bytes, in: graphs[0].payload) else { return nil }
        var graph: [UInt8] = [], initializers: [Range<Int>] = []
        for field in graphFields {
            if field.number == 5 && field.wireType == 2 { initializers.append(field.payload) } else { graph += bytes[field.whole] }
        }
        guard !initializers.isEmpty else { return nil }
        var model: [UInt8] = []
        for field in top {
            guard field.number == 7 else {
                model += bytes[field.whole]
                continue
            }
            model.append(7 << 3 | 2)
            ProtoWire.appendVarint(UInt64(graph.count), to: &model)
            model += graph
        }
        return (model, initializers)
    }
}

/// The bytes of an `.onnx` file or of serialised data, kept alive for ``ONNXInitializers``.
enum ONNXBytes {
    /// A mapped file: its pages can be released once read.
    case mapped(MappedFile)
    /// Data in memory.
    case data(Data)

    /// Calls `body` with the bytes.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch self {
        case .mapped(let file): return try withExtendedLifetime(file) { try body(file.bytes) }
        case .data(let data): return try data.withUnsafeBytes(body)
        }
    }

    /// Takes the whole pages of `range` out of resident memory, for a mapped file.
    func release(_ range: UnsafeRawBufferPointer) {
        if case .mapped(let file) = self { file.releasePages(range) }
    }
}
