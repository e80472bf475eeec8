import Anvil
import Foundation
import SwiftProtobuf

/// An `.onnx` file parsed: the `ModelProto`, the folder its external data is relative to, and the
/// path errors name. Truncated files, wrong wire types and nesting past the depth limit are
/// thrown as ``ONNXImportError`` by swift-protobuf's decoder, never a crash.
struct ONNXFile {
    /// The parsed model.
    let model: Onnx_ModelProto
    /// The folder external data is read from.
    let directory: URL?
    /// The file's path (or a description) for error messages.
    let source: String

    /// How deep messages may nest (graphs in attributes in graphs ...).
    static let depthLimit = 64

    /// Reads and parses the file at `url` (mapped, not copied twice).
    init(contentsOf url: URL) throws {
        let mapped: MappedFile
        do { mapped = try MappedFile(path: url.path) } catch let error as AnvilError {
            throw ONNXImportError("cannot read ONNX file: \(error.message)")
        }
        let data = withExtendedLifetime(mapped) {
            Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: mapped.bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!),
                 count: mapped.bytes.count, deallocator: .custom { _, _ in _ = mapped })
        }
        try self.init(data: data, source: url.path, directory: url.deletingLastPathComponent())
    }

    /// Parses a serialised `ModelProto`.
    init(data: Data, source: String, directory: URL?) throws {
        guard !data.isEmpty else { throw ONNXImportError("'\(source)' is empty, not an ONNX model") }
        var options = BinaryDecodingOptions()
        options.messageDepthLimit = Self.depthLimit
        do {
            model = try Onnx_ModelProto(serializedBytes: data, partial: true, options: options)
        } catch {
            throw ONNXImportError("'\(source)' is not a valid ONNX model: \(Self.describe(error))")
        }
        guard model.hasGraph else { throw ONNXImportError("'\(source)' has no graph (field 'graph' of ModelProto is missing)") }
        self.directory = directory
        self.source = source
    }

    private static func describe(_ error: any Error) -> String {
        switch error as? BinaryDecodingError {
        case .truncated?: return "the protobuf data is truncated"
        case .malformedProtobuf?: return "malformed protobuf (a wrong wire type or field length)"
        case .messageDepthLimit?: return "messages nest deeper than \(depthLimit) levels"
        case .invalidUTF8?: return "a string field is not valid UTF-8"
        default: return "\(error)"
        }
    }
}
