import Anvil
@testable import AnvilServe
import Foundation

/// The test side of typed tensors on the wire, written byte by byte and field by field from the
/// protocol's definition (not the server's code paths): little-endian elements of each datatype
/// (BOOL one byte), and gRPC's typed `contents` fields (KServe's table).
enum TypedWire {
    /// The little-endian bytes of `tensor`'s elements in its own datatype.
    static func bytes(_ tensor: Tensor) -> Data {
        var data = Data()
        let width = tensor.elementType.byteCount
        switch tensor.elementType {
        case .float32:
            for value in tensor.values {
                let bits = value.bitPattern
                for byte in 0 ..< 4 { data.append(UInt8((bits >> (8 * byte)) & 0xFF)) }
            }
        default:
            for value in tensor.integers {
                let bits = UInt64(bitPattern: value)
                for byte in 0 ..< width { data.append(UInt8((bits >> (8 * UInt64(byte))) & 0xFF)) }
            }
        }
        return data
    }

    /// The elements of `type` in little-endian `data`, each as a float (a truth value 1 or 0).
    static func values(_ data: Data, as type: ElementType) -> [Float] {
        let bytes = [UInt8](data)
        let width = type.byteCount
        return stride(from: 0, to: bytes.count, by: width).map { start in
            var bits: UInt64 = 0
            for byte in 0 ..< width { bits |= UInt64(bytes[start + byte]) << (8 * UInt64(byte)) }
            switch type {
            case .float32: return Float(bitPattern: UInt32(bits))
            case .int8: return Float(Int8(truncatingIfNeeded: bits))
            case .int16: return Float(Int16(truncatingIfNeeded: bits))
            case .int32: return Float(Int32(truncatingIfNeeded: bits))
            case .int64: return Float(Int64(bitPattern: bits))
            default: return Float(bits)
            }
        }
    }

    /// `tensor`'s elements as floats (a truth value 1 or 0; integers up to 2^24 are exact): what
    /// every form is compared in.
    static func values(_ tensor: Tensor) -> [Float] {
        tensor.elementType == .float32 ? tensor.values : tensor.integers.map(Float.init)
    }

    /// JSON data as floats (a truth value 1 or 0).
    static func values(_ data: TensorData?) -> [Float]? {
        switch data?.elements {
        case .numbers(let values): values.map(Float.init)
        case .floats(let values): values
        case .integers(let values): values.map(Float.init)
        case .truths(let values): values.map { $0 ? 1 : 0 }
        case nil: nil
        }
    }

    /// The gRPC input for `tensor` as `name`, its values in its datatype's `contents` field.
    static func input(_ name: String, _ tensor: Tensor) -> Inference_ModelInferRequest.InferInputTensor {
        .with {
            $0.name = name
            $0.datatype = TensorDatatype(tensor.elementType).rawValue
            $0.shape = ([tensor.batch] + tensor.shape.dimensions).map(Int64.init)
            let integers = tensor.integers
            switch tensor.elementType {
            case .float32: $0.contents.fp32Contents = tensor.values
            case .bool: $0.contents.boolContents = tensor.truths
            case .int8, .int16, .int32: $0.contents.intContents = integers.map { Int32($0) }
            case .int64: $0.contents.int64Contents = integers
            case .uint8, .uint16, .uint32: $0.contents.uintContents = integers.map { UInt32($0) }
            case .uint64: $0.contents.uint64Contents = integers.map { UInt64($0) }
            case .bfloat16: break
            }
        }
    }

    /// The values of a gRPC output's typed `contents`, as floats, from the field its datatype names.
    static func values(_ output: Inference_ModelInferResponse.InferOutputTensor) -> [Float] {
        let contents = output.contents
        return switch output.datatype {
        case "FP32": contents.fp32Contents
        case "BOOL": contents.boolContents.map { $0 ? 1 : 0 }
        // Closures, not `Float.init`: given a UInt32 that would pick `init(bitPattern:)`.
        case "INT8", "INT16", "INT32": contents.intContents.map { Float($0) }
        case "INT64": contents.int64Contents.map { Float($0) }
        case "UINT8", "UINT16", "UINT32": contents.uintContents.map { Float($0) }
        case "UINT64": contents.uint64Contents.map { Float($0) }
        default: []
        }
    }
}
