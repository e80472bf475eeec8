import Anvil
import Foundation
import SwiftProtobuf

/// An `.onnx` file parsed: the `ModelProto` (its graph's initializers apart, in
/// ``initializers``), the folder its external data is relative to, and the path errors name.
/// Truncated files, wrong wire types and nesting past the depth limit are thrown as
/// ``ONNXImportError`` by swift-protobuf's decoder, never a crash.
struct ONNXFile {
    /// The parsed model, without its graph's initializers.
    let model: Onnx_ModelProto
    /// The graph's initializers, parsed as the converter reads them.
    let initializers: ONNXInitializers
    /// The folder external data is read from.
    let directory: URL?
    /// The file's path (or a description) for error messages.
    let source: String

    /// How deep messages may nest (graphs in attributes in graphs ...).
    static let depthLimit = 64

    /// Reads and parses the file at `url` (mapped; the initializers' bytes read in place).
    init(contentsOf url: URL) throws {
        let mapped: MappedFile
        do { mapped = try MappedFile(path: url.path) } catch let error as AnvilError {
            throw ONNXImportError("cannot read ONNX file: \(error.message)")
        }
        try self.init(bytes: .mapped(mapped), source: url.path, directory: url.deletingLastPathComponent())
    }

    /// Parses a serialised `ModelProto`.
    init(data: Data, source: String, directory: URL?) throws {
        try self.init(bytes: .data(data), source: source, directory: directory)
    }

    private init(bytes: ONNXBytes, source: String, directory: URL?) throws {
        guard bytes.withBytes({ $0.count }) > 0 else { throw ONNXImportError("'\(source)' is empty, not an ONNX model") }
        var options = BinaryDecodingOptions()
        options.messageDepthLimit = Self.depthLimit
        var model: Onnx_ModelProto
        do {
            if let split = bytes.withBytes(ONNXInitializers.split) {
                model = try Onnx_ModelProto(serializedBytes: split.model, partial: true, options: options)
                // (ModelProto → GraphProto → TensorProto: the initializers sit two levels down.)
                initializers = ONNXInitializers(ranges: split.initializers, in: bytes, source: source, depth: 2)
            } else {
                model = try bytes.withBytes { all in
                    try Onnx_ModelProto(serializedBytes: Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: all.baseAddress!),
                                                              count: all.count, deallocator: .none),
                                        partial: true, options: options)
                }
                initializers = ONNXInitializers(parsed: model.graph.initializer, source: source)
                model.graph.initializer = []
            }
        } catch {
            throw ONNXImportError("'\(source)' is not a valid ONNX model: \(Self.describe(error))")
        }
        guard model.hasGraph else { throw ONNXImportError("'\(source)' has no graph (field 'graph' of ModelProto is missing)") }
        self.model = model
        self.directory = directory
        self.source = source
    }

    /// A swift-protobuf decoding error in words.
    static func describe(_ error: any Error) -> String {
        switch error as? BinaryDecodingError {
        case .truncated?: return "the protobuf data is truncated"
        case .malformedProtobuf?: return "malformed protobuf (a wrong wire type or field length)"
        case .messageDepthLimit?: return "messages nest deeper than \(depthLimit) levels"
        case .invalidUTF8?: return "a string field is not valid UTF-8"
        default: return "\(error)"
        }
    }
}
