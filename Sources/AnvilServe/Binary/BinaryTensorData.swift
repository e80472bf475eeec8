import Foundation

/// The binary tensor data extension's framing: a body is the JSON header
/// (`Inference-Header-Content-Length` bytes of it) followed by the tensors' bytes, each tensor
/// row-major as little-endian elements of its datatype (BOOL one byte, 0 or 1), in the order of
/// the JSON's tensors that carry `binary_data_size`. gRPC's `raw_input_contents` and
/// `raw_output_contents` hold the same bytes.
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

    /// The elements of `datatype` in `bytes` (whose count is a multiple of its byte count).
    static func elements(_ bytes: Data, as datatype: TensorDatatype) -> WireElements {
        let width = datatype.byteCount
        precondition(bytes.count % width == 0)
        let count = bytes.count / width
        // Each element's bytes as an unsigned little-endian integer.
        func words() -> [UInt64] {
            bytes.withUnsafeBytes { raw in
                (0 ..< count).map { index in
                    var word: UInt64 = 0
                    for byte in 0 ..< width { word |= UInt64(raw[index * width + byte]) << (8 * byte) }
                    return word
                }
            }
        }
        switch datatype {
        case .fp32: return .floats(floats(bytes, count: count))
        case .bf16: return .floats(words().map { Float(bitPattern: UInt32($0) << 16) })
        case .bool, .uint8, .uint16, .uint32, .uint64: return .unsigned(words())
        // Two's complement: the word's sign bit is the element's top bit.
        case .int8: return .signed(words().map { Int64(Int8(truncatingIfNeeded: $0)) })
        case .int16: return .signed(words().map { Int64(Int16(truncatingIfNeeded: $0)) })
        case .int32: return .signed(words().map { Int64(Int32(truncatingIfNeeded: $0)) })
        case .int64: return .signed(words().map { Int64(bitPattern: $0) })
        }
    }

    /// The little-endian bytes of `elements` as `datatype` (an output's own datatype: floats for
    /// FP32, truth values for BOOL, integers otherwise), appended to `data`.
    static func append(_ elements: TensorData.Elements, as datatype: TensorDatatype, to data: inout Data) {
        let words: [UInt64]
        switch (datatype, elements) {
        case (.fp32, _):
            append(elements.floatValues, to: &data)
            return
        case (.bf16, _): words = elements.floatValues.map { UInt64($0.bitPattern >> 16) }
        case (_, .integers(let values)): words = values.map { UInt64(bitPattern: $0) }
        case (_, .truths(let values)): words = values.map { $0 ? 1 : 0 }
        // Not met for an output; truncated, with 0 for what no integer holds.
        case (_, .floats), (_, .numbers): words = elements.floatValues.map { UInt64(bitPattern: Int64(exactly: $0.rounded(.towardZero)) ?? 0) }
        }
        let width = datatype.byteCount
        data.reserveCapacity(data.count + words.count * width)
        for word in words {
            for byte in 0 ..< width { data.append(UInt8(truncatingIfNeeded: word >> (8 * byte))) }
        }
    }
}
