import Foundation

/// The binary tensor data extension's framing: a body is the JSON header
/// (`Inference-Header-Content-Length` bytes of it) followed by the tensors' bytes, each FP32
/// tensor little-endian and row-major, in the order of the JSON's tensors that carry
/// `binary_data_size`.
public enum BinaryTensorData {
    /// The HTTP header giving the JSON part's length.
    public static let headerLengthField = "Inference-Header-Content-Length"

    /// The JSON part and the binary part of `body`, split after `headerLength` bytes (the
    /// whole body is JSON when the header is absent).
    static func split(_ body: Data, headerLength: String?) throws -> (json: Data, binary: Data) {
        guard let headerLength else { return (body, Data()) }
        guard let length = Int(headerLength.trimmingCharacters(in: .whitespaces)), length >= 0, length <= body.count else {
            throw ProtocolError.badRequest("\(headerLengthField) is '\(headerLength)'; it must be a byte count between 0 and the body's \(body.count) bytes")
        }
        return (body.prefix(length), body.dropFirst(length))
    }

    /// `count` little-endian float32 values from `bytes`.
    static func floats(_ bytes: Data, count: Int) -> [Float] {
        precondition(bytes.count == count * 4)
        var values = [Float](repeating: 0, count: count)
        values.withUnsafeMutableBytes { target in
            bytes.withUnsafeBytes { source in target.copyMemory(from: source) }
        }
        #if _endian(big)
        for index in values.indices { values[index] = Float(bitPattern: UInt32(littleEndian: values[index].bitPattern)) }
        #endif
        return values
    }

    /// The little-endian bytes of `values`, appended to `data`.
    static func append(_ values: [Float], to data: inout Data) {
        #if _endian(big)
        let values = values.map { Float(bitPattern: $0.bitPattern.littleEndian) }
        #endif
        values.withUnsafeBytes { data.append(contentsOf: $0) }
    }
}
